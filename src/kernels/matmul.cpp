// matmul driver: converts activations once per call, then splits the weight rows over the pool.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "kernels/internal.h"
#include "kernels/kernels.h"
#include "kernels/legacy_quant.h"
#include "kernels/kquant.h"
#include "kernels/matmul_vecs.h"
#include "util/error.h"

namespace kvscope::kernels {

DType activation_type(DType weight_type) {
  switch (weight_type) {
    case DType::F16: return DType::F16;
    case DType::BF16: return DType::BF16;
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::IQ4_NL: return DType::Q8_0;
    case DType::Q4_1:
    case DType::Q5_1: return DType::Q8_1;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::IQ4_XS: return DType::Q8_K;  // as llama.cpp's vec_dot_type for K-quants and IQ4_XS
    default: return DType::F32;
  }
}

namespace detail {

void* scratch(int slot, size_t bytes) {
  struct Buf {
    void* p = nullptr;
    size_t n = 0;
    ~Buf() { std::free(p); }
  };
  thread_local Buf bufs[8];
  Buf& b = bufs[slot];
  if (b.n < bytes) {
    std::free(b.p);
    const size_t n = (bytes + 4095) & ~size_t{4095};
    b.p = std::aligned_alloc(64, n);
    if (!b.p) throw std::bad_alloc();
    b.n = n;
  }
  return b.p;
}

namespace scalar {
void round_f16(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fp16_to_fp32(fp32_to_fp16(x[i]));
}
void round_bf16(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = bf16_to_fp32(fp32_to_bf16(x[i]));
}
void quant_q8(const float* x, int8_t* q, float* d, int32_t* s, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = x + b * 32;
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(xb[j]));
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    d[b] = fp16_to_fp32(fp32_to_fp16(amax / 127.0f));
    int32_t sum = 0;
    for (int j = 0; j < 32; ++j) {
      const int v = static_cast<int>(std::nearbyintf(xb[j] * id));
      q[b * 32 + j] = static_cast<int8_t>(v);
      sum += v;
    }
    s[b] = sum;
  }
}
}  // namespace scalar

namespace {

struct Conv {
  void (*round_f16)(const float*, float*, int64_t);
  void (*round_bf16)(const float*, float*, int64_t);
  void (*quant_q8)(const float*, int8_t*, float*, int32_t*, int64_t);
  void (*quant_q8k)(const float*, int8_t*, float*, int16_t*, int64_t);
};

Conv conv_for(Isa isa) {
  if (isa == Isa::Scalar) return {scalar::round_f16, scalar::round_bf16, scalar::quant_q8, kquant::quantize_act_q8k};
  return {avx2::round_f16, avx2::round_bf16, avx2::quant_q8, avx2::quant_q8k};
}

RowsFn rows_for(Isa isa, DType wt) {
  if (legacy::handles(wt)) {
    switch (isa) {
      case Isa::AVX512: return legacy::avx512::matmul_rows;
      case Isa::AVX2: return legacy::avx2::matmul_rows;
      default: return legacy::scalar::matmul_rows;
    }
  }
  switch (isa) {
    case Isa::AVX512: return avx512::matmul_rows;
    case Isa::AVX2: return avx2::matmul_rows;
    default: return scalar::matmul_rows;
  }
}

// Fills a.x from x (M x K) for weight type a.wt. Rows are converted in parallel when `pool` is
// given and the activations are large.
void prepare(MatArgs& a, const float* x, const Conv& cv, bool simd, ThreadPool* pool) {
  const int64_t M = a.M, K = a.K;
  const DType at = activation_type(a.wt);
  if (at == DType::F32) {
    a.x.f = x;
    a.x.ldf = K;
    return;
  }
  auto over_rows = [&](auto&& fn) {
    if (pool && pool->size() > 1 && M * K >= (1 << 16)) {
      pool->parallel_for(M, [&](int64_t b, int64_t e) {
        for (int64_t m = b; m < e; ++m) fn(m);
      });
    } else {
      for (int64_t m = 0; m < M; ++m) fn(m);
    }
  };
  if (at == DType::F16 || at == DType::BF16) {
    const int64_t ld = (K + 15) & ~int64_t{15};
    auto* f = static_cast<float*>(scratch(0, static_cast<size_t>(M * ld) * sizeof(float)));
    auto fn = at == DType::F16 ? cv.round_f16 : cv.round_bf16;
    over_rows([&](int64_t m) { fn(x + m * K, f + m * ld, K); });
    a.x.f = f;
    a.x.ldf = ld;
    return;
  }
  if (at == DType::Q8_K) {
    const int64_t nb = K / 256;
    const int64_t ldq = (K + 63) & ~int64_t{63};
    auto* q = static_cast<int8_t*>(scratch(1, static_cast<size_t>(M * ldq)));
    auto* d = static_cast<float*>(scratch(2, static_cast<size_t>(M * nb) * sizeof(float) + 64));
    auto* bs = static_cast<int16_t*>(scratch(3, static_cast<size_t>(M * nb * 16) * sizeof(int16_t) + 64));
    over_rows([&](int64_t m) { cv.quant_q8k(x + m * K, q + m * ldq, d + m * nb, bs + m * nb * 16, K); });
    a.x.q = q;
    a.x.ldq = ldq;
    a.x.d = d;
    a.x.bs = bs;
    a.x.nb = nb;
    return;
  }
  // Q8_0 (and Q8_1: the same plus the scaled block sums)
  const int64_t nb = K / 32;
  const int64_t ldq = (K + 63) & ~int64_t{63};
  auto* q = static_cast<int8_t*>(scratch(1, static_cast<size_t>(M * ldq)));
  auto* d = static_cast<float*>(scratch(2, static_cast<size_t>(M * nb) * sizeof(float) + 64));
  auto* s = static_cast<int32_t*>(scratch(3, static_cast<size_t>(M * nb) * sizeof(int32_t) + 64));
  if (at == DType::Q8_1) {
    auto* sd = static_cast<float*>(scratch(5, static_cast<size_t>(M * nb) * sizeof(float) + 64));
    over_rows([&](int64_t m) {
      legacy::quant_q8_1(x + m * K, q + m * ldq, d + m * nb, s + m * nb, sd + m * nb, nb, simd);
    });
    a.x.sd = sd;
  } else {
    over_rows([&](int64_t m) { cv.quant_q8(x + m * K, q + m * ldq, d + m * nb, s + m * nb, nb); });
  }
  a.x.q = q;
  a.x.ldq = ldq;
  a.x.d = d;
  a.x.s = s;
  a.x.nb = nb;
}

MatArgs make_args(const WeightRef& w, int64_t M, float* y) {
  if (!w.data && w.rows * w.cols != 0) throw std::invalid_argument("matmul: null weight data");
  if (M < 0 || w.rows < 0 || w.cols < 0) throw std::invalid_argument("matmul: negative shape");
  MatArgs a;
  a.w = static_cast<const uint8_t*>(w.data);
  a.wt = w.type;
  a.K = w.cols;
  a.M = M;
  a.wstride = row_bytes(w.type, w.cols);
  a.y = y;
  a.ldy = w.rows;
  a.packed = static_cast<const uint8_t*>(w.packed);
  return a;
}

}  // namespace
}  // namespace detail

void matmul(const WeightRef& w, const float* x, int64_t M, float* y, ThreadPool& pool) {
  detail::MatArgs a = detail::make_args(w, M, y);
  const int64_t N = w.rows;
  if (M == 0 || N == 0) return;
  if (w.cols == 0) {
    std::fill(y, y + M * N, 0.0f);
    return;
  }
  const Isa isa = active_isa();
  detail::prepare(a, x, detail::conv_for(isa), isa != Isa::Scalar, &pool);
  const detail::RowsFn fn = detail::rows_for(isa, w.type);
  const int nth = pool.size();
  // Small products are not worth waking workers for.
  const double work = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(w.cols);
  if (nth == 1 || N < 2 || work < 64.0 * 1024) {
    fn(a, 0, N);
    return;
  }
  // Split rows in multiples of 16 so SIMD tiles stay whole (except at the very end).
  const int64_t units = (N + 15) / 16;
  pool.run([&](int ith, int nt) {
    const int64_t b = std::min(N, units * ith / nt * 16);
    const int64_t e = std::min(N, units * (ith + 1) / nt * 16);
    if (b < e) fn(a, b, e);
  });
}

void matmul_multi(const WeightRef* ws, float* const* ys, int n_mats, const float* x, int64_t M, ThreadPool& pool) {
  bool same = n_mats > 0;
  // Matrices of different weight types share the pass when their activations convert alike (a
  // Q4_K_M file's Q4_K attn_q/attn_k and Q6_K attn_v all take Q8_K activations).
  for (int i = 1; i < n_mats; ++i)
    same &= activation_type(ws[i].type) == activation_type(ws[0].type) && ws[i].cols == ws[0].cols;
  if (!same || M != 1 || pool.size() == 1) {
    for (int i = 0; i < n_mats; ++i) matmul(ws[i], x, M, ys[i], pool);
    return;
  }
  // Decode: one activation conversion and one wake-up of the pool for all matrices; each thread
  // takes its share of every matrix's rows.
  const Isa isa = active_isa();
  detail::MatArgs a[8];
  if (n_mats > 8) throw std::invalid_argument("matmul_multi: at most 8 matrices");
  for (int i = 0; i < n_mats; ++i) a[i] = detail::make_args(ws[i], M, ys[i]);
  detail::prepare(a[0], x, detail::conv_for(isa), isa != Isa::Scalar, &pool);
  // Each matrix takes its own type's rows (an IQ4_XS attn_q may share the pass with a Q6_K attn_v).
  detail::RowsFn fns[8];
  for (int i = 0; i < n_mats; ++i) {
    a[i].x = a[0].x;
    fns[i] = detail::rows_for(isa, ws[i].type);
  }
  pool.run([&](int ith, int nt) {
    for (int i = 0; i < n_mats; ++i) {
      const int64_t N = ws[i].rows, units = (N + 15) / 16;
      const int64_t b = std::min(N, units * ith / nt * 16);
      const int64_t e = std::min(N, units * (ith + 1) / nt * 16);
      if (b < e) fns[i](a[i], b, e);
    }
  });
}

void matmul_vecs(const WeightRef* ws, const float* const* xs, float* const* ys, int n_mats, ThreadPool& pool) {
  if (n_mats <= 0) return;
  bool same = true;
  for (int i = 1; i < n_mats; ++i) same &= ws[i].type == ws[0].type && ws[i].cols == ws[0].cols;
  const DType at = activation_type(ws[0].type);
  const bool known = at == DType::F32 || at == DType::F16 || at == DType::BF16 || at == DType::Q8_0;
  if (!same || !known || pool.size() == 1 || ws[0].cols == 0) {
    for (int i = 0; i < n_mats; ++i) matmul(ws[i], xs[i], 1, ys[i], pool);
    return;
  }
  // The inputs as the rows of one matrix, converted once; matrix i reads row i of the result.
  const int64_t K = ws[0].cols;
  thread_local std::vector<float> stacked;
  stacked.resize(static_cast<size_t>(n_mats) * K);
  for (int i = 0; i < n_mats; ++i) std::memcpy(stacked.data() + i * K, xs[i], sizeof(float) * K);
  const Isa isa = active_isa();
  detail::MatArgs all = detail::make_args(ws[0], n_mats, nullptr);
  detail::prepare(all, stacked.data(), detail::conv_for(isa), isa != Isa::Scalar, &pool);
  std::vector<detail::MatArgs> a(n_mats);
  for (int i = 0; i < n_mats; ++i) {
    a[i] = detail::make_args(ws[i], 1, ys[i]);
    a[i].x = all.x;
    if (all.x.f) a[i].x.f = all.x.f + i * all.x.ldf;
    if (all.x.q) {
      a[i].x.q = all.x.q + i * all.x.ldq;
      a[i].x.d = all.x.d + i * all.x.nb;
      a[i].x.s = all.x.s + i * all.x.nb;
    }
  }
  const detail::RowsFn fn = detail::rows_for(isa, ws[0].type);
  pool.run([&](int ith, int nt) {
    for (int i = 0; i < n_mats; ++i) {
      const int64_t N = ws[i].rows, units = (N + 15) / 16;
      const int64_t b = std::min(N, units * ith / nt * 16);
      const int64_t e = std::min(N, units * (ith + 1) / nt * 16);
      if (b < e) fn(a[i], b, e);
    }
  });
}

namespace ref {
void matmul(const WeightRef& w, const float* x, int64_t M, float* y) {
  detail::MatArgs a = detail::make_args(w, M, y);
  if (M == 0 || w.rows == 0) return;
  if (w.cols == 0) {
    std::fill(y, y + M * w.rows, 0.0f);
    return;
  }
  detail::prepare(a, x, detail::conv_for(Isa::Scalar), false, nullptr);
  detail::rows_for(Isa::Scalar, w.type)(a, 0, w.rows);
}
}  // namespace ref

}  // namespace kvscope::kernels
