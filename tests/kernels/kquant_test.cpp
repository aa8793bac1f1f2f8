// K-quants (Q2_K..Q6_K) and their Q8_K activations: quantizer round trips, per-element decoders
// written from the layout descriptions, the scalar reference dot against a double-precision dot of
// the dequantized operands, and every SIMD kernel against the reference on random shapes (odd row
// counts, odd block counts, decode and prefill, 1-3 threads).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gguf/gguf.h"
#include "kernels/internal.h"
#include "kernels/isa_fixture.h"
#include "kernels/kernels.h"
#include "kernels/kquant.h"
#include "util/error.h"

namespace kquant_test {

using namespace kvscope::kernels;

namespace {

const DType kTypes[] = {DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K};

std::vector<float> normal_rows(int64_t n, std::mt19937& rng, float outlier = 6.0f) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = nd(rng);
  for (int64_t i = 0; i < n; i += 97) x[static_cast<size_t>(i)] *= outlier;
  return x;
}

// Element e of a block, decoded straight from the bit positions the GGUF layouts describe.
float elem(DType t, const uint8_t* blk, int e) {
  auto h2f = [](const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return fp16_to_fp32(h);
  };
  const int h = e / 128, j = (e % 128) / 32, l = e % 32;
  switch (t) {
    case DType::Q2_K: {
      const uint8_t sc = blk[e / 16];
      const int q = (blk[16 + 32 * h + l] >> (2 * j)) & 3;
      return h2f(blk + 80) * static_cast<float>(sc & 15) * static_cast<float>(q) - h2f(blk + 82) * static_cast<float>(sc >> 4);
    }
    case DType::Q3_K: {
      const int s = e / 16;
      const int lo = s < 8 ? blk[96 + s] & 15 : blk[96 + s - 8] >> 4;
      const int hi = (blk[96 + 8 + s % 4] >> (2 * (s / 4))) & 3;
      const int q = ((blk[32 + 32 * h + l] >> (2 * j)) & 3) + (((blk[l] >> (4 * h + j)) & 1) ? 0 : -4);
      return h2f(blk + 108) * static_cast<float>((lo | (hi << 4)) - 32) * static_cast<float>(q);
    }
    case DType::Q5_K: {
      const int sb = e / 32;
      const uint8_t* s = blk + 4;
      int sc, mn;
      if (sb < 4) {
        sc = s[sb] & 63;
        mn = s[sb + 4] & 63;
      } else {
        sc = (s[sb + 4] & 0xF) | ((s[sb - 4] >> 6) << 4);
        mn = (s[sb + 4] >> 4) | ((s[sb] >> 6) << 4);
      }
      const int c = e / 64, half = (e % 64) / 32;
      const uint8_t byte = blk[48 + 32 * c + l];
      const int q = (half ? byte >> 4 : byte & 15) | (((blk[16 + l] >> (2 * c + half)) & 1) << 4);
      return h2f(blk) * static_cast<float>(sc) * static_cast<float>(q) - h2f(blk + 2) * static_cast<float>(mn);
    }
    default: {
      float y[256];
      dequantize_row(t, blk, y, 256);  // Q4_K/Q6_K: covered by dtype_test's decoders
      return y[e];
    }
  }
}

void random_blocks(DType t, uint8_t* p, int64_t nblocks, std::mt19937& rng) {
  const size_t bb = block_bytes(t);
  std::uniform_real_distribution<float> u(0.2f, 1.0f);
  for (size_t i = 0; i < bb * static_cast<size_t>(nblocks); ++i) p[i] = static_cast<uint8_t>(rng());
  for (int64_t b = 0; b < nblocks; ++b) {
    uint8_t* blk = p + bb * static_cast<size_t>(b);
    const uint16_t d = fp32_to_fp16(0.01f * u(rng)), dm = fp32_to_fp16(0.004f * u(rng));
    switch (t) {
      case DType::Q2_K: std::memcpy(blk + 80, &d, 2); std::memcpy(blk + 82, &dm, 2); break;
      case DType::Q3_K: std::memcpy(blk + 108, &d, 2); break;
      case DType::Q4_K:
      case DType::Q5_K: std::memcpy(blk, &d, 2); std::memcpy(blk + 2, &dm, 2); break;
      default: std::memcpy(blk + 208, &d, 2); break;
    }
  }
}

}  // namespace

TEST(KQuant, Geometry) {
  EXPECT_EQ(dtype_from_ggml(10), DType::Q2_K);
  EXPECT_EQ(dtype_from_ggml(11), DType::Q3_K);
  EXPECT_EQ(dtype_from_ggml(13), DType::Q5_K);
  EXPECT_EQ(dtype_from_ggml(15), DType::Q8_K);
  EXPECT_EQ(row_bytes(DType::Q2_K, 512), 168u);
  EXPECT_EQ(row_bytes(DType::Q3_K, 256), 110u);
  EXPECT_EQ(row_bytes(DType::Q5_K, 768), 528u);
  EXPECT_EQ(row_bytes(DType::Q8_K, 256), 292u);
  for (DType t : kTypes) {
    EXPECT_EQ(block_size(t), 256);
    EXPECT_EQ(dtype_from_name(dtype_name(t)), t);
    EXPECT_TRUE(is_kquant(t));
    EXPECT_THROW(row_bytes(t, 320), kvscope::FormatError);
  }
  EXPECT_FALSE(is_kquant(DType::Q8_K));
}

TEST(KQuant, DequantizeMatchesLayoutDecoders) {
  std::mt19937 rng(5);
  for (DType t : {DType::Q2_K, DType::Q3_K, DType::Q5_K}) {
    std::vector<uint8_t> buf(block_bytes(t) * 3);
    random_blocks(t, buf.data(), 3, rng);
    std::vector<float> y(768);
    dequantize_row(t, buf.data(), y.data(), 768);
    for (int e = 0; e < 768; ++e)
      ASSERT_FLOAT_EQ(y[e], elem(t, buf.data() + block_bytes(t) * (e / 256), e % 256)) << dtype_name(t) << " " << e;
  }
}

// Quantize then dequantize Gaussian rows: the RMS error relative to the data's RMS stays within what
// each type's bits allow (measured with this quantizer, with headroom), so a wrong bit layout in the
// writer (which would be self-consistent with a wrong reader only by accident) or a bad fit shows.
TEST(KQuant, QuantizerRoundTrip) {
  std::mt19937 rng(6);
  const double bound[] = {0.45, 0.25, 0.12, 0.06, 0.03};  // Q2_K..Q6_K
  int i = 0;
  for (DType t : kTypes) {
    const int64_t n = 256 * 40;
    auto x = normal_rows(n, rng);
    std::vector<uint8_t> q(row_bytes(t, n));
    quantize_row(t, x.data(), q.data(), n);
    std::vector<float> y(static_cast<size_t>(n));
    dequantize_row(t, q.data(), y.data(), n);
    double e2 = 0, x2 = 0;
    for (int64_t k = 0; k < n; ++k) {
      e2 += (y[k] - x[k]) * (y[k] - x[k]);
      x2 += x[k] * x[k];
    }
    const double rel = std::sqrt(e2 / x2);
    EXPECT_LT(rel, bound[i]) << dtype_name(t);
    std::printf("[kquant] %s round-trip relative RMS error %.4f\n", dtype_name(t), rel);
    ++i;
    // Constant and all-zero blocks come back exactly (zero) or close (constant).
    std::vector<float> z(256, 0.0f), yz(256, 1.0f);
    quantize_row(t, z.data(), q.data(), 256);
    dequantize_row(t, q.data(), yz.data(), 256);
    for (float v : yz) EXPECT_EQ(v, 0.0f) << dtype_name(t);
  }
}

TEST(KQuant, Q8KActivationRounding) {
  std::mt19937 rng(7);
  const int64_t K = 256 * 5;
  auto x = normal_rows(K, rng);
  for (int j = 256; j < 512; ++j) x[j] = 0.0f;  // an all-zero block
  x[600] = 50.0f;                                // ties in magnitude: the first one sets the sign
  x[700] = -50.0f;
  x[1100] = -3.0e-5f;                            // tiny values round to 0
  std::vector<int8_t> q1(K), q2(K);
  std::vector<float> d1(5), d2(5);
  std::vector<int16_t> s1(80), s2(80);
  kquant::quantize_act_q8k(x.data(), q1.data(), d1.data(), s1.data(), K);
  EXPECT_EQ(d1[1], 0.0f);
  EXPECT_EQ(q1[600], -127);
  EXPECT_EQ(q1[700], 127);
  EXPECT_LT(d1[2], 0.0f);  // d carries the sign of the element that maps to -127
  for (int64_t b = 0; b < 5; ++b)
    for (int g = 0; g < 16; ++g) {
      int s = 0;
      for (int l = 0; l < 16; ++l) s += q1[256 * b + 16 * g + l];
      EXPECT_EQ(s1[16 * b + g], s);
    }
  for (int64_t k = 0; k < K; ++k) EXPECT_LE(std::fabs(d1[k / 256] * q1[k] - x[k]), std::fabs(d1[k / 256]) * 0.5f + 1e-6f);
  if (static_cast<int>(detected_isa()) >= static_cast<int>(Isa::AVX2)) {
    kvscope::kernels::detail::avx2::quant_q8k(x.data(), q2.data(), d2.data(), s2.data(), K);
    EXPECT_EQ(q1, q2);
    EXPECT_EQ(d1, d2);
    EXPECT_EQ(s1, s2);
  }
}

// The reference's integer decomposition equals a double-precision dot of the dequantized weights and
// the dequantized activations, to float rounding of the per-block products.
TEST(KQuant, ReferenceDotMatchesDequantized) {
  std::mt19937 rng(8);
  for (DType t : kTypes) {
    const int64_t nb = 3, K = 256 * nb;
    std::vector<uint8_t> w(row_bytes(t, K));
    random_blocks(t, w.data(), nb, rng);
    auto x = normal_rows(K, rng);
    std::vector<int8_t> q(K);
    std::vector<float> d(nb);
    std::vector<int16_t> bs(16 * nb);
    kquant::quantize_act_q8k(x.data(), q.data(), d.data(), bs.data(), K);
    std::vector<float> wf(K);
    dequantize_row(t, w.data(), wf.data(), K);
    double exact = 0, mag = 0;
    for (int64_t k = 0; k < K; ++k) {
      const double xv = static_cast<double>(d[k / 256]) * q[k];
      exact += wf[k] * xv;
      mag += std::fabs(wf[k] * xv);
    }
    const float got = kquant::dot_ref(t, w.data(), q.data(), d.data(), bs.data(), nb);
    EXPECT_NEAR(got, exact, 1e-5 * mag + 1e-6) << dtype_name(t);
  }
}

namespace {

// Every ISA's matmul (and the decode path's matmul_multi) against ref::matmul. Both sides multiply
// the same Q8_K activations (the quantizer is bit-identical across ISAs, tested above) and the same
// exact per-block integers; SIMD kernels scale up to 16 + 8 integer lane partials per block
// separately, so a float sum of T = 24 nb + 2 terms in any order differs by at most
// 2 (T + 2) u S with S = sum over terms of |dy| (|D s u| + |Dmin m|) |x_q| (u = 2^-24).
void check(DType t, int64_t M, int64_t N, int64_t nb, int nthreads, size_t offset, std::mt19937& rng) {
  const int64_t K = 256 * nb;
  const size_t rb = row_bytes(t, K);
  std::vector<uint8_t> wbuf(offset + rb * static_cast<size_t>(N) + 1);
  random_blocks(t, wbuf.data() + offset, N * nb, rng);
  WeightRef w{wbuf.data() + offset, t, N, K};
  auto x = normal_rows(M * K, rng);
  std::vector<float> yref(static_cast<size_t>(M * N), -1.0f);
  ref::matmul(w, x.data(), M, yref.data());

  std::vector<int8_t> q(static_cast<size_t>(K));
  std::vector<float> d(static_cast<size_t>(nb));
  std::vector<int16_t> bs(static_cast<size_t>(16 * nb));
  std::vector<double> S(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m) {
    kquant::quantize_act_q8k(x.data() + m * K, q.data(), d.data(), bs.data(), K);
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = wbuf.data() + offset + rb * static_cast<size_t>(n) + block_bytes(t) * static_cast<size_t>(b);
        kquant::BlockScales sc;
        kquant::block_scales(t, blk, sc);
        uint8_t u[256];
        kquant::block_codes(t, blk, u);
        for (int e = 0; e < 256; ++e)
          acc += std::fabs(d[b]) * (std::fabs(sc.D * sc.s[e / 16] * u[e]) + std::fabs(sc.Dmin * sc.m[e / 16])) *
                 std::abs(q[256 * b + e]);
      }
      S[m * N + n] = acc;
    }
  }
  const double T = 24.0 * static_cast<double>(nb) + 2.0;
  ThreadPool pool(nthreads);
  for (Isa isa : isas()) {
    set_active_isa(isa);
    std::vector<float> y(static_cast<size_t>(M * N), -7.0f);
    matmul(w, x.data(), M, y.data(), pool);
    std::vector<float> y1(y.size(), -7.0f), y2(y.size(), -7.0f);
    float* ys[2] = {y1.data(), y2.data()};
    const WeightRef pair[2] = {w, w};
    matmul_multi(pair, ys, 2, x.data(), M, pool);
    for (int64_t i = 0; i < M * N; ++i) {
      const double tol = 2.0 * (T + 2.0) * std::ldexp(1.0, -24) * S[i] + 1e-30;
      ASSERT_LE(std::fabs(static_cast<double>(y[i]) - yref[i]), tol)
          << dtype_name(t) << " isa=" << isa_name(isa) << " M=" << M << " N=" << N << " nb=" << nb
          << " threads=" << nthreads << " at m=" << i / N << " n=" << i % N << " y=" << y[i] << " ref=" << yref[i];
      ASSERT_EQ(y1[i], y[i]) << "matmul_multi differs from matmul at " << i;
      ASSERT_EQ(y2[i], y[i]) << "matmul_multi differs from matmul at " << i;
    }
  }
}

}  // namespace

TEST(KQuant, AllIsasMatchReference) {
  IsaGuard g;
  std::mt19937 rng(13);
  int c = 0;
  for (DType t : kTypes)
    for (int64_t M : {1, 2, 5, 13})
      for (int64_t N : {1, 3, 17, 67})
        for (int64_t nb : {1, 2, 3, 5}) {
          if (M * N * nb > 13 * 17 * 3) continue;  // keep the scalar reference quick
          check(t, M, N, nb, 1 + c % 3, static_cast<size_t>(c % 3), rng);
          ++c;
        }
}

TEST(KQuant, LargerShapesThreaded) {
  IsaGuard g;
  std::mt19937 rng(14);
  check(DType::Q4_K, 1, 515, 8, 2, 0, rng);
  check(DType::Q6_K, 1, 301, 11, 3, 1, rng);
  check(DType::Q5_K, 19, 130, 4, 2, 0, rng);
  check(DType::Q3_K, 9, 77, 7, 3, 2, rng);
  check(DType::Q2_K, 33, 40, 3, 2, 0, rng);
}

// Files: a K-quant tensor whose rows are not a multiple of 256 and a truncated K-quant tensor are each
// refused with one error naming the tensor (never a crash); a well-formed one loads.
TEST(KQuant, ReaderRefusesBadKQuantTensors) {
  using namespace kvscope;
  auto file = [](int64_t cols, kvscope::kernels::DType t) {
    gguf::Writer w;
    w.set("general.architecture", gguf::Value::str("llama"));
    std::vector<uint8_t> b(row_bytes(t, cols) * 2, 0);
    w.add_tensor("blk.0.ffn_down.weight", {cols, 2}, t, b);
    return w.serialize();
  };
  auto ok = file(512, DType::Q5_K);
  EXPECT_EQ(gguf::File::parse(ok.data(), ok.size())->tensor("blk.0.ffn_down.weight").type, DType::Q5_K);
  // A Q4_0 tensor of 320-element rows, relabelled Q4_K (id 12): rows not a multiple of 256.
  auto bad = file(320, DType::Q4_0);
  const std::string name = "blk.0.ffn_down.weight";
  auto it = std::search(bad.begin(), bad.end(), name.begin(), name.end());
  ASSERT_NE(it, bad.end());
  const size_t type_at = static_cast<size_t>(it - bad.begin()) + name.size() + 4 + 2 * 8;  // n_dims, 2 dims
  uint32_t id;
  std::memcpy(&id, &bad[type_at], 4);
  ASSERT_EQ(id, 2u);  // Q4_0
  id = 12;
  std::memcpy(&bad[type_at], &id, 4);
  try {
    gguf::File::parse(bad.data(), bad.size());
    ADD_FAILURE() << "accepted";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor blk.0.ffn_down.weight: row length 320 is not a multiple of the Q4_K block size 256"),
              std::string::npos)
        << e.what();
  }
  // Truncated inside the K-quant tensor's data.
  auto cut = std::vector<uint8_t>(ok.begin(), ok.end() - 100);
  try {
    gguf::File::parse(cut.data(), cut.size());
    ADD_FAILURE() << "truncated file accepted";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor blk.0.ffn_down.weight data"), std::string::npos) << e.what();
  }
}

// Decode's one-pass matmul_multi over matrices of different K-quant types (a Q4_K_M layer's Q4_K
// attn_q/attn_k and Q6_K attn_v share one Q8_K activation conversion) equals one matmul per matrix.
TEST(KQuant, MultiOverMixedTypes) {
  IsaGuard g;
  std::mt19937 rng(15);
  const int64_t nb = 3, K = 256 * nb;
  const DType types[3] = {DType::Q4_K, DType::Q4_K, DType::Q6_K};
  const int64_t rows[3] = {67, 19, 33};
  std::vector<std::vector<uint8_t>> bufs(3);
  WeightRef ws[3];
  for (int i = 0; i < 3; ++i) {
    bufs[i].resize(row_bytes(types[i], K) * static_cast<size_t>(rows[i]));
    random_blocks(types[i], bufs[i].data(), rows[i] * nb, rng);
    ws[i] = WeightRef{bufs[i].data(), types[i], rows[i], K};
  }
  auto x = normal_rows(K, rng);
  for (int threads : {1, 2, 3})
    for (Isa isa : isas()) {
      set_active_isa(isa);
      ThreadPool pool(threads);
      std::vector<std::vector<float>> multi(3), single(3);
      float* ys[3];
      for (int i = 0; i < 3; ++i) {
        multi[i].assign(static_cast<size_t>(rows[i]), -7.0f);
        single[i].assign(static_cast<size_t>(rows[i]), -9.0f);
        ys[i] = multi[i].data();
        matmul(ws[i], x.data(), 1, single[i].data(), pool);
      }
      matmul_multi(ws, ys, 3, x.data(), 1, pool);
      for (int i = 0; i < 3; ++i) EXPECT_EQ(multi[i], single[i]) << isa_name(isa) << " matrix " << i << " threads " << threads;
    }
}

namespace {

// Random IQ4_XS blocks: random codes and scales, a small positive fp16 d.
void random_iq4xs(uint8_t* p, int64_t nblocks, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0.2f, 1.0f);
  for (size_t i = 0; i < sizeof(BlockIQ4_XS) * static_cast<size_t>(nblocks); ++i) p[i] = static_cast<uint8_t>(rng());
  for (int64_t b = 0; b < nblocks; ++b) {
    const uint16_t d = fp32_to_fp16(0.01f * u(rng));
    std::memcpy(p + sizeof(BlockIQ4_XS) * static_cast<size_t>(b), &d, 2);
  }
}

// The packed (row-interleaved) AVX-512 VNNI kernels against ref::matmul: the same exact per-block
// integers, a float sum of at most T = 4 nb + 2 rounded terms per output, so the difference is
// bounded by 2 (T + 2) u S (S as in check(); IQ4_XS from the dequantized weights). Rows past N
// (the zero padding of the last 16-row group) must never be written.
void check_packed(DType t, int64_t M, int64_t N, int64_t nb, int nthreads, std::mt19937& rng) {
  const int64_t K = 256 * nb;
  const size_t rb = row_bytes(t, K);
  std::vector<uint8_t> wbuf(rb * static_cast<size_t>(N));
  if (t == DType::IQ4_XS)
    random_iq4xs(wbuf.data(), N * nb, rng);
  else
    random_blocks(t, wbuf.data(), N * nb, rng);
  WeightRef w{wbuf.data(), t, N, K};
  auto x = normal_rows(M * K, rng);
  std::vector<float> yref(static_cast<size_t>(M * N));
  ref::matmul(w, x.data(), M, yref.data());
  PackedStore store;
  ASSERT_TRUE(pack_weight(w, store)) << dtype_name(t);
  ASSERT_NE(w.packed, nullptr);

  std::vector<int8_t> q(static_cast<size_t>(K));
  std::vector<float> d(static_cast<size_t>(nb)), wf(static_cast<size_t>(K));
  std::vector<int16_t> bs(static_cast<size_t>(16 * nb));
  std::vector<double> S(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m) {
    kquant::quantize_act_q8k(x.data() + m * K, q.data(), d.data(), bs.data(), K);
    for (int64_t n = 0; n < N; ++n) {
      const uint8_t* row = wbuf.data() + rb * static_cast<size_t>(n);
      double acc = 0;
      if (t == DType::IQ4_XS) {
        dequantize_row(t, row, wf.data(), K);
        for (int64_t k = 0; k < K; ++k) acc += std::fabs(d[k / 256] * wf[k]) * std::abs(q[k]);
      } else {
        for (int64_t b = 0; b < nb; ++b) {
          const uint8_t* blk = row + block_bytes(t) * static_cast<size_t>(b);
          kquant::BlockScales sc;
          kquant::block_scales(t, blk, sc);
          uint8_t u[256];
          kquant::block_codes(t, blk, u);
          for (int e = 0; e < 256; ++e)
            acc += std::fabs(d[b]) * (std::fabs(sc.D * sc.s[e / 16] * u[e]) + std::fabs(sc.Dmin * sc.m[e / 16])) *
                   std::abs(q[256 * b + e]);
        }
      }
      S[m * N + n] = acc;
    }
  }
  const double T = 4.0 * static_cast<double>(nb) + 2.0;
  ThreadPool pool(nthreads);
  // The packed copy is read by the AVX-512 VNNI kernel and by the AVX2 one (CPUs without VNNI).
  for (Isa isa : isas()) {
    if (isa == Isa::Scalar) continue;
    set_active_isa(isa);
    SCOPED_TRACE(isa_name(isa));
    constexpr int kGuard = 16;
    std::vector<float> y(static_cast<size_t>(M * N + kGuard), -7.0f);
    matmul(w, x.data(), M, y.data(), pool);
    std::vector<float> y1(y.size(), -7.0f), y2(y.size(), -7.0f);
    float* ys[2] = {y1.data(), y2.data()};
    const WeightRef pair[2] = {w, w};
    matmul_multi(pair, ys, 2, x.data(), M, pool);
    for (int64_t i = 0; i < M * N; ++i) {
      const double tol = 2.0 * (T + 2.0) * std::ldexp(1.0, -24) * S[i] + 1e-30;
      ASSERT_LE(std::fabs(static_cast<double>(y[i]) - yref[i]), tol)
          << dtype_name(t) << " packed M=" << M << " N=" << N << " nb=" << nb << " threads=" << nthreads << " at m=" << i / N
          << " n=" << i % N << " y=" << y[i] << " ref=" << yref[i];
      ASSERT_EQ(y1[i], y[i]) << "matmul_multi differs from matmul at " << i;
      ASSERT_EQ(y2[i], y[i]) << "matmul_multi differs from matmul at " << i;
    }
    for (int i = 0; i < kGuard; ++i) {
      ASSERT_EQ(y[M * N + i], -7.0f) << dtype_name(t) << ": wrote past the output (padding rows)";
      ASSERT_EQ(y1[M * N + i], -7.0f) << dtype_name(t) << ": matmul_multi wrote past the output";
    }
  }
}

bool packed_available(DType t) { return detail::packed_kernels_available(t); }

}  // namespace

TEST(KQuant, PackedMatchesReference) {
  if (!packed_available(DType::Q4_K)) GTEST_SKIP() << "no AVX2 (or KVSCOPE_REPACK=0): no packed K-quant kernels";
  IsaGuard g;
  std::mt19937 rng(21);
  int c = 0;
  for (DType t : {DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_XS})
    for (int64_t M : {1, 3, 6})
      for (int64_t N : {1, 15, 17, 40})
        for (int64_t nb : {1, 3}) {
          check_packed(t, M, N, nb, 1 + c % 3, rng);
          ++c;
        }
}

TEST(KQuant, PackedLargerShapesThreaded) {
  if (!packed_available(DType::Q4_K)) GTEST_SKIP() << "no AVX2 (or KVSCOPE_REPACK=0): no packed K-quant kernels";
  IsaGuard g;
  std::mt19937 rng(22);
  check_packed(DType::Q4_K, 1, 515, 8, 2, rng);
  check_packed(DType::Q6_K, 1, 301, 11, 3, rng);
  check_packed(DType::Q5_K, 19, 130, 4, 2, rng);
  check_packed(DType::Q3_K, 9, 77, 7, 3, rng);
  check_packed(DType::Q2_K, 33, 40, 3, 2, rng);
  check_packed(DType::IQ4_XS, 7, 99, 5, 3, rng);
}

// A Q4_K_M / IQ4_XS layer's decode pass over packed matrices of different types (IQ4_XS attn_q,
// Q4_K attn_k, Q6_K attn_v) equals one matmul per matrix and the reference.
TEST(KQuant, PackedMultiOverMixedTypes) {
  if (!packed_available(DType::Q4_K)) GTEST_SKIP() << "no AVX2 (or KVSCOPE_REPACK=0): no packed K-quant kernels";
  IsaGuard g;
  std::mt19937 rng(23);
  const int64_t nb = 2, K = 256 * nb;
  const DType types[3] = {DType::IQ4_XS, DType::Q4_K, DType::Q6_K};
  const int64_t rows[3] = {45, 19, 33};
  std::vector<std::vector<uint8_t>> bufs(3);
  WeightRef ws[3];
  PackedStore store;
  for (int i = 0; i < 3; ++i) {
    bufs[i].resize(row_bytes(types[i], K) * static_cast<size_t>(rows[i]));
    if (types[i] == DType::IQ4_XS)
      random_iq4xs(bufs[i].data(), rows[i] * nb, rng);
    else
      random_blocks(types[i], bufs[i].data(), rows[i] * nb, rng);
    ws[i] = WeightRef{bufs[i].data(), types[i], rows[i], K};
    ASSERT_TRUE(pack_weight(ws[i], store));
  }
  auto x = normal_rows(K, rng);
  set_active_isa(Isa::AVX512);
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    std::vector<std::vector<float>> multi(3), single(3);
    float* ys[3];
    for (int i = 0; i < 3; ++i) {
      multi[i].assign(static_cast<size_t>(rows[i]), -7.0f);
      single[i].assign(static_cast<size_t>(rows[i]), -9.0f);
      ys[i] = multi[i].data();
      matmul(ws[i], x.data(), 1, single[i].data(), pool);
      std::vector<float> r(static_cast<size_t>(rows[i]));
      ref::matmul(ws[i], x.data(), 1, r.data());
      for (int64_t n = 0; n < rows[i]; ++n) EXPECT_NEAR(single[i][n], r[n], 1e-4f * (1.0f + std::fabs(r[n]))) << i << " " << n;
    }
    matmul_multi(ws, ys, 3, x.data(), 1, pool);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(multi[i], single[i]) << "matrix " << i << " threads " << threads;
  }
}

}  // namespace kquant_test
