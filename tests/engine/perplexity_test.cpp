// kvscope perplexity against an independent computation: the same chunks evaluated token by token
// (the decode path instead of one batched pass), scored in double precision by separate code, on
// a random-weight model and on a real trained one; plus the convention itself (BOS per chunk, only
// the second half scored, n_ctx/2 - 1 ... tokens per chunk) and the CLI's JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/perplexity.h"
#include "model/random_model.h"
#include "test_util.h"
#include "util/error.h"

namespace perplexity_test {

using namespace kvscope;

namespace {

std::string text_of_words(int n) {
  static const char* words[] = {"the", "cat", "sat", "on", "a", "mat", "and", "then", "it", "ran", "far", "away",
                                "into", "green", "hills", "where", "birds", "sang", "all", "day"};
  std::string s;
  uint32_t x = 12345;
  for (int i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    s += words[(x >> 16) % 20];
    s += (i % 11 == 10) ? ". " : " ";
  }
  return s;
}

// Mean negative log-likelihood by llama-perplexity's convention, computed one token at a time.
double reference_nll(const Model& m, const std::vector<int32_t>& toks, int n_ctx, int chunks, int64_t* n_scored) {
  const auto& v = m.tokenizer().vocab();
  double nll = 0;
  *n_scored = 0;
  for (int c = 0; c < chunks; ++c) {
    Context ctx(m, {n_ctx, 2, 1, KVCacheTypes(KVType::F32, KVType::F32)});
    std::vector<int32_t> chunk(toks.begin() + c * n_ctx, toks.begin() + (c + 1) * n_ctx);
    if (v.add_bos) chunk[0] = v.bos;
    for (int j = 0; j < n_ctx - 1; ++j) {
      const std::vector<float> l = ctx.eval({chunk[j]});
      if (j < n_ctx / 2) continue;
      double mx = -INFINITY, s = 0;
      for (float x : l) mx = std::max<double>(mx, x);
      for (float x : l) s += std::exp(x - mx);
      nll += -(l[chunk[j + 1]] - mx - std::log(s));
      ++*n_scored;
    }
  }
  return nll / static_cast<double>(*n_scored);
}

void check_model(const std::string& path, const std::string& text, int n_ctx, double rel_tol) {
  auto m = Model::load(path);
  auto toks = m->tokenizer().encode(text, true, false);
  ASSERT_GE(static_cast<int>(toks.size()), 3 * n_ctx);
  std::vector<int> seen;
  auto r = perplexity(*m, toks, {n_ctx, 2, 64, KVCacheTypes(KVType::F32, KVType::F32)}, 3,
                      [&](const PerplexityChunk& c) { seen.push_back(c.index); });
  ASSERT_EQ(r.chunks.size(), 3u);
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(r.n_scored, 3 * (n_ctx - 1 - n_ctx / 2));
  int64_t n_ref = 0;
  const double ref = reference_nll(*m, toks, n_ctx, 3, &n_ref);
  EXPECT_EQ(n_ref, r.n_scored);
  EXPECT_NEAR(r.nll_mean, ref, rel_tol * ref) << path;
  EXPECT_NEAR(r.ppl, std::exp(ref), rel_tol * 2 * std::exp(ref));
  EXPECT_DOUBLE_EQ(r.chunks.back().running_ppl, r.ppl);
  EXPECT_GT(r.ppl_err, 0.0);
  EXPECT_LT(r.ppl_err, r.ppl);
  std::printf("[perplexity] %s: ppl %.4f +/- %.4f, token-by-token reference %.4f\n", path.c_str(), r.ppl, r.ppl_err,
              std::exp(ref));
}

}  // namespace

TEST(Perplexity, MatchesTokenByTokenReferenceRandomModel) {
  RandomModelSpec s;
  s.dim = 64;
  s.layers = 2;
  s.heads = 4;
  s.kv_heads = 2;
  s.ffn = 128;
  s.vocab = 400;
  s.ctx = 128;
  auto path = (test::temp_dir() / "ppl_rand.gguf").string();
  write_random_model(s, path);
  check_model(path, text_of_words(600), 64, 1e-4);
}

TEST(Perplexity, MatchesTokenByTokenReferenceTrainedModel) {
  // stories260K is a trained TinyStories Llama: its perplexity on story-like text is low.
  check_model(test::shared_model("stories260K.gguf"), text_of_words(400), 128, 1e-4);
}

TEST(Perplexity, RefusesShortTextAndCliPrintsJson) {
  RandomModelSpec s;
  s.dim = 64;
  s.layers = 1;
  s.heads = 2;
  s.kv_heads = 1;
  s.ffn = 64;
  s.vocab = 320;
  s.ctx = 64;
  auto path = (test::temp_dir() / "ppl_cli.gguf").string();
  write_random_model(s, path);
  auto m = Model::load(path);
  EXPECT_THROW(perplexity(*m, std::vector<int32_t>(100, 5), {64, 1, 64, {}}, -1), InputError);

  auto txt = (test::temp_dir() / "ppl.txt").string();
  std::ofstream(txt) << text_of_words(300);
  auto r = test::run_cli("perplexity -m " + path + " -f " + txt + " -c 32 --chunks 4 -t 2 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["n_ctx"], 32);
  EXPECT_EQ(j["n_chunks"], 4);
  EXPECT_EQ(j["n_scored"], 4 * (32 - 1 - 16));
  EXPECT_NEAR(j["ppl"].get<double>(), std::exp(j["nll_mean"].get<double>()), 1e-9 * j["ppl"].get<double>());
  EXPECT_EQ(j["chunks"].size(), 4u);
  auto plain = test::run_cli("perplexity -m " + path + " -f " + txt + " -c 32 --chunks 2 -t 2");
  ASSERT_EQ(plain.status, 0) << plain.out;
  EXPECT_NE(plain.out.find("[1]"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("Final estimate: PPL = "), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("seconds per pass"), std::string::npos) << plain.out;
  auto bad = test::run_cli("perplexity -m " + path + " -f " + txt + " -c 4096");
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_NE(bad.out.find("error: perplexity: the text has"), std::string::npos) << bad.out;
}

}  // namespace perplexity_test
