// AVX2+FMA+F16C matmul and the activation converters (the converters are shared with AVX-512).
// Float weights: 4 weight rows x 3 activation rows of 8-lane accumulators over the whole K.
// Q8_0: GGML's sign trick (maddubs(|w|, sign(x, w))). Q4_0: maddubs(q, x) on the unsigned nibbles
// minus 8 * sum(x_block).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/internal.h"
#include "kernels/avx2_common.h"

namespace kvscope::kernels::detail::avx2 {

namespace {

using simd256::hsum;

inline __m128 hsum4(__m256 a, __m256 b, __m256 c, __m256 d) {
  const __m256 ab = _mm256_hadd_ps(a, b);
  const __m256 cd = _mm256_hadd_ps(c, d);
  const __m256 abcd = _mm256_hadd_ps(ab, cd);
  return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

template <int RN>
inline void store_row(float* y, const __m256* acc) {
  if constexpr (RN == 4) {
    _mm_storeu_ps(y, hsum4(acc[0], acc[1], acc[2], acc[3]));
  } else {
    for (int i = 0; i < RN; ++i) y[i] = hsum(acc[i]);
  }
}

struct LdF32 {
  static constexpr int kBytes = 4;
  static __m256 load(const uint8_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
};
struct LdF16 {
  static constexpr int kBytes = 2;
  static __m256 load(const uint8_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
};
struct LdBF16 {
  static constexpr int kBytes = 2;
  static __m256 load(const uint8_t* p) {
    const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
  }
};

struct FArgs {
  const uint8_t* w;
  size_t ws;
  const float* x;
  int64_t ldx;
  int64_t K;
  float* y;
  int64_t ldy;
};

template <class L, int RN, int RM>
void tile_f(const FArgs& a) {
  constexpr int EB = L::kBytes;
  __m256 acc[RM][RN];
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) acc[j][i] = _mm256_setzero_ps();
  const int64_t K = a.K;
  int64_t k = 0;
  for (; k + 8 <= K; k += 8) {
    __m256 xv[RM];
    for (int j = 0; j < RM; ++j) xv[j] = _mm256_loadu_ps(a.x + j * a.ldx + k);
    for (int i = 0; i < RN; ++i) {
      const __m256 wv = L::load(a.w + i * a.ws + k * EB);
      for (int j = 0; j < RM; ++j) acc[j][i] = _mm256_fmadd_ps(wv, xv[j], acc[j][i]);
    }
  }
  if (k < K) {
    // Tail: copy into zero-padded buffers (no partial loads past the row).
    const int64_t r = K - k;
    alignas(32) uint8_t wb[32] = {};
    alignas(32) float xb[8] = {};
    __m256 xv[RM];
    for (int j = 0; j < RM; ++j) {
      std::memcpy(xb, a.x + j * a.ldx + k, static_cast<size_t>(r) * 4);
      xv[j] = _mm256_load_ps(xb);
    }
    for (int i = 0; i < RN; ++i) {
      std::memcpy(wb, a.w + i * a.ws + k * EB, static_cast<size_t>(r) * EB);
      const __m256 wv = L::load(wb);
      for (int j = 0; j < RM; ++j) acc[j][i] = _mm256_fmadd_ps(wv, xv[j], acc[j][i]);
    }
  }
  for (int j = 0; j < RM; ++j) store_row<RN>(a.y + j * a.ldy, acc[j]);
}

template <class L, int RM>
void disp_rn_f(int rn, const FArgs& a) {
  switch (rn) {
    case 1: return tile_f<L, 1, RM>(a);
    case 2: return tile_f<L, 2, RM>(a);
    case 3: return tile_f<L, 3, RM>(a);
    default: return tile_f<L, 4, RM>(a);
  }
}

template <class L>
void rows_f(const uint8_t* w, size_t ws, const float* x, int64_t ldx, int64_t K, int64_t M, float* y,
            int64_t ldy, int64_t n0, int64_t n1) {
  constexpr int RN = 4, RM = 3;
  FArgs a{nullptr, ws, nullptr, ldx, K, nullptr, ldy};
  const int64_t row_b = std::max<int64_t>(1, K * L::kBytes);
  const int64_t NB = std::max<int64_t>(RN, (192 * 1024 / row_b) / RN * RN);
  for (int64_t nb = n0; nb < n1; nb += NB) {
    const int64_t ne = std::min(n1, nb + NB);
    for (int64_t m = 0; m < M; m += RM) {
      const int rm = static_cast<int>(std::min<int64_t>(RM, M - m));
      a.x = x + m * ldx;
      for (int64_t n = nb; n < ne; n += RN) {
        const int rn = static_cast<int>(std::min<int64_t>(RN, ne - n));
        a.w = w + n * ws;
        a.y = y + m * ldy + n;
        switch (rm) {
          case 1: disp_rn_f<L, 1>(rn, a); break;
          case 2: disp_rn_f<L, 2>(rn, a); break;
          default: disp_rn_f<L, 3>(rn, a); break;
        }
      }
    }
  }
}

inline float h2f(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

struct QArgs {
  const uint8_t* w;
  size_t ws;
  const int8_t* xq;
  int64_t ldq;
  const float* xd;
  const int32_t* xs;
  int64_t nb;
  float* y;
  int64_t ldy;
};

template <bool Q4, int RN, int RM>
void tile_q(const QArgs& a) {
  constexpr size_t BB = Q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  __m256 acc[RM][RN];
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) acc[j][i] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < a.nb; ++b) {
    __m256i wv[RN];
    float dw[RN];
    for (int i = 0; i < RN; ++i) {
      const uint8_t* blk = a.w + i * a.ws + b * BB;
      dw[i] = h2f(blk);
      if constexpr (Q4) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
        const __m128i m4 = _mm_set1_epi8(0x0F);
        wv[i] = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v, 4), m4), _mm_and_si128(v, m4));
      } else {
        wv[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
      }
    }
    for (int j = 0; j < RM; ++j) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.xq + j * a.ldq + b * 32));
      const float dx = a.xd[j * a.nb + b];
      __m256i corr = _mm256_setzero_si256();
      if constexpr (Q4) corr = _mm256_castsi128_si256(_mm_cvtsi32_si128(-8 * a.xs[j * a.nb + b]));
      for (int i = 0; i < RN; ++i) {
        __m256i p;
        if constexpr (Q4) {
          p = _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(wv[i], xv), ones), corr);
        } else {
          const __m256i aw = _mm256_sign_epi8(wv[i], wv[i]);
          const __m256i sx = _mm256_sign_epi8(xv, wv[i]);
          p = _mm256_madd_epi16(_mm256_maddubs_epi16(aw, sx), ones);
        }
        acc[j][i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(dw[i] * dx), acc[j][i]);
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
void rows_q(const MatArgs& m, int64_t n0, int64_t n1) {
  constexpr int RN = 4, RM = 2;
  QArgs a{nullptr, m.wstride, nullptr, m.x.ldq, nullptr, nullptr, m.x.nb, nullptr, m.ldy};
  const int64_t NB = std::max<int64_t>(RN, (192 * 1024 / static_cast<int64_t>(std::max<size_t>(1, m.wstride))) / RN * RN);
  for (int64_t nb = n0; nb < n1; nb += NB) {
    const int64_t ne = std::min(n1, nb + NB);
    for (int64_t j = 0; j < m.M; j += RM) {
      const int rm = static_cast<int>(std::min<int64_t>(RM, m.M - j));
      a.xq = m.x.q + j * m.x.ldq;
      a.xd = m.x.d + j * m.x.nb;
      a.xs = m.x.s + j * m.x.nb;
      for (int64_t n = nb; n < ne; n += RN) {
        const int rn = static_cast<int>(std::min<int64_t>(RN, ne - n));
        a.w = m.w + n * m.wstride;
        a.y = m.y + j * m.ldy + n;
        if (rm == 1)
          disp_rn_q<Q4, 1>(rn, a);
        else
          disp_rn_q<Q4, 2>(rn, a);
      }
    }
  }
}

}  // namespace

void matmul_rows(const MatArgs& m, int64_t n0, int64_t n1) {
  switch (m.wt) {
    case DType::F32: return rows_f<LdF32>(m.w, m.wstride, m.x.f, m.x.ldf, m.K, m.M, m.y, m.ldy, n0, n1);
    case DType::F16: return rows_f<LdF16>(m.w, m.wstride, m.x.f, m.x.ldf, m.K, m.M, m.y, m.ldy, n0, n1);
    case DType::BF16: return rows_f<LdBF16>(m.w, m.wstride, m.x.f, m.x.ldf, m.K, m.M, m.y, m.ldy, n0, n1);
    case DType::Q8_0: return m.packed ? packed_matmul_rows(m, n0, n1) : rows_q<false>(m, n0, n1);
    case DType::Q4_0: return m.packed ? packed_matmul_rows(m, n0, n1) : rows_q<true>(m, n0, n1);
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return kquant_rows(m, n0, n1);
    default: return scalar::matmul_rows(m, n0, n1);  // other types have their own rows (matmul.cpp)
  }
}

// ---- activation converters --------------------------------------------------------------------

void round_f16(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT)));
  for (; i < n; ++i) y[i] = fp16_to_fp32(fp32_to_fp16(x[i]));
}

void round_bf16(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1);
  const __m256i himask = _mm256_set1_epi32(static_cast<int>(0xffff0000u)), qnan = _mm256_set1_epi32(0x400000);
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256i u = _mm256_castps_si256(v);
    const __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(bias, _mm256_and_si256(_mm256_srli_epi32(u, 16), one)));
    const __m256i nan = _mm256_or_si256(u, qnan);
    const __m256 isnan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    const __m256 res = _mm256_blendv_ps(_mm256_castsi256_ps(r), _mm256_castsi256_ps(nan), isnan);
    _mm256_storeu_ps(y + i, _mm256_and_ps(res, _mm256_castsi256_ps(himask)));
  }
  for (; i < n; ++i) y[i] = bf16_to_fp32(fp32_to_bf16(x[i]));
}

void quant_q8(const float* x, int8_t* q, float* d, int32_t* s, int64_t nb) {
  const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = x + b * 32;
    __m256 v0 = _mm256_loadu_ps(xb), v1 = _mm256_loadu_ps(xb + 8), v2 = _mm256_loadu_ps(xb + 16),
           v3 = _mm256_loadu_ps(xb + 24);
    __m256 mx = _mm256_max_ps(_mm256_max_ps(_mm256_and_ps(v0, absmask), _mm256_and_ps(v1, absmask)),
                              _mm256_max_ps(_mm256_and_ps(v2, absmask), _mm256_and_ps(v3, absmask)));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax = _mm_cvtss_f32(m4);
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    d[b] = fp16_to_fp32(fp32_to_fp16(amax / 127.0f));
    const __m256 vid = _mm256_set1_ps(id);
    const __m256i i0 = _mm256_cvtps_epi32(_mm256_mul_ps(v0, vid)), i1 = _mm256_cvtps_epi32(_mm256_mul_ps(v1, vid)),
                  i2 = _mm256_cvtps_epi32(_mm256_mul_ps(v2, vid)), i3 = _mm256_cvtps_epi32(_mm256_mul_ps(v3, vid));
    const __m256i sum = _mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3));
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(1, 0, 3, 2)));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(2, 3, 0, 1)));
    s[b] = _mm_cvtsi128_si32(s4);
    const __m256i p01 = _mm256_packs_epi32(i0, i1), p23 = _mm256_packs_epi32(i2, i3);
    __m256i p = _mm256_packs_epi16(p01, p23);
    p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + b * 32), p);
  }
}

}  // namespace kvscope::kernels::detail::avx2
