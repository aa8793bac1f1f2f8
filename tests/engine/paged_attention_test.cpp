#include "engine/paged_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/kernels.h"
#include "kvcache/block_table.h"

namespace paged_attention_test {

using namespace kvscope;
using kernels::DType;

namespace {

struct Fixture {
  AttentionShape s{8, 2, 32};
  int n_layer = 2, block_size = 16;
  std::mt19937 rng{42};
  std::uniform_real_distribution<float> u{-1.0f, 1.0f};
  std::vector<float> rand_vec(size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = u(rng);
    return v;
  }
};

float round_f16(float x) { return kernels::fp16_to_fp32(kernels::fp32_to_fp16(x)); }

// Fills one sequence of n_pos positions with random K/V in both a contiguous cache and a paged one
// (blocks taken from a shuffled pool, so ids are not in position order).
void check(DType type, const std::vector<int>& lens, const std::vector<int>& n_new, const AttentionShape* shape = nullptr) {
  Fixture f;
  if (shape) f.s = *shape;
  const int kvd = f.s.n_head_kv * f.s.head_dim, qd = f.s.n_head * f.s.head_dim;
  PagedKVConfig c;
  c.n_layer = f.n_layer;
  c.kv_dim = kvd;
  c.block_size = f.block_size;
  c.n_blocks = 64;
  c.layer_types.assign(f.n_layer, type);
  PagedKVCache kv(c);
  {  // scramble the free list so tables get non-contiguous ids
    std::vector<BlockId> taken;
    for (int i = 0; i < 64; ++i) taken.push_back(*kv.pool().allocate());
    std::shuffle(taken.begin(), taken.end(), f.rng);
    for (BlockId b : taken) kv.pool().release(b);
  }
  kernels::ThreadPool pool(3);
  std::vector<BlockTable> tables(lens.size());
  std::vector<std::unique_ptr<KVCache>> refs;
  std::vector<SeqAttention> seqs;
  int rows = 0;
  for (size_t i = 0; i < lens.size(); ++i) {
    refs.push_back(make_contiguous_kv_cache(f.n_layer, lens[i], kvd));
    ASSERT_TRUE(tables[i].prepare(kv, 0, lens[i]));
    for (int l = 0; l < f.n_layer; ++l)
      for (int p = 0; p < lens[i]; ++p) {
        auto k = f.rand_vec(kvd), v = f.rand_vec(kvd);
        kv.write(l, tables[i].block_of(p, f.block_size), p % f.block_size, k.data(), v.data());
        if (type == DType::F16)
          for (int j = 0; j < kvd; ++j) k[j] = round_f16(k[j]), v[j] = round_f16(v[j]);
        refs[i]->write(l, p, k.data(), v.data());
      }
    seqs.push_back({tables[i].blocks().data(), tables[i].n_blocks(), lens[i] - n_new[i], n_new[i], rows});
    rows += n_new[i];
  }
  auto q = f.rand_vec(static_cast<size_t>(rows) * qd);
  std::vector<float> out(q.size()), out_ref(q.size()), expect(q.size()), scratch;
  for (int l = 0; l < f.n_layer; ++l) {
    paged_attention(kv, l, f.s, q.data(), seqs, out.data(), scratch, pool);
    paged_attention_ref(kv, l, f.s, q.data(), seqs, out_ref.data());
    // The per-position F32 path (every ISA but AVX-512) and the contiguous attention, on one ISA.
    std::vector<float> out_pos(q.size()), expect_pos(q.size());
    {
      const kernels::Isa saved = kernels::active_isa();
      kernels::set_active_isa(kernels::Isa::AVX2);
      paged_attention(kv, l, f.s, q.data(), seqs, out_pos.data(), scratch, pool);
      for (size_t i = 0; i < lens.size(); ++i) {
        std::vector<float> sc(static_cast<size_t>(pool.size()) * lens[i]);
        attention(*refs[i], l, f.s, q.data() + static_cast<size_t>(seqs[i].row0) * qd, seqs[i].n_tokens, seqs[i].pos0,
                  expect_pos.data() + static_cast<size_t>(seqs[i].row0) * qd, sc.data(), pool);
      }
      kernels::set_active_isa(saved);
    }
    for (size_t i = 0; i < lens.size(); ++i) {
      std::vector<float> sc(static_cast<size_t>(pool.size()) * lens[i]);
      attention(*refs[i], l, f.s, q.data() + static_cast<size_t>(seqs[i].row0) * qd, seqs[i].n_tokens, seqs[i].pos0,
                expect.data() + static_cast<size_t>(seqs[i].row0) * qd, sc.data(), pool);
    }
    for (size_t i = 0; i < q.size(); ++i) {
      // The fast path sums in another order than the contiguous reference (block-wise F32 loops on
      // AVX-512, fused F16 loops), so it agrees to rounding; the scalar paged reference (below)
      // keeps the contiguous attention's order.
      ASSERT_NEAR(out[i], expect[i], 1e-5f * (1 + std::fabs(expect[i]))) << "layer " << l << " element " << i;
      // Per position, F32 uses the contiguous attention's kernels in its order: exact.
      // (A window that starts mid-block softmaxes over masked zeros too, so there only to rounding.)
      if (type == DType::F32 && f.s.window == 0) {
        ASSERT_EQ(out_pos[i], expect_pos[i]) << "per-position layer " << l << " element " << i;
      }
      ASSERT_NEAR(out_ref[i], expect[i], 1e-5f) << "layer " << l << " element " << i;
      ASSERT_NEAR(out_pos[i], expect_pos[i], 1e-5f * (1 + std::fabs(expect_pos[i]))) << "layer " << l << " element " << i;
    }
  }
  for (auto& t : tables) t.release_all(kv.pool());
  EXPECT_EQ(kv.pool().n_free(), 64);
}

}  // namespace

TEST(PagedAttention, DecodeEqualsContiguousReference) { check(DType::F32, {1, 17, 100}, {1, 1, 1}); }
TEST(PagedAttention, PrefillChunksEqualContiguousReference) { check(DType::F32, {33, 48, 5}, {33, 20, 5}); }
TEST(PagedAttention, F16StorageEqualsReferenceOnRoundedValues) { check(DType::F16, {40, 16}, {3, 16}); }

// Gemma's attention: a sliding window that starts inside a block, soft-capped scores, a query scale.
TEST(PagedAttention, SlidingWindowSoftcapEqualsContiguousReference) {
  AttentionShape s{8, 2, 32};
  s.window = 21;
  s.softcap = 5.0f;
  s.scale = 0.3f;
  check(DType::F32, {1, 17, 100}, {1, 1, 1}, &s);
  check(DType::F32, {70, 45}, {40, 45}, &s);
  check(DType::F16, {40, 64}, {3, 30}, &s);
}

// Positions before the window do not reach the output: scrambling them changes nothing.
TEST(PagedAttention, SlidingWindowIgnoresOlderPositions) {
  AttentionShape s{4, 2, 16};
  s.window = 10;
  const int kvd = s.n_head_kv * s.head_dim, qd = s.n_head * s.head_dim, n = 50;
  PagedKVConfig c;
  c.n_layer = 1;
  c.kv_dim = kvd;
  c.block_size = 16;
  c.n_blocks = 8;
  c.layer_types.assign(1, DType::F32);
  PagedKVCache kv(c);
  BlockTable t;
  ASSERT_TRUE(t.prepare(kv, 0, n));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  auto fill = [&](int p) {
    std::vector<float> k(kvd), v(kvd);
    for (auto& x : k) x = u(rng);
    for (auto& x : v) x = u(rng);
    kv.write(0, t.block_of(p, 16), p % 16, k.data(), v.data());
  };
  for (int p = 0; p < n; ++p) fill(p);
  std::vector<float> q(qd);
  for (auto& x : q) x = u(rng);
  std::vector<SeqAttention> seqs{{t.blocks().data(), t.n_blocks(), n - 1, 1, 0}};
  kernels::ThreadPool pool(2);
  std::vector<float> a(qd), b(qd), full(qd), scratch;
  paged_attention(kv, 0, s, q.data(), seqs, a.data(), scratch, pool);
  for (int p = 0; p < n - s.window; ++p) fill(p);  // outside [n - 10, n - 1]
  paged_attention(kv, 0, s, q.data(), seqs, b.data(), scratch, pool);
  EXPECT_EQ(a, b);
  s.window = 0;
  paged_attention(kv, 0, s, q.data(), seqs, full.data(), scratch, pool);
  EXPECT_NE(a, full);
  t.release_all(kv.pool());
}

}  // namespace paged_attention_test
