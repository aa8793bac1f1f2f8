// AVX-512 VNNI matmul over packed K-quant / IQ4_XS weights (layout: KqPackGeom in internal.h)
// against Q8_K activations. One zmm holds 4 codes of each of 16 weight rows, so vpdpbusd with a
// broadcast of 4 activation quants advances 16 output rows at once (the Q4_0/Q8_0 packed kernels'
// scheme); a slot's 16 exact integer dots are multiplied by the 16 rows' slot scales (one vpmulld)
// and summed over the block, the mins enter through the activations' slot sums (vpdpwssd), and the
// block ends with one float multiply-add per row vector, in block order as the scalar reference
// sums. Nothing is reduced horizontally and each weight byte is loaded once per tile of RM
// activation rows. Signed codes (Q3_K, Q6_K, IQ4_XS) are stored unsigned; each slot's dot starts at
// -bias * (the slot's activation sum), which gives the same integers as the signed dot.
#include "kernels/avx512_common.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/internal.h"

namespace kvscope::kernels::detail::avx512 {

namespace {

inline __m512i bcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}
inline __m512i ld512(const uint8_t* p) { return _mm512_load_si512(p); }

// One activation row of a tile: Q8_K quants and scales, and aux = per block either the slot offsets
// -bias * slot sum (types without mins; ns per block) or the slot sums in int16 pairs (types with
// mins; ns/2 per block).
struct XRow {
  const int8_t* q;
  const float* d;
  const int32_t* aux;
};

// Bits 4-5 of a Q6_K code for group 4h+k from the 2-bit high plane vector, in place (bits 4-5).
template <int K>
inline __m512i hi2(__m512i h) {
  const __m512i m = _mm512_set1_epi8(0x30);
  if constexpr (K == 0) return _mm512_and_si512(_mm512_slli_epi16(h, 4), m);
  else if constexpr (K == 1) return _mm512_and_si512(_mm512_slli_epi16(h, 2), m);
  else if constexpr (K == 2) return _mm512_and_si512(h, m);
  else return _mm512_and_si512(_mm512_srli_epi16(h, 2), m);
}

template <DType T, int RM>
void group_tile(const uint8_t* gp, int64_t nb, const XRow* xr, float* y, int64_t ldy, __mmask16 lanes) {
  constexpr KqPackGeom G = kqp_geom(T);
  constexpr size_t BB = kqp_block_bytes(G), CS = kqp_chunk_bytes(G), CO = kqp_code_offset(G), HI = kqp_hi_offset(G), SO = kqp_scale_offset(G), MO = kqp_min_offset(G),
                   DO = kqp_d_offset(G);
  constexpr int NP = G.ns / 2;
  [[maybe_unused]] const __m512i m4 = _mm512_set1_epi8(0x0f), m3 = _mm512_set1_epi8(3);
  [[maybe_unused]] __m512i lut = _mm512_setzero_si512();
  if constexpr (G.lut) {
    alignas(16) int8_t t[16];
    for (int i = 0; i < 16; ++i) t[i] = static_cast<int8_t>(kIQ4Values[i] + 128);
    lut = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(t)));
  }
  __m512 acc[RM];
  for (int j = 0; j < RM; ++j) acc[j] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* bp = gp + static_cast<size_t>(b) * BB;
    const int8_t* xq[RM];
    for (int j = 0; j < RM; ++j) xq[j] = xr[j].q + b * 256;
    __m512i isum[RM];
    for (int j = 0; j < RM; ++j) isum[j] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c) {
      const uint8_t* cp = bp + CO + CS * c;
      // ta: groups 0-3 of the chunk (elements 0-15), tb: groups 4-7.
      __m512i ta[RM], tb[RM];
      for (int j = 0; j < RM; ++j) {
        if constexpr (G.bias != 0 && G.ns == 16) {
          ta[j] = _mm512_set1_epi32(xr[j].aux[b * 16 + 2 * c]);
          tb[j] = _mm512_set1_epi32(xr[j].aux[b * 16 + 2 * c + 1]);
        } else if constexpr (G.bias != 0) {
          ta[j] = _mm512_set1_epi32(xr[j].aux[b * 8 + c]);
          tb[j] = _mm512_setzero_si512();
        } else {
          ta[j] = tb[j] = _mm512_setzero_si512();
        }
      }
      if constexpr (G.lo_bits == 4) {
        __m512i h1 = _mm512_setzero_si512(), h2a = h1, h2b = h1;
        if constexpr (G.hi_bits == 1) h1 = ld512(cp + HI);
        if constexpr (G.hi_bits == 2) {
          h2a = ld512(cp + HI);
          h2b = ld512(cp + HI + 64);
        }
        auto step = [&](auto sc) {
          constexpr int s = decltype(sc)::value;
          const __m512i v = ld512(cp + 64 * s);
          __m512i lo = _mm512_and_si512(v, m4), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
          if constexpr (G.hi_bits == 1) {
            const __m512i sixteen = _mm512_set1_epi8(16);
            lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(h1, _mm512_set1_epi8(static_cast<char>(1 << s))), lo, sixteen);
            hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(h1, _mm512_set1_epi8(static_cast<char>(1 << (4 + s)))), hi, sixteen);
          }
          if constexpr (G.hi_bits == 2) {
            lo = _mm512_or_si512(lo, hi2<s>(h2a));
            hi = _mm512_or_si512(hi, hi2<s>(h2b));
          }
          if constexpr (G.lut) {
            lo = _mm512_shuffle_epi8(lut, lo);
            hi = _mm512_shuffle_epi8(lut, hi);
          }
          for (int j = 0; j < RM; ++j) {
            ta[j] = _mm512_dpbusd_epi32(ta[j], lo, bcast4(xq[j] + 32 * c + 4 * s));
            tb[j] = _mm512_dpbusd_epi32(tb[j], hi, bcast4(xq[j] + 32 * c + 16 + 4 * s));
          }
        };
        step(std::integral_constant<int, 0>{});
        step(std::integral_constant<int, 1>{});
        step(std::integral_constant<int, 2>{});
        step(std::integral_constant<int, 3>{});
      } else {  // 2-bit low plane (Q2_K, Q3_K)
        __m512i h1 = _mm512_setzero_si512();
        if constexpr (G.hi_bits == 1) h1 = ld512(cp + HI);
        auto half = [&](auto vc, __m512i(&t)[RM]) {
          constexpr int v = decltype(vc)::value;
          const __m512i x = ld512(cp + 64 * v);
#pragma GCC unroll 4
          for (int k = 0; k < 4; ++k) {
            __m512i w = _mm512_and_si512(k == 0 ? x : _mm512_srli_epi16(x, 2 * k), m3);
            if constexpr (G.hi_bits == 1)
              w = _mm512_mask_add_epi8(w, _mm512_test_epi8_mask(h1, _mm512_set1_epi8(static_cast<char>(1 << (4 * v + k)))), w,
                                       _mm512_set1_epi8(4));
            for (int j = 0; j < RM; ++j) t[j] = _mm512_dpbusd_epi32(t[j], w, bcast4(xq[j] + 32 * c + 16 * v + 4 * k));
          }
        };
        half(std::integral_constant<int, 0>{}, ta);
        half(std::integral_constant<int, 1>{}, tb);
      }
      if constexpr (G.ns == 16) {
        const __m512i sa = _mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(bp + SO + 32 * c)));
        const __m512i sb = _mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(bp + SO + 32 * c + 16)));
        for (int j = 0; j < RM; ++j)
          isum[j] = _mm512_add_epi32(isum[j], _mm512_add_epi32(_mm512_mullo_epi32(ta[j], sa), _mm512_mullo_epi32(tb[j], sb)));
      } else {
        const __m512i s = _mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(bp + SO + 16 * c)));
        for (int j = 0; j < RM; ++j) isum[j] = _mm512_add_epi32(isum[j], _mm512_mullo_epi32(_mm512_add_epi32(ta[j], tb[j]), s));
      }
    }
    const __m512 D = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(bp + DO)));
    if constexpr (G.mins) {
      __m512i msum[RM];
      for (int j = 0; j < RM; ++j) msum[j] = _mm512_setzero_si512();
      for (int p = 0; p < NP; ++p) {
        const __m512i mv = _mm512_cvtepu8_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(bp + MO + 32 * p)));
        for (int j = 0; j < RM; ++j) msum[j] = _mm512_dpwssd_epi32(msum[j], mv, _mm512_set1_epi32(xr[j].aux[b * NP + p]));
      }
      const __m512 Dm = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(bp + DO + 32)));
      for (int j = 0; j < RM; ++j) {
        const __m512 dy = _mm512_set1_ps(xr[j].d[b]);
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[j]), _mm512_mul_ps(D, dy), acc[j]);
        acc[j] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum[j]), _mm512_mul_ps(Dm, dy), acc[j]);
      }
    } else {
      for (int j = 0; j < RM; ++j)
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[j]), _mm512_mul_ps(D, _mm512_set1_ps(xr[j].d[b])), acc[j]);
    }
  }
  for (int j = 0; j < RM; ++j) _mm512_mask_storeu_ps(y + j * ldy, lanes, acc[j]);
}

template <DType T>
void group_disp(int rm, const uint8_t* gp, int64_t nb, const XRow* xr, float* y, int64_t ldy, __mmask16 lanes) {
  switch (rm) {
    case 1: return group_tile<T, 1>(gp, nb, xr, y, ldy, lanes);
    case 2: return group_tile<T, 2>(gp, nb, xr, y, ldy, lanes);
    case 3: return group_tile<T, 3>(gp, nb, xr, y, ldy, lanes);
    default: return group_tile<T, 4>(gp, nb, xr, y, ldy, lanes);
  }
}

// aux for activation row m (see XRow), written to out.
template <DType T>
void fill_aux(const Act& x, int64_t m, int32_t* out) {
  constexpr KqPackGeom G = kqp_geom(T);
  const int16_t* bs = x.bs + m * x.nb * 16;
  for (int64_t b = 0; b < x.nb; ++b) {
    const int16_t* s = bs + 16 * b;
    if constexpr (G.mins && G.ns == 16) {
      for (int p = 0; p < 8; ++p)
        out[b * 8 + p] = static_cast<int32_t>(static_cast<uint16_t>(s[2 * p]) | (static_cast<uint32_t>(static_cast<uint16_t>(s[2 * p + 1])) << 16));
    } else if constexpr (G.mins) {  // pairs of 32-element sums (|sum| <= 32 * 128 fits int16)
      for (int p = 0; p < 4; ++p) {
        const int a = s[4 * p] + s[4 * p + 1], c = s[4 * p + 2] + s[4 * p + 3];
        out[b * 4 + p] = static_cast<int32_t>(static_cast<uint16_t>(a) | (static_cast<uint32_t>(static_cast<uint16_t>(c)) << 16));
      }
    } else if constexpr (G.ns == 16) {
      for (int j = 0; j < 16; ++j) out[b * 16 + j] = -G.bias * s[j];
    } else {
      for (int j = 0; j < 8; ++j) out[b * 8 + j] = -G.bias * (s[2 * j] + s[2 * j + 1]);
    }
  }
}

template <DType T>
void rows(const MatArgs& m, int64_t n0, int64_t n1) {
  constexpr int RM = 4;
  constexpr KqPackGeom G = kqp_geom(T);
  const int64_t nb = m.x.nb;
  const size_t gbytes = kqp_block_bytes(G) * static_cast<size_t>(nb);
  const int64_t per_row = nb * (G.mins ? G.ns / 2 : G.ns);
  auto* aux = static_cast<int32_t*>(scratch(7, static_cast<size_t>(RM * per_row) * sizeof(int32_t) + 64));
  // Groups are visited in blocks that fit in L2, so for prefill each block of weights is streamed
  // from memory once and then reused from cache by every tile of RM activation rows.
  const int64_t GB = std::max<int64_t>(1, static_cast<int64_t>((256 * 1024) / gbytes));
  const int64_t g0 = n0 / kPackRows, g1 = (n1 + kPackRows - 1) / kPackRows;
  for (int64_t gb = g0; gb < g1; gb += GB) {
    const int64_t ge = std::min(g1, gb + GB);
    for (int64_t m0 = 0; m0 < m.M; m0 += RM) {
      const int rm = static_cast<int>(std::min<int64_t>(RM, m.M - m0));
      XRow xr[RM];
      for (int j = 0; j < rm; ++j) {
        fill_aux<T>(m.x, m0 + j, aux + j * per_row);
        xr[j] = {m.x.q + (m0 + j) * m.x.ldq, m.x.d + (m0 + j) * nb, aux + j * per_row};
      }
      for (int64_t g = gb; g < ge; ++g) {
        const int64_t r0 = g * kPackRows;
        const int64_t lo = std::max(n0, r0) - r0, hi = std::min(n1, r0 + kPackRows) - r0;
        const __mmask16 lanes = static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
        group_disp<T>(rm, m.packed + static_cast<size_t>(g) * gbytes, nb, xr, m.y + m0 * m.ldy + r0, m.ldy, lanes);
      }
    }
  }
}

}  // namespace

void kq_packed_rows(const MatArgs& m, int64_t n0, int64_t n1) {
  static const bool vnni = __builtin_cpu_supports("avx512vnni");
  if (!vnni) return avx2::kq_packed_rows(m, n0, n1);  // AVX-512 without VNNI: the AVX2 kernel reads the same layout
  switch (m.wt) {
    case DType::Q2_K: return rows<DType::Q2_K>(m, n0, n1);
    case DType::Q3_K: return rows<DType::Q3_K>(m, n0, n1);
    case DType::Q4_K: return rows<DType::Q4_K>(m, n0, n1);
    case DType::Q5_K: return rows<DType::Q5_K>(m, n0, n1);
    case DType::Q6_K: return rows<DType::Q6_K>(m, n0, n1);
    default: return rows<DType::IQ4_XS>(m, n0, n1);
  }
}

}  // namespace kvscope::kernels::detail::avx512
