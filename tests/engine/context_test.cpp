#include "context_generate.h"
#include "engine/context.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/random_model.h"
#include "fixtures.h"
#include "test_util.h"
#include "util/error.h"

namespace context_test {

using namespace kvscope;

namespace {

std::string tiny_model(kernels::DType t = kernels::DType::F32, const std::string& arch = "llama") {
  RandomModelSpec s = fixtures::tiny_spec();
  s.arch = arch;
  s.type = t;
  return fixtures::model_file(s, "ctx_" + arch + "_" + kernels::dtype_name(t));
}

float max_abs_diff(const float* a, const float* b, size_t n) {
  float m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

}  // namespace

TEST(Context, ChunkedPrefillEqualsOneShotAndTokenByToken) {
  auto model = Model::load(tiny_model());
  std::vector<int32_t> toks;
  for (int i = 0; i < 37; ++i) toks.push_back((i * 13 + 5) % 400);
  Context one(*model, {128, 2, 512});
  std::vector<float> a = one.eval(toks);
  Context chunked(*model, {128, 2, 8});
  std::vector<float> b = chunked.eval(toks);
  Context step(*model, {128, 1, 1});
  std::vector<float> c;
  for (auto t : toks) c = step.eval({t});
  EXPECT_LT(max_abs_diff(a.data(), b.data(), a.size()), 1e-3f);
  EXPECT_LT(max_abs_diff(a.data(), c.data(), a.size()), 1e-3f);
  EXPECT_EQ(argmax(a.data(), 400), argmax(c.data(), 400));
}

TEST(Context, AllLogitsRowsMatchIncrementalEvaluation) {
  auto model = Model::load(tiny_model(kernels::DType::Q8_0));
  std::vector<int32_t> toks = {1, 50, 60, 70, 80};
  Context a(*model, {64, 2, 512});
  std::vector<float> all = a.eval(toks, true);
  ASSERT_EQ(all.size(), toks.size() * 400);
  Context b(*model, {64, 2, 512});
  for (size_t i = 0; i < toks.size(); ++i) {
    const auto& l = b.eval({toks[i]});
    EXPECT_EQ(argmax(l.data(), 400), argmax(all.data() + i * 400, 400));
  }
}

TEST(Context, TruncateThenContinueEqualsRecompute) {
  auto model = Model::load(tiny_model(kernels::DType::F32, "qwen2"));
  Context ctx(*model, {64, 2, 512});
  ctx.eval({1, 10, 20, 30, 40});
  ctx.truncate(3);
  std::vector<float> a = ctx.eval({99, 98});
  Context fresh(*model, {64, 2, 512});
  std::vector<float> b = fresh.eval({1, 10, 20, 99, 98});
  EXPECT_LT(max_abs_diff(a.data(), b.data(), a.size()), 1e-3f);
}

TEST(Context, OverlongPromptAndBadTokensAreClearErrors) {
  auto model = Model::load(tiny_model());
  Context ctx(*model, {16, 1, 512});
  std::vector<int32_t> big(17, 5);
  try {
    ctx.eval(big);
    FAIL();
  } catch (const LimitError& e) {
    EXPECT_NE(std::string(e.what()).find("exceed the context of 16"), std::string::npos);
  }
  EXPECT_THROW(ctx.eval({400}), InputError);
  EXPECT_THROW(ctx.eval({-1}), InputError);
  EXPECT_THROW(ctx.eval({}), InputError);
  EXPECT_EQ(ctx.n_past(), 0);  // nothing was consumed by the failed calls
}

TEST(Generate, SeededSamplingIsReproducibleAndGreedyIsDeterministic) {
  auto model = Model::load(tiny_model());
  Context ctx(*model, {128, 2, 512});
  SamplingParams sp;
  sp.temperature = 0.9f;
  sp.seed = 5;
  auto r1 = generate(ctx, {1, 40, 41}, sp, 20);
  auto r2 = generate(ctx, {1, 40, 41}, sp, 20);
  EXPECT_EQ(r1.tokens, r2.tokens);
  SamplingParams g;
  g.temperature = 0;
  auto g1 = generate(ctx, {1, 40, 41}, g, 20);
  auto g2 = generate(ctx, {1, 40, 41}, g, 20);
  EXPECT_EQ(g1.tokens, g2.tokens);
  EXPECT_TRUE(tok::is_valid_utf8(g1.text));
  EXPECT_TRUE(g1.stop_reason == StopReason::Eos || g1.tokens.size() == 20u) << stop_reason_name(g1.stop_reason);
}

TEST(Context, LargeHeadDimensionRunsWithoutOverflow) {
  // A GGUF may declare any even key_length; rope must not assume a small head.
  RandomModelSpec s;
  s.dim = 64;
  s.layers = 1;
  s.heads = 1;
  s.kv_heads = 1;
  s.head_dim = 1024;  // the largest gen-model writes; rope handles 512 angle pairs
  s.ffn = 64;
  s.vocab = 320;
  s.ctx = 16;
  auto p = (test::temp_dir() / "big_head.gguf").string();
  write_random_model(s, p);
  auto model = Model::load(p);
  Context ctx(*model, {16, 1, 512});
  const auto& l = ctx.eval({1, 5, 6});
  for (float x : l) ASSERT_TRUE(std::isfinite(x));
}

}  // namespace context_test
