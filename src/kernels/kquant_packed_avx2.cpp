// AVX2 matmul over packed K-quant / IQ4_XS weights (layout: KqPackGeom in internal.h) against Q8_K
// activations, for CPUs without AVX-512 VNNI. Each 64-byte vector of the layout is two halves of 8
// rows (bytes 32h.. = rows 8h..8h+7), so a half is one ymm and the kernel runs the AVX-512 one's
// scheme on 8 rows: maddubs + madd with ones gives each row's 4-element dot (vpdpbusd's result;
// codes are below 64, activations within +-127, so maddubs cannot saturate), a slot's 8 dots are
// multiplied by the 8 rows' slot scales (vpmulld), the mins enter through the slot sums (madd), and
// each block ends with one float FMA per row vector, in block order as the reference sums.
// IQ4_XS's codebook values are signed (maddubs(|v|, sign(x, v)); no -128 offset then).
#include "kernels/avx2_common.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/internal.h"

namespace kvscope::kernels::detail::avx2 {

namespace {

inline __m256i bcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}
inline __m256i ld256(const uint8_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
inline __m256i dot_u(__m256i acc, __m256i w, __m256i x) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(w, x), _mm256_set1_epi16(1)));
}
inline __m256i dot_s(__m256i acc, __m256i w, __m256i x) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w)), _mm256_set1_epi16(1)));
}
// Adds 16 (or v) to the bytes of w whose bit `bit` is set in h.
inline __m256i add_if(__m256i w, __m256i h, int bit, int v) {
  const __m256i b = _mm256_set1_epi8(static_cast<char>(bit));
  return _mm256_add_epi8(w, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(h, b), b), _mm256_set1_epi8(static_cast<char>(v))));
}

struct XRow {
  const int8_t* q;
  const float* d;
  const int32_t* aux;
};

template <int K>
inline __m256i hi2(__m256i h) {
  const __m256i m = _mm256_set1_epi8(0x30);
  if constexpr (K == 0) return _mm256_and_si256(_mm256_slli_epi16(h, 4), m);
  else if constexpr (K == 1) return _mm256_and_si256(_mm256_slli_epi16(h, 2), m);
  else if constexpr (K == 2) return _mm256_and_si256(h, m);
  else return _mm256_and_si256(_mm256_srli_epi16(h, 2), m);
}

// Rows 8h + [r0, r1) of one 16-row group times RM activation rows.
template <DType T, int RM>
void half_tile(const uint8_t* gp, int h, int64_t nb, const XRow* xr, float* y, int64_t ldy, int r0, int r1) {
  constexpr KqPackGeom G = kqp_geom(T);
  constexpr size_t BB = kqp_block_bytes(G), CS = kqp_chunk_bytes(G), CO = kqp_code_offset(G), HI = kqp_hi_offset(G), SO = kqp_scale_offset(G), MO = kqp_min_offset(G),
                   DO = kqp_d_offset(G);
  constexpr int NP = G.ns / 2;
  const size_t H = 32 * static_cast<size_t>(h);
  [[maybe_unused]] const __m256i m4 = _mm256_set1_epi8(0x0f), m3 = _mm256_set1_epi8(3);
  [[maybe_unused]] __m256i lut = _mm256_setzero_si256();
  if constexpr (G.lut) lut = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4Values)));
  __m256 acc[RM];
  for (int j = 0; j < RM; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* bp = gp + static_cast<size_t>(b) * BB;
    const int8_t* xq[RM];
    for (int j = 0; j < RM; ++j) xq[j] = xr[j].q + b * 256;
    __m256i isum[RM];
    for (int j = 0; j < RM; ++j) isum[j] = _mm256_setzero_si256();
    for (int c = 0; c < 8; ++c) {
      const uint8_t* cp = bp + CO + CS * c + H;
      __m256i ta[RM], tb[RM];
      for (int j = 0; j < RM; ++j) {
        if constexpr (G.bias != 0 && !G.lut && G.ns == 16) {
          ta[j] = _mm256_set1_epi32(xr[j].aux[b * 16 + 2 * c]);
          tb[j] = _mm256_set1_epi32(xr[j].aux[b * 16 + 2 * c + 1]);
        } else {
          ta[j] = tb[j] = _mm256_setzero_si256();
        }
      }
      if constexpr (G.lo_bits == 4) {
        __m256i h1 = _mm256_setzero_si256(), h2a = h1, h2b = h1;
        if constexpr (G.hi_bits == 1) h1 = ld256(cp + HI);
        if constexpr (G.hi_bits == 2) {
          h2a = ld256(cp + HI);
          h2b = ld256(cp + HI + 64);
        }
        auto step = [&](auto sc) {
          constexpr int s = decltype(sc)::value;
          const __m256i v = ld256(cp + 64 * s);
          __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
          if constexpr (G.hi_bits == 1) {
            lo = add_if(lo, h1, 1 << s, 16);
            hi = add_if(hi, h1, 1 << (4 + s), 16);
          }
          if constexpr (G.hi_bits == 2) {
            lo = _mm256_or_si256(lo, hi2<s>(h2a));
            hi = _mm256_or_si256(hi, hi2<s>(h2b));
          }
          if constexpr (G.lut) {
            lo = _mm256_shuffle_epi8(lut, lo);
            hi = _mm256_shuffle_epi8(lut, hi);
            for (int j = 0; j < RM; ++j) {
              ta[j] = dot_s(ta[j], lo, bcast4(xq[j] + 32 * c + 4 * s));
              tb[j] = dot_s(tb[j], hi, bcast4(xq[j] + 32 * c + 16 + 4 * s));
            }
          } else {
            for (int j = 0; j < RM; ++j) {
              ta[j] = dot_u(ta[j], lo, bcast4(xq[j] + 32 * c + 4 * s));
              tb[j] = dot_u(tb[j], hi, bcast4(xq[j] + 32 * c + 16 + 4 * s));
            }
          }
        };
        step(std::integral_constant<int, 0>{});
        step(std::integral_constant<int, 1>{});
        step(std::integral_constant<int, 2>{});
        step(std::integral_constant<int, 3>{});
      } else {  // 2-bit low plane (Q2_K, Q3_K)
        __m256i h1 = _mm256_setzero_si256();
        if constexpr (G.hi_bits == 1) h1 = ld256(cp + HI);
        auto half = [&](auto vc, __m256i(&t)[RM]) {
          constexpr int v = decltype(vc)::value;
          const __m256i x = ld256(cp + 64 * v);
          for (int k = 0; k < 4; ++k) {
            __m256i w = _mm256_and_si256(k == 0 ? x : _mm256_srli_epi16(x, 2 * k), m3);
            if constexpr (G.hi_bits == 1) w = add_if(w, h1, 1 << (4 * v + k), 4);
            for (int j = 0; j < RM; ++j) t[j] = dot_u(t[j], w, bcast4(xq[j] + 32 * c + 16 * v + 4 * k));
          }
        };
        half(std::integral_constant<int, 0>{}, ta);
        half(std::integral_constant<int, 1>{}, tb);
      }
      auto scales = [&](size_t off) { return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(bp + off + 8 * h))); };
      if constexpr (G.ns == 16) {
        const __m256i sa = scales(SO + 32 * c), sb = scales(SO + 32 * c + 16);
        for (int j = 0; j < RM; ++j)
          isum[j] = _mm256_add_epi32(isum[j], _mm256_add_epi32(_mm256_mullo_epi32(ta[j], sa), _mm256_mullo_epi32(tb[j], sb)));
      } else {
        const __m256i s = scales(SO + 16 * c);
        __m256i off[RM];
        for (int j = 0; j < RM; ++j) {
          // 32-element slots of types without mins (IQ4_XS is signed: no offset)
          if constexpr (G.bias != 0 && !G.lut) off[j] = _mm256_set1_epi32(xr[j].aux[b * 8 + c]);
          else off[j] = _mm256_setzero_si256();
          isum[j] = _mm256_add_epi32(isum[j], _mm256_mullo_epi32(_mm256_add_epi32(_mm256_add_epi32(ta[j], tb[j]), off[j]), s));
        }
      }
    }
    const __m256 D = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(bp + DO + 16 * h)));
    if constexpr (G.mins) {
      __m256i msum[RM];
      for (int j = 0; j < RM; ++j) msum[j] = _mm256_setzero_si256();
      for (int p = 0; p < NP; ++p) {
        const __m256i mv = _mm256_cvtepu8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(bp + MO + 32 * p + 16 * h)));
        for (int j = 0; j < RM; ++j) msum[j] = _mm256_add_epi32(msum[j], _mm256_madd_epi16(mv, _mm256_set1_epi32(xr[j].aux[b * NP + p])));
      }
      const __m256 Dm = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(bp + DO + 32 + 16 * h)));
      for (int j = 0; j < RM; ++j) {
        const __m256 dy = _mm256_set1_ps(xr[j].d[b]);
        acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[j]), _mm256_mul_ps(D, dy), acc[j]);
        acc[j] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum[j]), _mm256_mul_ps(Dm, dy), acc[j]);
      }
    } else {
      for (int j = 0; j < RM; ++j)
        acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[j]), _mm256_mul_ps(D, _mm256_set1_ps(xr[j].d[b])), acc[j]);
    }
  }
  for (int j = 0; j < RM; ++j) {
    float* yj = y + j * ldy;
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
void half_disp(int rm, const uint8_t* gp, int h, int64_t nb, const XRow* xr, float* y, int64_t ldy, int r0, int r1) {
  switch (rm) {
    case 1: return half_tile<T, 1>(gp, h, nb, xr, y, ldy, r0, r1);
    case 2: return half_tile<T, 2>(gp, h, nb, xr, y, ldy, r0, r1);
    case 3: return half_tile<T, 3>(gp, h, nb, xr, y, ldy, r0, r1);
    default: return half_tile<T, 4>(gp, h, nb, xr, y, ldy, r0, r1);
  }
}

// aux for activation row m: as the AVX-512 kernel's fill_aux (slot offsets -bias * slot sum, or the
// slot sums in int16 pairs for types with mins).
template <DType T>
void fill_aux(const Act& x, int64_t m, int32_t* out) {
  constexpr KqPackGeom G = kqp_geom(T);
  const int16_t* bs = x.bs + m * x.nb * 16;
  for (int64_t b = 0; b < x.nb; ++b) {
    const int16_t* s = bs + 16 * b;
    if constexpr (G.mins && G.ns == 16) {
      for (int p = 0; p < 8; ++p)
        out[b * 8 + p] = static_cast<int32_t>(static_cast<uint16_t>(s[2 * p]) | (static_cast<uint32_t>(static_cast<uint16_t>(s[2 * p + 1])) << 16));
    } else if constexpr (G.mins) {
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
        const int64_t base = g * kPackRows;
        const int lo = static_cast<int>(std::max(n0, base) - base), hi = static_cast<int>(std::min(n1, base + kPackRows) - base);
        for (int h = 0; h < 2; ++h) {
          const int r0 = std::max(lo, 8 * h) - 8 * h, r1 = std::min(hi, 8 * h + 8) - 8 * h;
          if (r0 < r1) half_disp<T>(rm, m.packed + static_cast<size_t>(g) * gbytes, h, nb, xr, m.y + m0 * m.ldy + base + 8 * h, m.ldy, r0, r1);
        }
      }
    }
  }
}

}  // namespace

void kq_packed_rows(const MatArgs& m, int64_t n0, int64_t n1) {
  switch (m.wt) {
    case DType::Q2_K: return rows<DType::Q2_K>(m, n0, n1);
    case DType::Q3_K: return rows<DType::Q3_K>(m, n0, n1);
    case DType::Q4_K: return rows<DType::Q4_K>(m, n0, n1);
    case DType::Q5_K: return rows<DType::Q5_K>(m, n0, n1);
    case DType::Q6_K: return rows<DType::Q6_K>(m, n0, n1);
    default: return rows<DType::IQ4_XS>(m, n0, n1);
  }
}

}  // namespace kvscope::kernels::detail::avx2
