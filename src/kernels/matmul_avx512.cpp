// AVX-512 matmul. Float weights (F32/F16/BF16, and K-quants dequantized to F32) use a register-
// blocked "dot" microkernel: a tile of RN weight rows x RM activation rows keeps RN*RM 16-lane
// accumulators over the whole K (both operands are K-contiguous, so nothing is packed), then
// reduces them with a transposing horizontal add. Weight rows are processed in L2-sized blocks so
// each block is streamed from memory once and reused for every activation tile.
// Q8_0/Q4_0 use VNNI (vpdpbusd) on pairs of 32-blocks: weights are made unsigned (q8 ^ 0x80, or the
// raw q4 nibbles) and the bias is removed by starting the accumulator at -bias * sum(x_block).
#include "kernels/avx512_common.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/internal.h"

namespace kvscope::kernels::detail::avx512 {

namespace {
using simd512::hsum4;

inline __mmask16 tail_mask(int64_t r) { return static_cast<__mmask16>((1u << r) - 1u); }

template <int RN>
inline void store_row(float* y, const __m512* acc, bool add = false) {
  int i = 0;
  for (; i + 4 <= RN; i += 4) {
    __m128 s = hsum4(acc[i], acc[i + 1], acc[i + 2], acc[i + 3]);
    if (add) s = _mm_add_ps(s, _mm_loadu_ps(y + i));
    _mm_storeu_ps(y + i, s);
  }
  for (; i < RN; ++i) y[i] = _mm512_reduce_add_ps(acc[i]) + (add ? y[i] : 0.0f);
}

struct LdF32 {
  static constexpr int kBytes = 4;
  static __m512 load(const uint8_t* p, int64_t k) { return _mm512_loadu_ps(p + 4 * k); }
  static __m512 loadm(const uint8_t* p, int64_t k, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p + 4 * k); }
};
struct LdF16 {
  static constexpr int kBytes = 2;
  static __m512 load(const uint8_t* p, int64_t k) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 * k)));
  }
  static __m512 loadm(const uint8_t* p, int64_t k, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p + 2 * k));
  }
};
struct LdBF16 {
  static constexpr int kBytes = 2;
  static __m512 widen(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }
  static __m512 load(const uint8_t* p, int64_t k) {
    return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 * k)));
  }
  static __m512 loadm(const uint8_t* p, int64_t k, __mmask16 m) { return widen(_mm256_maskz_loadu_epi16(m, p + 2 * k)); }
};

struct FArgs {
  const uint8_t* w;
  size_t ws;
  const float* x;
  int64_t ldx;
  int64_t K;
  float* y;
  int64_t ldy;
  bool add;  // accumulate into y (K is processed in chunks)
};

template <class L, int RN, int RM>
void tile_f(const FArgs& a) {
  __m512 acc[RM][RN];
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) acc[j][i] = _mm512_setzero_ps();
  const uint8_t* w = a.w;
  const float* x = a.x;
  const int64_t K = a.K;
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    __m512 xv[RM];
    for (int j = 0; j < RM; ++j) xv[j] = _mm512_loadu_ps(x + j * a.ldx + k);
    for (int i = 0; i < RN; ++i) {
      const __m512 wv = L::load(w + i * a.ws, k);
      for (int j = 0; j < RM; ++j) acc[j][i] = _mm512_fmadd_ps(wv, xv[j], acc[j][i]);
    }
  }
  if (k < K) {
    const __mmask16 m = tail_mask(K - k);
    __m512 xv[RM];
    for (int j = 0; j < RM; ++j) xv[j] = _mm512_maskz_loadu_ps(m, x + j * a.ldx + k);
    for (int i = 0; i < RN; ++i) {
      const __m512 wv = L::loadm(w + i * a.ws, k, m);
      for (int j = 0; j < RM; ++j) acc[j][i] = _mm512_fmadd_ps(wv, xv[j], acc[j][i]);
    }
  }
  for (int j = 0; j < RM; ++j) store_row<RN>(a.y + j * a.ldy, acc[j], a.add);
}

template <class L, int RM>
void disp_rn_f(int rn, const FArgs& a) {
  switch (rn) {
    case 1: return tile_f<L, 1, RM>(a);
    case 2: return tile_f<L, 2, RM>(a);
    case 3: return tile_f<L, 3, RM>(a);
    case 4: return tile_f<L, 4, RM>(a);
    default:
      if constexpr (RM == 1) {
        switch (rn) {
          case 5: return tile_f<L, 5, 1>(a);
          case 6: return tile_f<L, 6, 1>(a);
          case 7: return tile_f<L, 7, 1>(a);
          default: return tile_f<L, 8, 1>(a);
        }
      }
  }
}

template <class L>
void disp_f(int rn, int rm, const FArgs& a) {
  switch (rm) {
    case 1: return disp_rn_f<L, 1>(rn, a);
    case 2: return disp_rn_f<L, 2>(rn, a);
    case 3: return disp_rn_f<L, 3>(rn, a);
    case 4: return disp_rn_f<L, 4>(rn, a);
    case 5: return disp_rn_f<L, 5>(rn, a);
    default: return disp_rn_f<L, 6>(rn, a);
  }
}

// Rows [n0, n1) of y = W x^T for float weights at `w` (row stride ws bytes).
template <class L>
void rows_f(const uint8_t* w, size_t ws, const float* x, int64_t ldx, int64_t K, int64_t M, float* y,
            int64_t ldy, int64_t n0, int64_t n1) {
  FArgs a{nullptr, ws, nullptr, ldx, K, nullptr, ldy, false};
  if (M == 1) {
    a.x = x;
    for (int64_t n = n0; n < n1; n += 8) {
      const int rn = static_cast<int>(std::min<int64_t>(8, n1 - n));
      a.w = w + n * ws;
      a.y = y + n;
      disp_f<L>(rn, 1, a);
    }
    return;
  }
  // Tiles: RN weight rows x RM activation rows. K is split in chunks of KC so a tile's operands
  // (RM + RN rows of KC) stay in L1; weight rows go in blocks of NB that fit in L2.
  constexpr int RN = 4, RM = 6;
  const int64_t KC = K <= 1024 ? K : 512;
  const int64_t row_b = std::max<int64_t>(1, KC * L::kBytes);
  const int64_t NB = std::max<int64_t>(RN, (256 * 1024 / row_b) / RN * RN);
  for (int64_t nb = n0; nb < n1; nb += NB) {
    const int64_t ne = std::min(n1, nb + NB);
    for (int64_t k0 = 0; k0 < K; k0 += KC) {
      a.K = std::min(KC, K - k0);
      a.add = k0 > 0;
      for (int64_t m = 0; m < M; m += RM) {
        const int rm = static_cast<int>(std::min<int64_t>(RM, M - m));
        a.x = x + m * ldx + k0;
        for (int64_t n = nb; n < ne; n += RN) {
          const int rn = static_cast<int>(std::min<int64_t>(RN, ne - n));
          a.w = w + n * ws + k0 * L::kBytes;
          a.y = y + m * ldy + n;
          disp_f<L>(rn, rm, a);
        }
      }
    }
  }
}

// ---- Q8_0 / Q4_0 with VNNI --------------------------------------------------------------------

inline float h2f(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// Two fp16 scales -> [d0 x8, d1 x8]
inline __m512 scale_pair(float d0, float d1) {
  return _mm512_insertf32x8(_mm512_set1_ps(d0), _mm256_set1_ps(d1), 1);
}

template <bool Q4>
inline __m512i load_w_pair(const uint8_t* blk, bool two) {
  constexpr size_t BB = Q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  if constexpr (!Q4) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
    const __m256i hi = two ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + BB + 2)) : _mm256_set1_epi8(-128);
    return _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1), _mm512_set1_epi8(-128));
  } else {
    const __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
    const __m128i b1 = two ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + BB + 2)) : _mm_setzero_si128();
    const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(b0), b1, 1);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i lo = _mm256_and_si256(v, m4);
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
    const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);  // lo0 lo1 hi0 hi1
    return _mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(3, 1, 2, 0));             // lo0 hi0 lo1 hi1
  }
}

struct QArgs {
  const uint8_t* w;
  size_t ws;
  const int8_t* xq;
  int64_t ldq;
  const float* dx16;    // [RM][npair][16]: activation scales, d0 x8 | d1 x8 per block pair
  const int32_t* c16;   // [RM][npair][16]: -bias * sum(q) in lanes 0 and 8
  int64_t npair;
  int64_t nb;
  float* y;
  int64_t ldy;
};

template <bool Q4, int RN, int RM>
void tile_q(const QArgs& a) {
  constexpr size_t BB = Q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  __m512 acc[RM][RN];
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) acc[j][i] = _mm512_setzero_ps();
  for (int64_t b = 0, p = 0; b < a.nb; b += 2, ++p) {
    const bool two = b + 1 < a.nb;
    __m512i wv[RN];
    __m512 dw[RN];
    for (int i = 0; i < RN; ++i) {
      const uint8_t* blk = a.w + i * a.ws + b * BB;
      wv[i] = load_w_pair<Q4>(blk, two);
      dw[i] = scale_pair(h2f(blk), two ? h2f(blk + BB) : 0.0f);
    }
    const __mmask64 mq = two ? ~__mmask64{0} : __mmask64{0xffffffffu};
    for (int j = 0; j < RM; ++j) {
      const __m512i xv = _mm512_maskz_loadu_epi8(mq, a.xq + j * a.ldq + b * 32);
      const __m512 dx = _mm512_loadu_ps(a.dx16 + (j * a.npair + p) * 16);
      const __m512i c0 = _mm512_loadu_si512(a.c16 + (j * a.npair + p) * 16);
      for (int i = 0; i < RN; ++i) {
        const __m512i t = _mm512_dpbusd_epi32(c0, wv[i], xv);
        acc[j][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t), _mm512_mul_ps(dw[i], dx), acc[j][i]);
      }
    }
  }
  for (int j = 0; j < RM; ++j) store_row<RN>(a.y + j * a.ldy, acc[j]);
}

template <bool Q4, int RM>
void disp_rn_q(int rn, const QArgs& a) {
  switch (rn) {
    case 1: return tile_q<Q4, 1, RM>(a);
    case 2: return tile_q<Q4, 2, RM>(a);
    case 3: return tile_q<Q4, 3, RM>(a);
    default: return tile_q<Q4, 4, RM>(a);
  }
}

template <bool Q4>
void disp_q(int rn, int rm, const QArgs& a) {
  switch (rm) {
    case 1: return disp_rn_q<Q4, 1>(rn, a);
    case 2: return disp_rn_q<Q4, 2>(rn, a);
    case 3: return disp_rn_q<Q4, 3>(rn, a);
    default: return disp_rn_q<Q4, 4>(rn, a);
  }
}

template <bool Q4>
void rows_q(const MatArgs& m, int64_t n0, int64_t n1) {
  constexpr int RN = 4, RM = 4;
  constexpr int kBias = Q4 ? 8 : 128;
  const int64_t npair = (m.x.nb + 1) / 2;
  auto* dx16 = static_cast<float*>(scratch(5, static_cast<size_t>(RM * npair * 16) * sizeof(float)));
  auto* c16 = static_cast<int32_t*>(scratch(6, static_cast<size_t>(RM * npair * 16) * sizeof(int32_t)));
  QArgs a{nullptr, m.wstride, nullptr, m.x.ldq, dx16, c16, npair, m.x.nb, nullptr, m.ldy};
  const int64_t NB = std::max<int64_t>(RN, (192 * 1024 / static_cast<int64_t>(std::max<size_t>(1, m.wstride))) / RN * RN);
  for (int64_t nb = n0; nb < n1; nb += NB) {
    const int64_t ne = std::min(n1, nb + NB);
    for (int64_t j = 0; j < m.M; j += RM) {
      const int rm = static_cast<int>(std::min<int64_t>(RM, m.M - j));
      for (int r = 0; r < rm; ++r) {
        const float* d = m.x.d + (j + r) * m.x.nb;
        const int32_t* s = m.x.s + (j + r) * m.x.nb;
        for (int64_t p = 0; p < npair; ++p) {
          const int64_t b = 2 * p;
          const bool two = b + 1 < m.x.nb;
          float* o = dx16 + (r * npair + p) * 16;
          int32_t* c = c16 + (r * npair + p) * 16;
          for (int l = 0; l < 8; ++l) {
            o[l] = d[b];
            o[8 + l] = two ? d[b + 1] : 0.0f;
            c[l] = c[8 + l] = 0;
          }
          c[0] = -kBias * s[b];
          c[8] = two ? -kBias * s[b + 1] : 0;
        }
      }
      a.xq = m.x.q + j * m.x.ldq;
      for (int64_t n = nb; n < ne; n += RN) {
        const int rn = static_cast<int>(std::min<int64_t>(RN, ne - n));
        a.w = m.w + n * m.wstride;
        a.y = m.y + j * m.ldy + n;
        disp_q<Q4>(rn, rm, a);
      }
    }
  }
}

bool has_vnni() {
  static const bool v = __builtin_cpu_supports("avx512vnni");
  return v;
}

}  // namespace

void matmul_rows(const MatArgs& m, int64_t n0, int64_t n1) {
  switch (m.wt) {
    case DType::F32:
      if (m.packed) return packed_float_matmul_rows(m, n0, n1);
      return rows_f<LdF32>(m.w, m.wstride, m.x.f, m.x.ldf, m.K, m.M, m.y, m.ldy, n0, n1);
    case DType::F16:
      if (m.packed) return packed_float_matmul_rows(m, n0, n1);
      return rows_f<LdF16>(m.w, m.wstride, m.x.f, m.x.ldf, m.K, m.M, m.y, m.ldy, n0, n1);
    case DType::BF16:
      if (m.packed) return packed_float_matmul_rows(m, n0, n1);
      return rows_f<LdBF16>(m.w, m.wstride, m.x.f, m.x.ldf, m.K, m.M, m.y, m.ldy, n0, n1);
    case DType::Q8_0:
      if (m.packed) return packed_matmul_rows(m, n0, n1);
      if (!has_vnni()) return avx2::matmul_rows(m, n0, n1);
      return rows_q<false>(m, n0, n1);
    case DType::Q4_0:
      if (m.packed) return packed_matmul_rows(m, n0, n1);
      if (!has_vnni()) return avx2::matmul_rows(m, n0, n1);
      return rows_q<true>(m, n0, n1);
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
      if (m.packed) return kq_packed_rows(m, n0, n1);
      return kquant_rows(m, n0, n1);
    default: return scalar::matmul_rows(m, n0, n1);  // other types have their own rows (matmul.cpp)
  }
}

}  // namespace kvscope::kernels::detail::avx512
