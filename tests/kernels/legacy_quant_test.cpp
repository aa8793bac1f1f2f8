// Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS: quantizer round trips, the activation formats, and matmul on
// every ISA (odd row counts, odd block counts, 1-3 threads, misaligned weights) against ref::matmul.
//
// Tolerance: both sides use identical activations (converted by bit-identical code on every ISA)
// and exact integer block dots; they differ in how the per-block float terms are summed. With
// T float terms, |y - y_ref| <= 2 (T + 2) u S, S = sum_k |w_k| (|x_k| + d_x) plus the min terms
// sum_b |m_b s_b| (u = 2^-24). SIMD kernels keep up to 8 (AVX2) or 16 (AVX-512) lane partials per
// block, so T = K/4 + K/32 + 4 covers them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/internal.h"
#include "kernels/isa_fixture.h"
#include "kernels/kernels.h"

namespace legacy_quant_test {

using namespace kvscope::kernels;

namespace {

const DType kTypes[] = {DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL, DType::IQ4_XS};

std::vector<float> randn(size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> g(0.0f, scale);
  std::vector<float> x(n);
  for (auto& v : x) v = g(rng);
  return x;
}

// Every ISA against ref::matmul; then, where this CPU has packed kernels for t (AVX-512 VNNI), the
// row-interleaved copy made by pack_weight (laid out over the same pool) against the same bound,
// with a guard past the output that the zero-padded rows of the last 16-row group must not touch.
// Returns whether the packed layout was checked.
bool check_matmul(DType t, int64_t M, int64_t N, int64_t K, int threads, size_t offset, std::mt19937& rng) {
  const size_t rb = row_bytes(t, K);
  std::vector<uint8_t> wbuf(offset + rb * static_cast<size_t>(N) + 1);
  for (int64_t n = 0; n < N; ++n) {
    auto row = randn(static_cast<size_t>(K), rng);
    if (n % 3 == 1) row[static_cast<size_t>(n % K)] *= 6.0f;  // an outlier
    if (t == DType::Q4_1 || t == DType::Q5_1)
      for (auto& v : row) v += 0.7f;  // rows that are not centred exercise the min term
    quantize_row(t, row.data(), wbuf.data() + offset + rb * static_cast<size_t>(n), K);
  }
  WeightRef w{wbuf.data() + offset, t, N, K};
  auto x = randn(static_cast<size_t>(M * K), rng);
  std::vector<float> yref(static_cast<size_t>(M * N));
  ref::matmul(w, x.data(), M, yref.data());

  // Error bound S per output (see the file comment).
  std::vector<float> wd(static_cast<size_t>(K));
  std::vector<double> S(static_cast<size_t>(M * N));
  for (int64_t n = 0; n < N; ++n) {
    dequantize_row(t, wbuf.data() + offset + rb * static_cast<size_t>(n), wd.data(), K);
    for (int64_t m = 0; m < M; ++m) {
      double s = 0;
      float amax = 0;
      for (int64_t k = 0; k < K; ++k) amax = std::max(amax, std::fabs(x[m * K + k]));
      for (int64_t k = 0; k < K; ++k) s += (std::fabs(wd[k]) + 1.0) * (std::fabs(x[m * K + k]) + amax / 64.0);
      S[m * N + n] = s;
    }
  }
  const double T = static_cast<double>(K / 4 + K / 32 + 4);
  ThreadPool pool(threads);
  for (Isa isa : isas()) {
    set_active_isa(isa);
    std::vector<float> y(static_cast<size_t>(M * N), -7.0f);
    matmul(w, x.data(), M, y.data(), pool);
    for (int64_t i = 0; i < M * N; ++i) {
      const double tol = 2.0 * (T + 2.0) * std::ldexp(1.0, -24) * S[i];
      EXPECT_LE(std::fabs(static_cast<double>(y[i]) - yref[i]), tol)
          << dtype_name(t) << " isa=" << isa_name(isa) << " M=" << M << " N=" << N << " K=" << K << " threads=" << threads
          << " at m=" << i / N << " n=" << i % N << " y=" << y[i] << " ref=" << yref[i];
      if (::testing::Test::HasFailure()) return false;  // one report, not one per element
    }
    if (M == 1) {  // the decode path's one-pass variant gives the same numbers
      std::vector<float> y1(static_cast<size_t>(N)), y2(static_cast<size_t>(N));
      float* ys[2] = {y1.data(), y2.data()};
      const WeightRef pair[2] = {w, w};
      matmul_multi(pair, ys, 2, x.data(), 1, pool);
      for (int64_t i = 0; i < N; ++i) EXPECT_EQ(y1[i], y[i]) << dtype_name(t) << " isa=" << isa_name(isa);
    }
  }
  WeightRef wp = w;
  PackedStore store;
  if (!pack_weight(wp, store, &pool)) return false;
  EXPECT_NE(wp.packed, nullptr);
  // Packed weights are read by the AVX-512 VNNI kernel and, for the 32-block types, by the AVX2
  // one (CPUs without VNNI; here under a forced KVSCOPE_ISA=avx2).
  for (Isa isa : isas()) {
    if (isa == Isa::Scalar) continue;
    set_active_isa(isa);
    constexpr int kGuard = 16;
    std::vector<float> y(static_cast<size_t>(M * N + kGuard), -7.0f), y1(y), y2(y);
    matmul(wp, x.data(), M, y.data(), pool);
    float* ys[2] = {y1.data(), y2.data()};
    const WeightRef pair[2] = {wp, wp};
    matmul_multi(pair, ys, 2, x.data(), M, pool);  // the decode path's one-pass variant
    for (int64_t i = 0; i < M * N; ++i) {
      const double tol = 2.0 * (T + 2.0) * std::ldexp(1.0, -24) * S[i];
      EXPECT_LE(std::fabs(static_cast<double>(y[i]) - yref[i]), tol)
          << dtype_name(t) << " packed isa=" << isa_name(isa) << " M=" << M << " N=" << N << " K=" << K << " threads=" << threads
          << " at m=" << i / N << " n=" << i % N << " y=" << y[i] << " ref=" << yref[i];
      EXPECT_EQ(y1[i], y[i]) << dtype_name(t) << " packed isa=" << isa_name(isa) << ": matmul_multi differs from matmul at " << i;
      EXPECT_EQ(y2[i], y[i]) << dtype_name(t) << " packed isa=" << isa_name(isa) << ": matmul_multi differs from matmul at " << i;
      if (::testing::Test::HasFailure()) return true;
    }
    for (int i = 0; i < kGuard; ++i) {
      EXPECT_EQ(y[M * N + i], -7.0f) << dtype_name(t) << " packed isa=" << isa_name(isa) << ": wrote past the output (padding rows)";
      EXPECT_EQ(y1[M * N + i], -7.0f) << dtype_name(t) << " packed isa=" << isa_name(isa) << ": matmul_multi wrote past the output";
    }
  }
  return true;
}

}  // namespace

TEST(LegacyQuant, NamesIdsAndGeometry) {
  EXPECT_EQ(dtype_from_ggml(3), DType::Q4_1);
  EXPECT_EQ(dtype_from_ggml(6), DType::Q5_0);
  EXPECT_EQ(dtype_from_ggml(7), DType::Q5_1);
  EXPECT_EQ(dtype_from_ggml(20), DType::IQ4_NL);
  EXPECT_EQ(dtype_from_ggml(23), DType::IQ4_XS);
  for (const char* n : {"q4_1", "q5_0", "Q5_1", "iq4_nl", "IQ4_XS"}) EXPECT_NO_THROW(dtype_from_name(n)) << n;
  EXPECT_EQ(row_bytes(DType::Q4_1, 64), 40u);
  EXPECT_EQ(row_bytes(DType::Q5_0, 64), 44u);
  EXPECT_EQ(row_bytes(DType::Q5_1, 64), 48u);
  EXPECT_EQ(row_bytes(DType::IQ4_NL, 64), 36u);
  EXPECT_EQ(row_bytes(DType::IQ4_XS, 512), 272u);
  EXPECT_THROW(row_bytes(DType::IQ4_XS, 288), std::exception);
  EXPECT_EQ(activation_type(DType::Q4_1), DType::Q8_1);
  EXPECT_EQ(activation_type(DType::Q5_1), DType::Q8_1);
  EXPECT_EQ(activation_type(DType::Q5_0), DType::Q8_0);
  EXPECT_EQ(activation_type(DType::IQ4_NL), DType::Q8_0);
  EXPECT_EQ(activation_type(DType::IQ4_XS), DType::Q8_K);
}

TEST(LegacyQuant, UnsupportedTypesNamed) {
  try {
    dtype_from_ggml(19);
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "type IQ1_S is not supported");
  }
  try {
    dtype_from_ggml(9);  // Q8_1 is an activation format, never a weight type
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "type Q8_1 is not supported");
  }
  try {
    dtype_from_ggml(977);
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "unknown type id 977");
  }
}

// Round trip error of each quantizer relative to the block's spread, and exact decoding of values
// the formats can hold.
TEST(LegacyQuant, QuantizersRoundTrip) {
  std::mt19937 rng(5);
  const int64_t n = 1024;
  auto x = randn(n, rng);
  for (DType t : kTypes) {
    std::vector<uint8_t> buf(row_bytes(t, n));
    std::vector<float> y(n);
    quantize_row(t, x.data(), buf.data(), n);
    dequantize_row(t, buf.data(), y.data(), n);
    double se = 0, sx = 0;
    for (int64_t i = 0; i < n; ++i) se += (x[i] - y[i]) * (x[i] - y[i]), sx += x[i] * x[i];
    const double rel = std::sqrt(se / sx);
    // 4-bit formats land near 0.1 relative RMS error on Gaussian data, 5-bit near 0.05.
    const double limit = (t == DType::Q5_0 || t == DType::Q5_1) ? 0.06 : 0.13;
    EXPECT_LT(rel, limit) << dtype_name(t);
    EXPECT_GT(rel, 0.0) << dtype_name(t);
  }
  // A block of codebook values times 0.5 is represented exactly by IQ4_NL.
  std::vector<float> cb(32);
  for (int j = 0; j < 32; ++j) cb[j] = 0.5f * kIQ4Values[(j * 7) % 16];
  std::vector<uint8_t> b(row_bytes(DType::IQ4_NL, 32));
  std::vector<float> y(32);
  quantize_row(DType::IQ4_NL, cb.data(), b.data(), 32);
  dequantize_row(DType::IQ4_NL, b.data(), y.data(), 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], cb[j]) << j;
  // Integers 0..31 plus 3 are exact in Q5_1 (d = 1, m = 3), and -16..15 in Q5_0 (d = -1).
  for (int j = 0; j < 32; ++j) cb[j] = static_cast<float>((j * 13) % 32 + 3);
  std::vector<uint8_t> b5(row_bytes(DType::Q5_1, 32));
  quantize_row(DType::Q5_1, cb.data(), b5.data(), 32);
  dequantize_row(DType::Q5_1, b5.data(), y.data(), 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], cb[j]) << j;
  for (int j = 0; j < 32; ++j) cb[j] = static_cast<float>(15 - (j * 13) % 32);
  std::vector<uint8_t> b50(row_bytes(DType::Q5_0, 32));
  quantize_row(DType::Q5_0, cb.data(), b50.data(), 32);
  dequantize_row(DType::Q5_0, b50.data(), y.data(), 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], cb[j]) << j;
}

// Q8_K activations: the largest-magnitude element maps to -127 and the 16-sums match the quants.
TEST(LegacyQuant, Q8KActivations) {
  std::mt19937 rng(6);
  auto x = randn(512, rng);
  x[300] = -9.0f;
  std::vector<uint8_t> buf(2 * sizeof(BlockQ8_K));
  quantize_row(DType::Q8_K, x.data(), buf.data(), 512);
  BlockQ8_K b[2];
  std::memcpy(b, buf.data(), sizeof b);
  EXPECT_EQ(b[1].qs[300 - 256], -127);  // d = -max / 127 maps the largest element to -127
  EXPECT_FLOAT_EQ(b[1].d, 9.0f / 127.0f);
  for (int g = 0; g < 16; ++g) {
    int s = 0;
    for (int j = 0; j < 16; ++j) s += b[0].qs[16 * g + j];
    EXPECT_EQ(b[0].bsums[g], s);
  }
}

// The reference product equals the dequantized weights times the dequantized activations.
TEST(LegacyQuant, RefMatchesDequantizedProduct) {
  std::mt19937 rng(7);
  for (DType t : kTypes) {
    const int64_t K = 512;
    auto wf = randn(K, rng);
    auto x = randn(K, rng);
    std::vector<uint8_t> wb(row_bytes(t, K));
    quantize_row(t, wf.data(), wb.data(), K);
    std::vector<float> wd(K), xd(K);
    dequantize_row(t, wb.data(), wd.data(), K);
    const DType at = activation_type(t);
    std::vector<uint8_t> xb(row_bytes(at, K));
    quantize_row(at, x.data(), xb.data(), K);
    dequantize_row(at, xb.data(), xd.data(), K);
    double expect = 0, mag = 0;
    for (int64_t k = 0; k < K; ++k) expect += static_cast<double>(wd[k]) * xd[k], mag += std::fabs(wd[k] * xd[k]);
    float y = 0;
    ref::matmul(WeightRef{wb.data(), t, 1, K}, x.data(), 1, &y);
    // Q8_1's fp16 block sums and fp16-rounded scales differ from the exact product by ~1e-3 relative.
    EXPECT_NEAR(y, expect, 2e-3 * mag + 1e-4) << dtype_name(t);
  }
}

TEST(LegacyQuant, MatmulAllIsasRandomShapes) {
  IsaGuard g;
  std::mt19937 rng(8);
  int c = 0;
  for (DType t : kTypes) {
    const int64_t bs = block_size(t);
    for (int64_t M : {1, 2, 3, 5, 16})
      for (int64_t N : {1, 3, 7, 33, 67})
        for (int64_t nb : {1, 3, 5}) {
          check_matmul(t, M, N, nb * bs, 1 + c % 3, static_cast<size_t>(c % 3), rng);
          ++c;
        }
  }
}

TEST(LegacyQuant, MatmulLargerThreaded) {
  IsaGuard g;
  std::mt19937 rng(9);
  for (DType t : kTypes) {
    check_matmul(t, 1, 515, 768, 3, 1, rng);
    check_matmul(t, 37, 130, 1280, 2, 0, rng);
  }
}

// The 32-block types llama-quantize falls back to inside K-quant mixes are packed (16-row groups,
// VNNI kernels) like the others: row counts around the 16-row group (15, 17, 33, 40), odd block
// counts, more activation rows than one prefill tile (9, 19), 1-3 pack/matmul threads.
TEST(LegacyQuant, PackedMatchesReference) {
  if (!detail::packed_kernels_available(DType::Q4_1)) GTEST_SKIP() << "no AVX2 (or KVSCOPE_REPACK=0): no packed kernels";
  IsaGuard g;
  std::mt19937 rng(10);
  int c = 0;
  for (DType t : {DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL, DType::Q4_0, DType::Q8_0})
    for (int64_t M : {1, 3, 9})
      for (int64_t N : {1, 15, 17, 40})
        for (int64_t nb : {1, 3, 4, 7}) {
          EXPECT_TRUE(check_matmul(t, M, N, nb * 32, 1 + c % 3, static_cast<size_t>(c % 3), rng)) << dtype_name(t);
          ++c;
        }
  for (DType t : {DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL}) {
    EXPECT_TRUE(check_matmul(t, 1, 301, 1088, 3, 1, rng)) << dtype_name(t);
    EXPECT_TRUE(check_matmul(t, 19, 77, 320, 2, 0, rng)) << dtype_name(t);
  }
}

// Model load lays matrices out over its thread pool: every type's packed bytes must equal the
// one-thread layout, whatever the split (row counts that leave a partial 16-row group, 1-3 threads).
TEST(Pack, ThreadedLayoutEqualsSerial) {
  std::mt19937 rng(11);
  int checked = 0;
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                  DType::IQ4_NL, DType::IQ4_XS, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    const int64_t K = 512;
    for (int64_t N : {7, 53}) {
      const size_t rb = row_bytes(t, K);
      std::vector<uint8_t> wbuf(rb * static_cast<size_t>(N));
      for (int64_t n = 0; n < N; ++n) {
        auto row = randn(static_cast<size_t>(K), rng);
        quantize_row(t, row.data(), wbuf.data() + rb * static_cast<size_t>(n), K);
      }
      WeightRef w1{wbuf.data(), t, N, K};
      PackedStore s1;
      if (!pack_weight(w1, s1)) continue;  // no packed layout for t on this CPU
      for (int threads : {2, 3}) {
        ThreadPool pool(threads);
        WeightRef wt{wbuf.data(), t, N, K};
        PackedStore st;
        ASSERT_TRUE(pack_weight(wt, st, &pool)) << dtype_name(t);
        ASSERT_EQ(st.bytes(), s1.bytes()) << dtype_name(t);
        // Every layout here is whole 64-byte multiples (K = 512), so all of the store is written.
        EXPECT_EQ(0, std::memcmp(wt.packed, w1.packed, s1.bytes())) << dtype_name(t) << " N=" << N << " threads=" << threads;
        ++checked;
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "no packed layouts on this CPU";
}

// The AVX2 kernels read the packed copy with the AVX-512 VNNI kernels' arithmetic: exact integer
// dots per block and the same per-row float sums in block order, so their outputs are identical.
TEST(Pack, Avx2AndAvx512ReadThePackedCopyAlike) {
  if (detected_isa() != Isa::AVX512 || !detail::packed_kernels_available(DType::Q4_K)) GTEST_SKIP() << "needs AVX-512 VNNI packing";
  IsaGuard g;
  std::mt19937 rng(12);
  ThreadPool pool(2);
  for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL, DType::IQ4_XS, DType::Q2_K,
                  DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K})
    for (int64_t M : {1, 3, 6}) {
      const int64_t K = 2304, N = 45;
      const size_t rb = row_bytes(t, K);
      std::vector<uint8_t> wbuf(rb * static_cast<size_t>(N));
      for (int64_t n = 0; n < N; ++n) {
        auto row = randn(static_cast<size_t>(K), rng);
        quantize_row(t, row.data(), wbuf.data() + rb * static_cast<size_t>(n), K);
      }
      WeightRef w{wbuf.data(), t, N, K};
      PackedStore store;
      ASSERT_TRUE(pack_weight(w, store)) << dtype_name(t);
      auto x = randn(static_cast<size_t>(M * K), rng);
      std::vector<float> a(static_cast<size_t>(M * N)), b(a.size());
      set_active_isa(Isa::AVX512);
      matmul(w, x.data(), M, a.data(), pool);
      set_active_isa(Isa::AVX2);
      matmul(w, x.data(), M, b.data(), pool);
      EXPECT_EQ(a, b) << dtype_name(t) << " M=" << M;
    }
}

}  // namespace legacy_quant_test
