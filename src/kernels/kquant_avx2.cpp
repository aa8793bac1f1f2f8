// AVX2 K-quant matmul (Q2_K..Q6_K weights, Q8_K activations) and the Q8_K activation quantizer.
// Per 32 elements: the unsigned codes are unpacked from the file's block in registers, multiplied
// with the int8 activations by maddubs (pairs -> int16; at most 63*127*2, no saturation), then by
// the 16-element scales with madd (-> int32). The offsets (mins, or the code bias of Q3_K/Q6_K)
// come from the activations' 16-element sums: one madd per block. A tile of RN weight rows x RM
// activation rows shares every unpacked code and scale vector.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/internal.h"
#include "kernels/avx2_common.h"
#include "kernels/kquant_simd.h"

namespace kvscope::kernels::detail::avx2 {

namespace {

using simd256::hsum;

inline int32_t hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

inline __m256i ld256(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline __m256i srl16(__m256i v, int n) { return _mm256_srl_epi16(v, _mm_cvtsi32_si128(n)); }

// Unsigned codes of elements 32k..32k+31 of a block.
template <DType T>
inline __m256i codes(const uint8_t* blk, int k) {
  const __m256i m4 = _mm256_set1_epi8(0x0f), m3 = _mm256_set1_epi8(3), m1 = _mm256_set1_epi8(1);
  if constexpr (T == DType::Q4_K) {
    return _mm256_and_si256(srl16(ld256(blk + 16 + 32 * (k / 2)), 4 * (k & 1)), m4);
  } else if constexpr (T == DType::Q5_K) {
    const __m256i lo = _mm256_and_si256(srl16(ld256(blk + 48 + 32 * (k / 2)), 4 * (k & 1)), m4);
    const __m256i hb = _mm256_and_si256(srl16(ld256(blk + 16), k), m1);
    return _mm256_or_si256(lo, _mm256_slli_epi16(hb, 4));
  } else if constexpr (T == DType::Q6_K) {
    const int h = k / 4, r = k % 4;
    const __m256i lo = _mm256_and_si256(srl16(ld256(blk + 64 * h + 32 * (r & 1)), 4 * (r >> 1)), m4);
    const __m256i hb = _mm256_and_si256(srl16(ld256(blk + 128 + 32 * h), 2 * r), m3);
    return _mm256_or_si256(lo, _mm256_slli_epi16(hb, 4));
  } else if constexpr (T == DType::Q2_K) {
    return _mm256_and_si256(srl16(ld256(blk + 16 + 32 * (k / 4)), 2 * (k % 4)), m3);
  } else {  // Q3_K
    const __m256i lo = _mm256_and_si256(srl16(ld256(blk + 32 + 32 * (k / 4)), 2 * (k % 4)), m3);
    const __m256i hb = _mm256_and_si256(srl16(ld256(blk), 4 * (k / 4) + k % 4), m1);
    return _mm256_or_si256(lo, _mm256_slli_epi16(hb, 2));
  }
}

// Scale vector for elements 32k..32k+31: int16 lanes 0-7 = s[2k], lanes 8-15 = s[2k+1].
inline __m256i scale_pair(__m256i s_lo2, __m256i s_hi2, int k) {
  const int r = k % 4;
  const __m256i ctrl = _mm256_setr_epi8(
      static_cast<char>(4 * r), static_cast<char>(4 * r + 1), static_cast<char>(4 * r), static_cast<char>(4 * r + 1),
      static_cast<char>(4 * r), static_cast<char>(4 * r + 1), static_cast<char>(4 * r), static_cast<char>(4 * r + 1),
      static_cast<char>(4 * r), static_cast<char>(4 * r + 1), static_cast<char>(4 * r), static_cast<char>(4 * r + 1),
      static_cast<char>(4 * r), static_cast<char>(4 * r + 1), static_cast<char>(4 * r), static_cast<char>(4 * r + 1),
      static_cast<char>(4 * r + 2), static_cast<char>(4 * r + 3), static_cast<char>(4 * r + 2), static_cast<char>(4 * r + 3),
      static_cast<char>(4 * r + 2), static_cast<char>(4 * r + 3), static_cast<char>(4 * r + 2), static_cast<char>(4 * r + 3),
      static_cast<char>(4 * r + 2), static_cast<char>(4 * r + 3), static_cast<char>(4 * r + 2), static_cast<char>(4 * r + 3),
      static_cast<char>(4 * r + 2), static_cast<char>(4 * r + 3), static_cast<char>(4 * r + 2), static_cast<char>(4 * r + 3));
  return _mm256_shuffle_epi8(k < 4 ? s_lo2 : s_hi2, ctrl);
}

struct Tile {
  const uint8_t* w;  // first weight row of the tile
  size_t ws;
  const int8_t* xq;  // first activation row of the tile
  int64_t ldq;
  const float* xd;
  const int16_t* xbs;
  int64_t nb;
  float* y;
  int64_t ldy;
};

template <DType T, int RN, int RM>
void tile(const Tile& a) {
  constexpr size_t BB = sizeof(BlockQ2_K) * (T == DType::Q2_K) + sizeof(BlockQ3_K) * (T == DType::Q3_K) +
                        sizeof(BlockQ4_K) * (T == DType::Q4_K) + sizeof(BlockQ5_K) * (T == DType::Q5_K) +
                        sizeof(BlockQ6_K) * (T == DType::Q6_K);
  __m256 acc[RN][RM];
  for (int i = 0; i < RN; ++i)
    for (int j = 0; j < RM; ++j) acc[i][j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < a.nb; ++b) {
    KqScales sc[RN];
    __m256i slo[RN], shi[RN];
    __m256i isum[RN][RM];
    for (int i = 0; i < RN; ++i) {
      sc[i] = kq_scales<T>(a.w + i * a.ws + b * BB);
      slo[i] = _mm256_permute2x128_si256(sc[i].s, sc[i].s, 0x00);
      shi[i] = _mm256_permute2x128_si256(sc[i].s, sc[i].s, 0x11);
      for (int j = 0; j < RM; ++j) isum[i][j] = _mm256_setzero_si256();
    }
    // Unrolled so every shift count, mask and permutation index is a constant.
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      __m256i xv[RM];
      for (int j = 0; j < RM; ++j)
        xv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.xq + j * a.ldq + b * 256 + 32 * k));
      for (int i = 0; i < RN; ++i) {
        const __m256i u = codes<T>(a.w + i * a.ws + b * BB, k);
        const __m256i s = scale_pair(slo[i], shi[i], k);
        for (int j = 0; j < RM; ++j)
          isum[i][j] = _mm256_add_epi32(isum[i][j], _mm256_madd_epi16(_mm256_maddubs_epi16(u, xv[j]), s));
      }
    }
    for (int j = 0; j < RM; ++j) {
      const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.xbs + j * a.nb * 16 + b * 16));
      const float dy = a.xd[j * a.nb + b];
      for (int i = 0; i < RN; ++i) {
        const __m256i ms = _mm256_madd_epi16(sc[i].m, bs);
        if constexpr (kq_sym(T)) {
          acc[i][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(isum[i][j], ms)), _mm256_set1_ps(dy * sc[i].D), acc[i][j]);
        } else {
          acc[i][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[i][j]), _mm256_set1_ps(dy * sc[i].D), acc[i][j]);
          acc[i][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(ms), _mm256_set1_ps(-(dy * sc[i].Dmin)), acc[i][j]);
        }
      }
    }
  }
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) a.y[j * a.ldy + i] = hsum(acc[i][j]);
}

template <DType T>
void rows(const MatArgs& m, int64_t n0, int64_t n1) {
  Tile t{nullptr, m.wstride, nullptr, m.x.ldq, nullptr, nullptr, m.x.nb, nullptr, m.ldy};
  auto at = [&](int64_t n, int64_t j) {
    t.w = m.w + n * m.wstride;
    t.xq = m.x.q + j * m.x.ldq;
    t.xd = m.x.d + j * m.x.nb;
    t.xbs = m.x.bs + j * m.x.nb * 16;
    t.y = m.y + j * m.ldy + n;
  };
  if (m.M == 1) {
    int64_t n = n0;
    for (; n + 2 <= n1; n += 2) {
      at(n, 0);
      tile<T, 2, 1>(t);
    }
    if (n < n1) {
      at(n, 0);
      tile<T, 1, 1>(t);
    }
    return;
  }
  // Prefill: weight rows in blocks that stay in L2 while every RM-row activation tile passes.
  constexpr int RM = 4;
  const int64_t NB = std::max<int64_t>(1, static_cast<int64_t>((192 * 1024) / std::max<size_t>(1, m.wstride)));
  for (int64_t nb = n0; nb < n1; nb += NB) {
    const int64_t ne = std::min(n1, nb + NB);
    for (int64_t j = 0; j < m.M; j += RM) {
      const int rm = static_cast<int>(std::min<int64_t>(RM, m.M - j));
      for (int64_t n = nb; n < ne; ++n) {
        at(n, j);
        switch (rm) {
          case 1: tile<T, 1, 1>(t); break;
          case 2: tile<T, 1, 2>(t); break;
          case 3: tile<T, 1, 3>(t); break;
          default: tile<T, 1, 4>(t); break;
        }
      }
    }
  }
}

}  // namespace

void kquant_rows(const MatArgs& m, int64_t n0, int64_t n1) {
  if (m.packed) return kq_packed_rows(m, n0, n1);
  switch (m.wt) {
    case DType::Q2_K: return rows<DType::Q2_K>(m, n0, n1);
    case DType::Q3_K: return rows<DType::Q3_K>(m, n0, n1);
    case DType::Q4_K: return rows<DType::Q4_K>(m, n0, n1);
    case DType::Q5_K: return rows<DType::Q5_K>(m, n0, n1);
    default: return rows<DType::Q6_K>(m, n0, n1);
  }
}

void quant_q8k(const float* x, int8_t* q, float* d, int16_t* bsums, int64_t K) {
  const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256i cap = _mm256_set1_epi32(127);
  for (int64_t b = 0; b < K / 256; ++b) {
    const float* xb = x + b * 256;
    __m256 mx = _mm256_setzero_ps();
    for (int i = 0; i < 256; i += 8) mx = _mm256_max_ps(mx, _mm256_and_ps(_mm256_loadu_ps(xb + i), absmask));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax = _mm_cvtss_f32(m4);
    int8_t* qb = q + b * 256;
    int16_t* sb = bsums + b * 16;
    if (amax == 0.0f) {
      d[b] = 0.0f;
      std::fill(qb, qb + 256, int8_t{0});
      std::fill(sb, sb + 16, int16_t{0});
      continue;
    }
    // The first element of largest magnitude, with its sign, maps to -127.
    float vmax = 0.0f;
    for (int i = 0; i < 256; ++i)
      if (std::fabs(xb[i]) == amax) {
        vmax = xb[i];
        break;
      }
    const float iscale = -127.0f / vmax;
    const __m256 vs = _mm256_set1_ps(iscale);
    for (int c = 0; c < 8; ++c) {
      const float* xc = xb + 32 * c;
      __m256i iv[4];
      for (int r = 0; r < 4; ++r) iv[r] = _mm256_min_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(xc + 8 * r), vs)), cap);
      sb[2 * c] = static_cast<int16_t>(hsum_i32(_mm256_add_epi32(iv[0], iv[1])));
      sb[2 * c + 1] = static_cast<int16_t>(hsum_i32(_mm256_add_epi32(iv[2], iv[3])));
      __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(iv[0], iv[1]), _mm256_packs_epi32(iv[2], iv[3]));
      p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(qb + 32 * c), p);
    }
    d[b] = 1.0f / iscale;
  }
}

}  // namespace kvscope::kernels::detail::avx2
