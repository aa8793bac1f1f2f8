// The AVX-512 block-wise attention loops against their scalar reference on random shapes: head
// sizes with and without a 16-lane tail, row counts with and without a 4-row tail, GQA groups.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/attention_block.h"
#include "kernels/kernels.h"

namespace attention_block_test {

using namespace kvscope;

TEST(AttentionBlock, Avx512MatchesReference) {
  if (kernels::detected_isa() != kernels::Isa::AVX512) GTEST_SKIP() << "no AVX-512";
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int cases = 0;
  for (int hd : {8, 24, 32, 64, 72, 128})
    for (int n : {1, 3, 4, 7, 16})
      for (int group : {1, 2, 3}) {
        const int stride = hd * 2 + 5, ld = 19;
        std::vector<float> kv(static_cast<size_t>(n) * stride), q(static_cast<size_t>(group) * hd);
        std::vector<float> p(static_cast<size_t>(group) * ld), out0(static_cast<size_t>(group) * hd);
        for (auto* v : {&kv, &q, &p, &out0})
          for (float& x : *v) x = u(rng);
        std::vector<float> s_ref(p.size(), 0.0f), s_simd(p.size(), 0.0f);
        attn::ref::block_scores(kv.data(), stride, n, q.data(), hd, group, 0.125f, s_ref.data(), ld);
        attn::avx512::block_scores(kv.data(), stride, n, q.data(), hd, group, 0.125f, s_simd.data(), ld);
        for (size_t i = 0; i < p.size(); ++i)
          ASSERT_NEAR(s_simd[i], s_ref[i], 1e-5f * hd) << "scores hd=" << hd << " n=" << n << " group=" << group << " at " << i;
        std::vector<float> o_ref = out0, o_simd = out0;
        attn::ref::block_weighted_sum(kv.data(), stride, n, p.data(), ld, hd, group, o_ref.data());
        attn::avx512::block_weighted_sum(kv.data(), stride, n, p.data(), ld, hd, group, o_simd.data());
        for (size_t i = 0; i < o_ref.size(); ++i)
          ASSERT_NEAR(o_simd[i], o_ref[i], 1e-5f * (n + 1)) << "sum hd=" << hd << " n=" << n << " group=" << group << " at " << i;
        ++cases;
      }
  EXPECT_EQ(cases, 6 * 5 * 3);
}

}  // namespace attention_block_test
