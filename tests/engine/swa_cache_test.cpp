// Sliding-window layers in their own cache: blocks are released once no later token can attend to
// them, so a gemma model's KV memory for those layers stays at the window while the logits equal a
// context that keeps every position.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/context.h"
#include "engine/engine.h"
#include "model/random_model.h"
#include "test_util.h"
#include "util/error.h"

namespace swa_cache_test {

using namespace kvscope;

namespace {

std::unique_ptr<Model> gemma(const std::string& arch, int layers, int window) {
  RandomModelSpec s;
  s.arch = arch;
  s.dim = 64;
  s.layers = layers;
  s.heads = 2;
  s.kv_heads = 1;
  s.ffn = 128;
  s.vocab = 320;
  s.ctx = 512;
  s.sliding_window = window;
  auto p = (test::temp_dir() / ("swa_" + arch + std::to_string(layers) + "_" + std::to_string(window) + ".gguf")).string();
  write_random_model(s, p);
  return Model::load(p);
}

std::vector<int32_t> tokens(int n) {
  std::vector<int32_t> t;
  for (int i = 0; i < n; ++i) t.push_back(3 + (i * 53) % 300);
  return t;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double w = 0;
  for (size_t i = 0; i < a.size(); ++i) w = std::max(w, std::fabs(static_cast<double>(a[i]) - b[i]));
  return w;
}

}  // namespace

TEST(SlidingWindowCache, ReleasesOutOfWindowBlocksWithTheSameLogits) {
  for (const auto& [arch, layers] : {std::pair<std::string, int>{"gemma2", 4}, {"gemma3", 6}}) {
    const int window = 32, n_ctx = 4 * window;
    auto m = gemma(arch, layers, window);
    ContextParams p{n_ctx, 2, 16};
    Context rel(*m, p);
    p.swa_full = true;
    Context full(*m, p);
    ASSERT_NE(rel.swa_kv(), nullptr) << arch;
    EXPECT_EQ(full.swa_kv(), nullptr);
    const auto t = tokens(n_ctx);
    // Prefill in chunks of 16, then single-token steps: both paths cross released blocks.
    std::vector<int32_t> head(t.begin(), t.begin() + 80);
    EXPECT_LT(max_diff(rel.eval(head, true), full.eval(head, true)), 1e-5) << arch;
    for (int i = 80; i < n_ctx; ++i) ASSERT_LT(max_diff(rel.eval({t[i]}), full.eval({t[i]})), 1e-5) << arch << " " << i;
    // The sliding layers hold the window plus one batch, whatever the context.
    const PagedKVCache& swa = *rel.swa_kv();
    EXPECT_LE(swa.pool().n_blocks() - swa.pool().n_free(), (window + 16) / 16 + 1);
    std::printf("[swa] %s %d layers, window %d, context %d: KV %zu bytes with release, %zu without (%.1f%%)\n",
                arch.c_str(), layers, window, n_ctx, rel.kv_bytes(), full.kv_bytes(),
                100.0 * rel.kv_bytes() / full.kv_bytes());
    EXPECT_LT(rel.kv_bytes(), full.kv_bytes());
  }
}

TEST(SlidingWindowCache, GoingBackBeforeTheReleasedWindowIsRefused) {
  auto m = gemma("gemma2", 2, 16);
  Context rel(*m, {128, 1, 16});
  Context full(*m, {128, 1, 16, {}, true});
  const auto t = tokens(100);
  rel.eval(t);
  full.eval(t);
  // Within the window: allowed, and continuing gives the same logits as the full cache.
  rel.truncate(95);
  full.truncate(95);
  EXPECT_LT(max_diff(rel.eval({7}), full.eval({7})), 1e-5);
  try {
    rel.truncate(40);
    FAIL() << "expected LimitError";
  } catch (const LimitError& e) {
    EXPECT_NE(std::string(e.what()).find("--swa-full"), std::string::npos) << e.what();
  }
  rel.truncate(0);  // starting over is always possible
  full.truncate(0);
  EXPECT_LT(max_diff(rel.eval(t), full.eval(t)), 1e-5);
}

namespace {

// Greedy tokens of one request through an engine.
Completion engine_run(Engine& e, const std::vector<int32_t>& prompt, int n, const std::string& session = "") {
  Request r;
  r.prompt = prompt;
  r.max_tokens = n;
  r.sampling.temperature = 0;
  r.ignore_eos = true;
  r.session_id = session;
  return e.wait(e.submit(std::move(r)));
}

EngineParams engine_params(bool swa_full) {
  EngineParams p;
  p.n_threads = 2;
  p.n_ctx = 256;
  p.n_blocks = 64;
  p.max_batch_tokens = 32;
  p.max_seqs = 4;
  p.swa_full = swa_full;
  return p;
}

}  // namespace

// The server's engine keeps the sliding layers in their own pool too: the same greedy tokens as the
// full cache, a few window blocks per sequence, prefix-cache hits that bring their window back, and
// sessions that continue past released blocks.
TEST(SlidingWindowEngine, ReleasesWindowBlocksWithTheSameTokens) {
  const int window = 32;
  auto m = gemma("gemma2", 4, window);
  Engine rel(*m, engine_params(false)), full(*m, engine_params(true));
  ASSERT_NE(rel.swa_kv(), nullptr);
  ASSERT_EQ(full.swa_kv(), nullptr);
  const auto prompt = tokens(150);
  const Completion a = engine_run(rel, prompt, 40), b = engine_run(full, prompt, 40);
  EXPECT_EQ(a.tokens, b.tokens);
  // While a long request runs, the sliding pool holds its window plus one step's chunk only.
  Request r;
  r.prompt = tokens(200);
  r.max_tokens = 30;
  r.sampling.temperature = 0;
  r.ignore_eos = true;
  int peak = 0;
  r.on_token = [&](const TokenEvent&) { peak = std::max(peak, rel.stats().swa_blocks.used); };
  rel.wait(rel.submit(std::move(r)));
  EXPECT_GT(peak, 0);
  EXPECT_LE(peak, (window + 32) / 16 + 2);
  EXPECT_GT(rel.stats().blocks.total, 0);

  // The same prompt again: its global blocks and its last window come from the prefix cache.
  const Completion again = engine_run(rel, prompt, 40);
  EXPECT_GT(again.n_cached, window);
  EXPECT_EQ(again.tokens, a.tokens);

  // A session continued over several turns equals one full-cache engine given the whole history.
  std::vector<int32_t> hist = tokens(90);
  Completion t1 = engine_run(rel, hist, 20, "s"), f1 = engine_run(full, hist, 20);
  ASSERT_EQ(t1.tokens, f1.tokens);
  hist.insert(hist.end(), t1.tokens.begin(), t1.tokens.end());
  hist.push_back(11);
  Completion t2 = engine_run(rel, hist, 20, "s"), f2 = engine_run(full, hist, 20);
  EXPECT_GE(t2.n_cached, 100);  // the pinned history, not a recomputation
  EXPECT_EQ(t2.tokens, f2.tokens);
  // Going back before the released window (a prompt that shares only the first tokens) recomputes.
  std::vector<int32_t> other(hist.begin(), hist.begin() + 20);
  other.push_back(5);
  EXPECT_EQ(engine_run(rel, other, 10, "s").tokens, engine_run(full, other, 10).tokens);
  // Session files hold one pool: refused with the flag that makes them possible.
  try {
    rel.save_session("s", (test::temp_dir() / "swa.kvsession").string());
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--swa-full"), std::string::npos) << e.what();
  }
}

// Session files on the newer families: a conversation saved by one engine and restored in another
// continues with the tokens of an uninterrupted one (gemma2 with --swa-full, and a qwen2moe).
TEST(SessionFiles, NewFamiliesRoundTrip) {
  RandomModelSpec moe;
  moe.arch = "qwen2moe";
  moe.dim = 64;
  moe.layers = 2;
  moe.heads = 2;
  moe.kv_heads = 1;
  moe.ffn = 64;
  moe.vocab = 320;
  moe.ctx = 256;
  const auto moe_path = (test::temp_dir() / "session_qwen2moe.gguf").string();
  write_random_model(moe, moe_path);
  std::vector<std::pair<std::string, std::unique_ptr<Model>>> models;
  models.emplace_back("gemma2", gemma("gemma2", 4, 32));
  models.emplace_back("qwen2moe", Model::load(moe_path));
  for (auto& [name, m] : models) {
    const std::string file = (test::temp_dir() / ("session_" + name + ".kvsession")).string();
    const auto first = tokens(70);
    std::vector<int32_t> history = first;
    {
      Engine e(*m, engine_params(true));
      const Completion c = engine_run(e, first, 12, "chat");
      history.insert(history.end(), c.tokens.begin(), c.tokens.end());
      e.save_session("chat", file);
    }
    history.push_back(9);
    Engine restored(*m, engine_params(true)), fresh(*m, engine_params(true));
    restored.restore_session("chat", file);
    const Completion a = engine_run(restored, history, 16, "chat"), b = engine_run(fresh, history, 16);
    EXPECT_EQ(a.n_cached, static_cast<int>(history.size()) - 2) << name;  // all but the two K/V-less tokens
    EXPECT_EQ(a.tokens, b.tokens) << name;
  }
}

}  // namespace swa_cache_test
