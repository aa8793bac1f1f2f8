// Sliding-window layers in their own cache: blocks are released once no later token can attend to
// them, so a gemma model's KV memory for those layers stays at the window while the logits equal a
// context that keeps every position.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/context.h"
#include "model/random_model.h"
#include "test_util.h"
#include "util/error.h"

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
