// AVX-512 VNNI matmul over packed 32-block weights: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL (layout in
// internal.h). One zmm holds 4 bytes of each of 16 weight rows, so vpdpbusd with a broadcast of 4
// activation quants advances 16 output rows at once; after a 32-block the 16 integer dots are exact
// and are scaled by one vector of the 16 rows' scales times the activation scale, in block order as
// the scalar reference sums them (Q4_1/Q5_1 then add the 16 rows' mins times the activation's
// Q8_1 block sum). Nothing is reduced horizontally and each weight byte is loaded once per group of
// RM activation rows. Codes are unsigned (Q8_0 + 128; nibbles; Q5's fifth bit added as 16; IQ4_NL
// through a vpshufb codebook + 128), so each dot of a type with an offset starts at -bias * sum(x_q).
#include "kernels/avx512_common.h"

#include <algorithm>
#include <cstring>

#include "kernels/internal.h"

namespace kvscope::kernels::detail::avx512 {

namespace {

inline __m512i bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

constexpr int bias_of(DType t) {
  switch (t) {
    case DType::Q8_0:
    case DType::IQ4_NL: return 128;
    case DType::Q4_0: return 8;
    case DType::Q5_0: return 16;
    default: return 0;  // Q4_1, Q5_1: the min term instead
  }
}

template <DType T, int RM>
void group_tile(const uint8_t* gq, int64_t nb, const Act& x, int64_t m0, float* y, int64_t ldy, __mmask16 lanes) {
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
  [[maybe_unused]] __m512i lut = _mm512_setzero_si512();
  if constexpr (kLut) {
    alignas(16) int8_t t[16];
    for (int i = 0; i < 16; ++i) t[i] = static_cast<int8_t>(kIQ4Values[i] + 128);
    lut = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(t)));
  }
  __m512 acc[RM];
  for (int j = 0; j < RM; ++j) acc[j] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* q = gq + packed_quant_offset(T, b);
    __m512i t[RM];
    for (int j = 0; j < RM; ++j) {
      if constexpr (kBias != 0)
        t[j] = _mm512_set1_epi32(-kBias * xs[j][b]);
      else
        t[j] = _mm512_setzero_si512();
    }
    if constexpr (T == DType::Q8_0) {
      for (int s = 0; s < 8; ++s) {
        const __m512i w = _mm512_load_si512(q + 64 * s);
        for (int j = 0; j < RM; ++j) t[j] = _mm512_dpbusd_epi32(t[j], w, bcast4(xq[j] + b * 32 + 4 * s));
      }
    } else {
      const __m512i m4 = _mm512_set1_epi8(0x0F);
      [[maybe_unused]] __m512i h = _mm512_setzero_si512();
      if constexpr (kQ5) h = _mm512_load_si512(q + 256);
#pragma GCC unroll 4
      for (int s = 0; s < 4; ++s) {
        const __m512i v = _mm512_load_si512(q + 64 * s);
        __m512i lo = _mm512_and_si512(v, m4);
        __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
        if constexpr (kQ5) {
          const __m512i sixteen = _mm512_set1_epi8(16);
          lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(h, _mm512_set1_epi8(static_cast<char>(1 << s))), lo, sixteen);
          hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(h, _mm512_set1_epi8(static_cast<char>(1 << (4 + s)))), hi, sixteen);
        }
        if constexpr (kLut) {
          lo = _mm512_shuffle_epi8(lut, lo);
          hi = _mm512_shuffle_epi8(lut, hi);
        }
        for (int j = 0; j < RM; ++j) {
          t[j] = _mm512_dpbusd_epi32(t[j], lo, bcast4(xq[j] + b * 32 + 4 * s));
          t[j] = _mm512_dpbusd_epi32(t[j], hi, bcast4(xq[j] + b * 32 + 16 + 4 * s));
        }
      }
    }
    const __m512 dw = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(gq + packed_scale_offset(T, b))));
    for (int j = 0; j < RM; ++j)
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t[j]), _mm512_mul_ps(dw, _mm512_set1_ps(xd[j][b])), acc[j]);
    if constexpr (kMin) {
      const __m512 mw = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(gq + packed_min_offset(T, b))));
      for (int j = 0; j < RM; ++j) acc[j] = _mm512_fmadd_ps(mw, _mm512_set1_ps(xsd[j][b]), acc[j]);
    }
  }
  for (int j = 0; j < RM; ++j) _mm512_mask_storeu_ps(y + (m0 + j) * ldy, lanes, acc[j]);
}

template <DType T>
void group_disp(int rm, const uint8_t* gq, int64_t nb, const Act& x, int64_t m0, float* y, int64_t ldy, __mmask16 lanes) {
  switch (rm) {
    case 1: return group_tile<T, 1>(gq, nb, x, m0, y, ldy, lanes);
    case 2: return group_tile<T, 2>(gq, nb, x, m0, y, ldy, lanes);
    case 3: return group_tile<T, 3>(gq, nb, x, m0, y, ldy, lanes);
    case 4: return group_tile<T, 4>(gq, nb, x, m0, y, ldy, lanes);
    case 5: return group_tile<T, 5>(gq, nb, x, m0, y, ldy, lanes);
    case 6: return group_tile<T, 6>(gq, nb, x, m0, y, ldy, lanes);
    case 7: return group_tile<T, 7>(gq, nb, x, m0, y, ldy, lanes);
    default: return group_tile<T, 8>(gq, nb, x, m0, y, ldy, lanes);
  }
}

template <DType T>
void rows(const MatArgs& m, int64_t n0, int64_t n1) {
  constexpr int RM = 8;
  const int64_t nb = m.x.nb;
  const size_t gbytes = packed_group_bytes(T, nb);
  // Groups are visited in blocks that fit in L2, so for prefill each block of weights is streamed
  // from memory once and then reused from cache by every tile of RM activation rows.
  const int64_t GB = std::max<int64_t>(1, static_cast<int64_t>((256 * 1024) / gbytes));
  const int64_t g0 = n0 / kPackRows, g1 = (n1 + kPackRows - 1) / kPackRows;
  for (int64_t gb = g0; gb < g1; gb += GB) {
    const int64_t ge = std::min(g1, gb + GB);
    for (int64_t m0 = 0; m0 < m.M; m0 += RM) {
      const int rm = static_cast<int>(std::min<int64_t>(RM, m.M - m0));
      for (int64_t g = gb; g < ge; ++g) {
        const int64_t r0 = g * kPackRows;
        const int64_t lo = std::max(n0, r0) - r0, hi = std::min(n1, r0 + kPackRows) - r0;
        const __mmask16 lanes = static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
        group_disp<T>(rm, m.packed + static_cast<size_t>(g) * gbytes, nb, m.x, m0, m.y + r0, m.ldy, lanes);
      }
    }
  }
}

}  // namespace

void packed_matmul_rows(const MatArgs& m, int64_t n0, int64_t n1) {
  static const bool vnni = __builtin_cpu_supports("avx512vnni");
  if (!vnni) return avx2::packed_matmul_rows(m, n0, n1);  // AVX-512 without VNNI: packed for the AVX2 kernel
  switch (m.wt) {
    case DType::Q4_0: return rows<DType::Q4_0>(m, n0, n1);
    case DType::Q4_1: return rows<DType::Q4_1>(m, n0, n1);
    case DType::Q5_0: return rows<DType::Q5_0>(m, n0, n1);
    case DType::Q5_1: return rows<DType::Q5_1>(m, n0, n1);
    case DType::IQ4_NL: return rows<DType::IQ4_NL>(m, n0, n1);
    default: return rows<DType::Q8_0>(m, n0, n1);
  }
}

}  // namespace kvscope::kernels::detail::avx512
