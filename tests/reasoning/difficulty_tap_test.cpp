// The difficulty tap pools exactly the positions of its window, once each.
#include <gtest/gtest.h>

#include "reasoning/difficulty_features.h"
#include "util/error.h"

namespace difficulty_tap_test {

using namespace kvscope;
using namespace kvscope::reasoning;

namespace {
HParams hp() {
  HParams h;
  h.n_layer = 3;
  h.n_head_kv = 1;
  h.head_dim = 2;
  h.n_embd = 4;
  return h;
}
// K row of position p: (p, 1); V row: (2p, -1).
void feed(DifficultyTap& t, int layer, int pos0, int n) {
  std::vector<float> k, v;
  for (int p = pos0; p < pos0 + n; ++p) {
    k.insert(k.end(), {float(p), 1.f});
    v.insert(v.end(), {float(2 * p), -1.f});
  }
  t.on_kv(layer, pos0, n, k.data(), v.data());
}
}  // namespace

TEST(DifficultyTap, PoolsTheWindowAndTheResponseOnce) {
  DifficultyTap t(hp(), {0, 2}, false, /*end=*/2, /*resume=*/4);  // positions 0,1 then 4..
  EXPECT_EQ(t.dim(), 2 * 2 * 2);
  for (int l = 0; l < 3; ++l) feed(t, l, 0, 5);  // 0..4: 0,1,4 count
  for (int l = 0; l < 3; ++l) feed(t, l, 3, 3);  // 3..5 again: only 5 is new
  EXPECT_EQ(t.n_tokens(), 4);
  const auto f = t.features();
  const float mk = (0 + 1 + 4 + 5) / 4.0f;
  const std::vector<float> layer = {mk, 1, 2 * mk, -1};
  EXPECT_EQ(std::vector<float>(f.begin(), f.begin() + 4), layer);
  EXPECT_EQ(std::vector<float>(f.begin() + 4, f.end()), layer);
  EXPECT_EQ(t.features_of({2}), layer);
  EXPECT_THROW(t.features_of({1}), InputError);
}

TEST(DifficultyTap, StateRestoresAfterADetour) {
  DifficultyTap t(hp(), {}, false);
  for (int l = 0; l < 3; ++l) feed(t, l, 0, 3);
  const auto st = t.state();
  const auto before = t.features();
  for (int l = 0; l < 3; ++l) feed(t, l, 3, 2);  // a probe
  EXPECT_NE(t.features(), before);
  t.restore(st);
  EXPECT_EQ(t.features(), before);
  for (int l = 0; l < 3; ++l) feed(t, l, 3, 1);  // the same positions count again after the restore
  EXPECT_EQ(t.n_tokens(), 4);
  t.reset();
  EXPECT_EQ(t.n_tokens(), 0);
  EXPECT_EQ(t.features(), std::vector<float>(t.dim(), 0.0f));
}

TEST(DifficultyTap, BadLayersAreRefused) {
  EXPECT_THROW(DifficultyTap(hp(), {3}, false), InputError);
  EXPECT_THROW(DifficultyTap(hp(), {1, 1}, false), InputError);
  FeatureSpec s;
  s.prompt_fraction = 0.2;
  EXPECT_EQ(s.window_end(10), 2);
  EXPECT_EQ(s.window_end(3), 1);
  s.prompt_fraction = 1.0;
  EXPECT_EQ(s.window_end(10), 10);
}

}  // namespace difficulty_tap_test
