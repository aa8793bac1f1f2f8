// matmul on every ISA the CPU has, every weight type, odd shapes, 1-3 threads, against ref::matmul.
//
// Tolerances. Both sides multiply exactly the same operands (the activations are converted by the
// same deterministic code on every ISA; the Q8_0 activation quantizer is bit-identical across
// ISAs, which this test would catch as a mismatch of a whole quantization step) and differ only in
// summation order and FMA contraction. A float sum of T terms computed in any order has error
// <= (T-1) u * sum|terms| (u = 2^-24), so |y - y_ref| <= 2 (T + 2) u S with S = sum_k |w_k x_k|:
//  * float weights: T = K;
//  * Q8_0/Q4_0: the integer dots are exact, but SIMD kernels scale and sum up to 8 integer lane
//    partials per block separately (each exact, each rounded twice for si * (dw * dx)), so
//    T = K/4 + 2 terms. S is taken over the dequantized weights and a bound on the
//    quantized activations (|x_q| <= |x| + d_x/2).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/isa_fixture.h"
#include "kernels/kernels.h"

namespace matmul_test {

using namespace kvscope::kernels;

namespace {

// Random weights of type t (rows x cols); `offset` misaligns the data pointer.
std::vector<uint8_t> make_weights(DType t, int64_t rows, int64_t cols, std::mt19937& rng, size_t offset) {
  const size_t rb = row_bytes(t, cols);
  std::vector<uint8_t> buf(offset + rb * static_cast<size_t>(rows) + 1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = u(rng);
    if (cols > 3) row[static_cast<size_t>(r % cols)] *= 8.0f;  // some outliers
    quantize_row(t, row.data(), buf.data() + offset + static_cast<size_t>(r) * rb, cols);
  }
  return buf;
}

void check(DType t, int64_t M, int64_t N, int64_t K, int nthreads, size_t offset, std::mt19937& rng) {
  auto wbuf = make_weights(t, N, K, rng, offset);
  WeightRef w{wbuf.data() + offset, t, N, K};
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(M * K));
  for (auto& v : x) v = u(rng);
  if (!x.empty()) x[0] = 5.0f;
  std::vector<float> yref(static_cast<size_t>(M * N), -1.0f);
  ref::matmul(w, x.data(), M, yref.data());

  // S[m][n] bound for the tolerance: sum_k |w_k| * bound(|x_k| after conversion).
  const bool q8act = activation_type(t) == DType::Q8_0;
  std::vector<double> xa(static_cast<size_t>(M * K));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k0 = 0; k0 < K; k0 += 32) {
      const int64_t k1 = std::min(K, k0 + 32);
      float amax = 0.0f;
      for (int64_t k = k0; k < k1; ++k) amax = std::max(amax, std::fabs(x[m * K + k]));
      for (int64_t k = k0; k < k1; ++k) {
        double v = std::fabs(x[m * K + k]);
        if (q8act) v += amax / 127.0 * 0.51;
        if (t == DType::F16 || t == DType::BF16) v *= 1.01;
        xa[m * K + k] = v;
      }
    }
  std::vector<float> wd(static_cast<size_t>(K));
  std::vector<double> S(static_cast<size_t>(M * N));
  for (int64_t n = 0; n < N; ++n) {
    dequantize_row(t, static_cast<const uint8_t*>(w.data) + row_bytes(t, K) * n, wd.data(), K);
    for (int64_t m = 0; m < M; ++m) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += std::fabs(wd[k]) * xa[m * K + k];
      S[m * N + n] = acc;
    }
  }
  const double T = q8act ? static_cast<double>(K / 4 + 2) : static_cast<double>(K + 2);
  ThreadPool pool(nthreads);
  for (Isa isa : isas()) {
    set_active_isa(isa);
    std::vector<float> y(static_cast<size_t>(M * N), -7.0f);
    matmul(w, x.data(), M, y.data(), pool);
    for (int64_t i = 0; i < M * N; ++i) {
      const double tol = 2.0 * (T + 2.0) * std::ldexp(1.0, -24) * S[i] + 1e-30;
      ASSERT_LE(std::fabs(static_cast<double>(y[i]) - yref[i]), tol)
          << dtype_name(t) << " isa=" << isa_name(isa) << " M=" << M << " N=" << N << " K=" << K
          << " threads=" << nthreads << " at m=" << i / N << " n=" << i % N << " y=" << y[i] << " ref=" << yref[i];
    }
  }
  // The re-laid-out (packed) weights, where this CPU has kernels for them, against the same reference.
  PackedStore store;
  WeightRef wp = w;
  if (!pack_weight(wp, store)) return;
  ASSERT_NE(wp.packed, nullptr);
  set_active_isa(Isa::AVX512);
  std::vector<float> y(static_cast<size_t>(M * N), -7.0f);
  matmul(wp, x.data(), M, y.data(), pool);
  std::vector<float> y1(static_cast<size_t>(M * N), -7.0f), y2(y1);
  float* ys[2] = {y1.data(), y2.data()};
  const WeightRef pair[2] = {wp, wp};
  matmul_multi(pair, ys, 2, x.data(), M, pool);  // the decode path's one-pass variant
  for (int64_t i = 0; i < M * N; ++i) {
    const double tol = 2.0 * (T + 2.0) * std::ldexp(1.0, -24) * S[i] + 1e-30;
    ASSERT_LE(std::fabs(static_cast<double>(y[i]) - yref[i]), tol)
        << dtype_name(t) << " packed M=" << M << " N=" << N << " K=" << K << " threads=" << nthreads << " at m="
        << i / N << " n=" << i % N << " y=" << y[i] << " ref=" << yref[i];
    ASSERT_EQ(y1[i], y[i]) << "matmul_multi differs from matmul at " << i;
    ASSERT_EQ(y2[i], y[i]) << "matmul_multi differs from matmul at " << i;
  }
}

}  // namespace

TEST(Matmul, ActivationTypes) {
  EXPECT_EQ(activation_type(DType::F32), DType::F32);
  EXPECT_EQ(activation_type(DType::F16), DType::F16);
  EXPECT_EQ(activation_type(DType::BF16), DType::BF16);
  EXPECT_EQ(activation_type(DType::Q8_0), DType::Q8_0);
  EXPECT_EQ(activation_type(DType::Q4_0), DType::Q8_0);
  for (DType t : {DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K}) EXPECT_EQ(activation_type(t), DType::Q8_K);
}

TEST(Matmul, IsaSelection) {
  IsaGuard g;
  set_active_isa(Isa::AVX512);
  EXPECT_LE(static_cast<int>(active_isa()), static_cast<int>(detected_isa()));
  set_active_isa(Isa::Scalar);
  EXPECT_EQ(active_isa(), Isa::Scalar);
  EXPECT_STREQ(isa_name(Isa::AVX2), "avx2");
}

TEST(Matmul, RefMatchesDequantizedProduct) {
  // ref::matmul on F32 is a plain dot product.
  const float w[6] = {1, 2, 3, 4, 5, 6};
  const float x[3] = {1, -1, 2};
  float y[2];
  ref::matmul(WeightRef{w, DType::F32, 2, 3}, x, 1, y);
  EXPECT_EQ(y[0], 1 - 2 + 6);
  EXPECT_EQ(y[1], 4 - 5 + 12);
}

TEST(Matmul, FloatTypesAllIsas) {
  IsaGuard g;
  std::mt19937 rng(11);
  int c = 0;
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    for (int64_t M : {1, 2, 3, 7, 16, 33, 64})
      for (int64_t N : {1, 5, 67, 300})
        for (int64_t K : {1, 15, 16, 17, 100, 773}) {
          if (M * N * K > 64 * 300 * 100 && M > 7) continue;  // keep the scalar reference quick
          check(t, M, N, K, 1 + c % 3, static_cast<size_t>(c % 3) * 2, rng);
          ++c;
        }
}

TEST(Matmul, QuantTypesAllIsas) {
  IsaGuard g;
  std::mt19937 rng(12);
  int c = 0;
  for (DType t : {DType::Q8_0, DType::Q4_0})
    for (int64_t M : {1, 2, 3, 7, 16, 33, 64})
      for (int64_t N : {1, 5, 67, 300})
        for (int64_t K : {32, 64, 96, 800}) {
          if (M * N * K > 64 * 300 * 96 && M > 7) continue;
          check(t, M, N, K, 1 + c % 3, static_cast<size_t>(c % 3), rng);
          ++c;
        }
}

TEST(Matmul, LargerShapesThreaded) {
  IsaGuard g;
  std::mt19937 rng(14);
  check(DType::F32, 64, 768, 768, 2, 0, rng);
  check(DType::Q8_0, 40, 512, 768, 2, 0, rng);
  check(DType::F16, 9, 300, 2048, 3, 0, rng);
  check(DType::Q4_0, 1, 2048, 768, 2, 0, rng);
}

TEST(Matmul, EmptyShapes) {
  ThreadPool pool(2);
  std::vector<float> w(10, 1.0f), x(10, 1.0f);
  float y[4] = {9, 9, 9, 9};
  matmul(WeightRef{w.data(), DType::F32, 2, 0}, x.data(), 2, y, pool);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  matmul(WeightRef{w.data(), DType::F32, 0, 5}, x.data(), 2, y, pool);
  matmul(WeightRef{w.data(), DType::F32, 2, 5}, x.data(), 0, y, pool);
}

}  // namespace matmul_test
