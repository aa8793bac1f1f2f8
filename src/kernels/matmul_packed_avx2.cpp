// AVX2 matmul over packed 32-block weights (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL; layout in
// internal.h), for CPUs without AVX-512 VNNI. Each 64-byte vector of the layout is two halves of 8
// rows (bytes 32h.. = rows 8h..8h+7), so a half is one ymm: maddubs + madd with ones gives the
// 4-element dot of each of its 8 rows (what vpdpbusd gives with VNNI), with no horizontal sums.
// Unsigned codes below 64 (Q4_0, Q4_1, Q5_0, Q5_1) go straight into maddubs (a pair sums to at most
// 2 * 63 * 128, no saturation) and their offsets start each block's dot at -bias * sum(x_q); the
// signed ones (Q8_0, IQ4_NL's codebook) use maddubs(|w|, sign(x, w)) (|x| <= 127 from quant_q8).
// The block's float terms are summed in block order, as the AVX-512 kernel and the reference do.
#include "kernels/avx2_common.h"

#include <algorithm>
#include <cstring>

#include "kernels/internal.h"

namespace kvscope::kernels::detail::avx2 {

namespace {

inline __m256i bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}
inline __m256i dot_u(__m256i acc, __m256i w, __m256i x) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(w, x), _mm256_set1_epi16(1)));
}
inline __m256i dot_s(__m256i acc, __m256i w, __m256i x) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w)), _mm256_set1_epi16(1)));
}

constexpr int bias_of(DType t) {
  switch (t) {
    case DType::Q4_0: return 8;
    case DType::Q5_0: return 16;
    default: return 0;  // Q8_0, IQ4_NL: signed dots; Q4_1, Q5_1: the min term instead
  }
}

// Rows 8h + [r0, r1) of one 16-row group times RM activation rows from m0.
template <DType T, int RM>
void half_tile(const uint8_t* gq, int h, int64_t nb, const Act& x, int64_t m0, float* y, int64_t ldy, int r0, int r1) {
  constexpr int kBias = bias_of(T);
  constexpr bool kQ5 = T == DType::Q5_0 || T == DType::Q5_1, kMin = T == DType::Q4_1 || T == DType::Q5_1, kLut = T == DType::IQ4_NL;
  const int8_t* xq[RM];
  const float* xd[RM];
  [[maybe_unused]] const int32_t* xs[RM];
  [[maybe_unused]] const float* xsd[RM];
  for (int j = 0; j < RM; ++j) {
    xq[j] = x.q + (m0 + j) * x.ldq;
    xd[j] = x.d + (m0 + j) * x.nb;
    if constexpr (kBias != 0) xs[j] = x.s + (m0 + j) * x.nb;
    if constexpr (kMin) xsd[j] = x.sd + (m0 + j) * x.nb;
  }
  [[maybe_unused]] __m256i lut = _mm256_setzero_si256();
  if constexpr (kLut) lut = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4Values)));
  __m256 acc[RM];
  for (int j = 0; j < RM; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* q = gq + packed_quant_offset(T, b) + 32 * h;
    __m256i t[RM];
    for (int j = 0; j < RM; ++j) {
      if constexpr (kBias != 0)
        t[j] = _mm256_set1_epi32(-kBias * xs[j][b]);
      else
        t[j] = _mm256_setzero_si256();
    }
    if constexpr (T == DType::Q8_0) {
      for (int s = 0; s < 8; ++s) {
        const __m256i w = _mm256_xor_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(q + 64 * s)), _mm256_set1_epi8(static_cast<char>(0x80)));
        for (int j = 0; j < RM; ++j) t[j] = dot_s(t[j], w, bcast4(xq[j] + b * 32 + 4 * s));
      }
    } else {
      const __m256i m4 = _mm256_set1_epi8(0x0F);
      [[maybe_unused]] __m256i hb = _mm256_setzero_si256();
      if constexpr (kQ5) hb = _mm256_load_si256(reinterpret_cast<const __m256i*>(q + 256));
#pragma GCC unroll 4
      for (int s = 0; s < 4; ++s) {
        const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(q + 64 * s));
        __m256i lo = _mm256_and_si256(v, m4);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        if constexpr (kQ5) {
          const __m256i sixteen = _mm256_set1_epi8(16);
          const __m256i bl = _mm256_set1_epi8(static_cast<char>(1 << s)), bh = _mm256_set1_epi8(static_cast<char>(1 << (4 + s)));
          lo = _mm256_add_epi8(lo, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hb, bl), bl), sixteen));
          hi = _mm256_add_epi8(hi, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hb, bh), bh), sixteen));
        }
        if constexpr (kLut) {
          lo = _mm256_shuffle_epi8(lut, lo);
          hi = _mm256_shuffle_epi8(lut, hi);
          for (int j = 0; j < RM; ++j) {
            t[j] = dot_s(t[j], lo, bcast4(xq[j] + b * 32 + 4 * s));
            t[j] = dot_s(t[j], hi, bcast4(xq[j] + b * 32 + 16 + 4 * s));
          }
        } else {
          for (int j = 0; j < RM; ++j) {
            t[j] = dot_u(t[j], lo, bcast4(xq[j] + b * 32 + 4 * s));
            t[j] = dot_u(t[j], hi, bcast4(xq[j] + b * 32 + 16 + 4 * s));
          }
        }
      }
    }
    const __m256 dw = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(gq + packed_scale_offset(T, b) + 16 * h)));
    for (int j = 0; j < RM; ++j)
      acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(t[j]), _mm256_mul_ps(dw, _mm256_set1_ps(xd[j][b])), acc[j]);
    if constexpr (kMin) {
      const __m256 mw = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(gq + packed_min_offset(T, b) + 16 * h)));
      for (int j = 0; j < RM; ++j) acc[j] = _mm256_fmadd_ps(mw, _mm256_set1_ps(xsd[j][b]), acc[j]);
    }
  }
  for (int j = 0; j < RM; ++j) {
    float* yj = y + (m0 + j) * ldy;
    if (r0 == 0 && r1 == 8) {
      _mm256_storeu_ps(yj, acc[j]);
    } else {
      alignas(32) float tmp[8];
      _mm256_store_ps(tmp, acc[j]);
      for (int r = r0; r < r1; ++r) yj[r] = tmp[r];
    }
  }
}

template <DType T>
void half_disp(int rm, const uint8_t* gq, int h, int64_t nb, const Act& x, int64_t m0, float* y, int64_t ldy, int r0, int r1) {
  switch (rm) {
    case 1: return half_tile<T, 1>(gq, h, nb, x, m0, y, ldy, r0, r1);
    case 2: return half_tile<T, 2>(gq, h, nb, x, m0, y, ldy, r0, r1);
    case 3: return half_tile<T, 3>(gq, h, nb, x, m0, y, ldy, r0, r1);
    default: return half_tile<T, 4>(gq, h, nb, x, m0, y, ldy, r0, r1);
  }
}

template <DType T>
void rows(const MatArgs& m, int64_t n0, int64_t n1) {
  constexpr int RM = 4;
  const int64_t nb = m.x.nb;
  const size_t gbytes = packed_group_bytes(T, nb);
  // Weight groups in L2-sized blocks, reused from cache by every tile of RM activation rows.
  const int64_t GB = std::max<int64_t>(1, static_cast<int64_t>((256 * 1024) / gbytes));
  const int64_t g0 = n0 / kPackRows, g1 = (n1 + kPackRows - 1) / kPackRows;
  for (int64_t gb = g0; gb < g1; gb += GB) {
    const int64_t ge = std::min(g1, gb + GB);
    for (int64_t m0 = 0; m0 < m.M; m0 += RM) {
      const int rm = static_cast<int>(std::min<int64_t>(RM, m.M - m0));
      for (int64_t g = gb; g < ge; ++g) {
        const int64_t base = g * kPackRows;
        const int lo = static_cast<int>(std::max(n0, base) - base), hi = static_cast<int>(std::min(n1, base + kPackRows) - base);
        for (int h = 0; h < 2; ++h) {
          const int r0 = std::max(lo, 8 * h) - 8 * h, r1 = std::min(hi, 8 * h + 8) - 8 * h;
          if (r0 < r1) half_disp<T>(rm, m.packed + static_cast<size_t>(g) * gbytes, h, nb, m.x, m0, m.y + base + 8 * h, m.ldy, r0, r1);
        }
      }
    }
  }
}

}  // namespace

void packed_matmul_rows(const MatArgs& m, int64_t n0, int64_t n1) {
  switch (m.wt) {
    case DType::Q4_0: return rows<DType::Q4_0>(m, n0, n1);
    case DType::Q4_1: return rows<DType::Q4_1>(m, n0, n1);
    case DType::Q5_0: return rows<DType::Q5_0>(m, n0, n1);
    case DType::Q5_1: return rows<DType::Q5_1>(m, n0, n1);
    case DType::IQ4_NL: return rows<DType::IQ4_NL>(m, n0, n1);
    default: return rows<DType::Q8_0>(m, n0, n1);
  }
}

}  // namespace kvscope::kernels::detail::avx2
