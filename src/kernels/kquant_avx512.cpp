// AVX-512 K-quant matmul (Q2_K..Q6_K weights, Q8_K activations). Per 64 elements: the unsigned
// codes come out of the file's block in registers (a 32-byte run broadcast to both halves and
// shifted per half, so they land in element order), maddubs multiplies them with the int8
// activations (pairs -> int16, no saturation), and VNNI's vpdpwssd multiplies by the per-16 scales
// and accumulates in one instruction (plain AVX-512BW uses madd + add). Offsets come from the
// activations' 16-element sums, one madd per block. Weights are read in place (no repacked copy),
// so resident memory stays at the file size. A tile of RN weight rows x RM activation rows shares
// every unpacked code and scale vector.
#include "kernels/avx512_common.h"

#include <algorithm>

#include "kernels/internal.h"
#include "kernels/kquant_simd.h"

namespace kvscope::kernels::detail::avx512 {

namespace {

inline __m512i bcast256(const uint8_t* p) {
  return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// Shift counts per 256-bit half (int16 lanes 0-15 / 16-31).
inline __m512i halves16(int lo, int hi) {
  return _mm512_inserti64x4(_mm512_set1_epi16(static_cast<short>(lo)), _mm256_set1_epi16(static_cast<short>(hi)), 1);
}
inline __m512i halves8(int lo, int hi) {
  return _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(lo)), _mm256_set1_epi8(static_cast<char>(hi)), 1);
}

// Unsigned codes of elements 64k..64k+63 of a block.
template <DType T>
inline __m512i codes(const uint8_t* blk, int k) {
  const __m512i m4 = _mm512_set1_epi8(0x0f), m3 = _mm512_set1_epi8(3);
  if constexpr (T == DType::Q4_K) {
    return _mm512_and_si512(_mm512_srlv_epi16(bcast256(blk + 16 + 32 * k), halves16(0, 4)), m4);
  } else if constexpr (T == DType::Q5_K) {
    const __m512i lo = _mm512_and_si512(_mm512_srlv_epi16(bcast256(blk + 48 + 32 * k), halves16(0, 4)), m4);
    const __mmask64 hb = _mm512_test_epi8_mask(bcast256(blk + 16), halves8(1 << (2 * k), 1 << (2 * k + 1)));
    return _mm512_mask_add_epi8(lo, hb, lo, _mm512_set1_epi8(16));
  } else if constexpr (T == DType::Q6_K) {
    const int h = k / 2, r = k % 2;
    const __m512i v = _mm512_loadu_si512(blk + 64 * h);
    const __m512i lo = _mm512_and_si512(r ? _mm512_srli_epi16(v, 4) : v, m4);
    const __m512i hb = _mm512_and_si512(_mm512_srlv_epi16(bcast256(blk + 128 + 32 * h), halves16(4 * r, 4 * r + 2)), m3);
    return _mm512_or_si512(lo, _mm512_slli_epi16(hb, 4));
  } else if constexpr (T == DType::Q2_K) {
    const int h = k / 2, j0 = 2 * (k % 2);
    return _mm512_and_si512(_mm512_srlv_epi16(bcast256(blk + 16 + 32 * h), halves16(2 * j0, 2 * j0 + 2)), m3);
  } else {  // Q3_K
    const int h = k / 2, j0 = 2 * (k % 2);
    const __m512i lo = _mm512_and_si512(_mm512_srlv_epi16(bcast256(blk + 32 + 32 * h), halves16(2 * j0, 2 * j0 + 2)), m3);
    const __mmask64 hb = _mm512_test_epi8_mask(bcast256(blk), halves8(1 << (4 * h + j0), 1 << (4 * h + j0 + 1)));
    return _mm512_mask_add_epi8(lo, hb, lo, _mm512_set1_epi8(4));
  }
}

// Scale vector for elements 64k..64k+63: int16 lane i (elements 2i, 2i+1) gets s[4k + i/8].
inline __m512i scale_quad(__m256i s16, int k) {
  alignas(64) static const int16_t idx[4][32] = {
      {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3},
      {4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7},
      {8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 10, 10, 10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 11, 11, 11},
      {12, 12, 12, 12, 12, 12, 12, 12, 13, 13, 13, 13, 13, 13, 13, 13, 14, 14, 14, 14, 14, 14, 14, 14, 15, 15, 15, 15, 15, 15, 15, 15}};
  return _mm512_permutexvar_epi16(_mm512_load_si512(idx[k]), _mm512_zextsi256_si512(s16));
}

bool has_vnni() {
  static const bool v = __builtin_cpu_supports("avx512vnni");
  return v;
}

// isum += sum over int16 pairs of p * s, as int32 (vpdpwssd, or madd + add without VNNI).
template <bool VNNI>
inline __m512i dot_pairs(__m512i acc, __m512i p, __m512i s) {
  if constexpr (VNNI) return _mm512_dpwssd_epi32(acc, p, s);
  else return _mm512_add_epi32(acc, _mm512_madd_epi16(p, s));
}

struct Tile {
  const uint8_t* w;
  size_t ws;
  const int8_t* xq;
  int64_t ldq;
  const float* xd;
  const int16_t* xbs;
  int64_t nb;
  float* y;
  int64_t ldy;
};

template <DType T>
constexpr size_t kBlockBytes = T == DType::Q2_K ? sizeof(BlockQ2_K) : T == DType::Q3_K ? sizeof(BlockQ3_K)
                             : T == DType::Q4_K ? sizeof(BlockQ4_K) : T == DType::Q5_K ? sizeof(BlockQ5_K)
                                                                                       : sizeof(BlockQ6_K);

template <DType T, bool VNNI, int RN, int RM>
void tile(const Tile& a) {
  constexpr size_t BB = kBlockBytes<T>;
  __m512 acc[RN][RM];
  for (int i = 0; i < RN; ++i)
    for (int j = 0; j < RM; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t b = 0; b < a.nb; ++b) {
    KqScales sc[RN];
    __m512i isum[RN][RM];
    for (int i = 0; i < RN; ++i) {
      sc[i] = kq_scales<T>(a.w + i * a.ws + b * BB);
      for (int j = 0; j < RM; ++j) isum[i][j] = _mm512_setzero_si512();
    }
    // Unrolled so every shift count, mask and permutation index is a constant.
#pragma GCC unroll 8
    for (int k = 0; k < 4; ++k) {
      __m512i xv[RM];
      for (int j = 0; j < RM; ++j) xv[j] = _mm512_loadu_si512(a.xq + j * a.ldq + b * 256 + 64 * k);
      for (int i = 0; i < RN; ++i) {
        const __m512i u = codes<T>(a.w + i * a.ws + b * BB, k);
        const __m512i s = scale_quad(sc[i].s, k);
        for (int j = 0; j < RM; ++j) isum[i][j] = dot_pairs<VNNI>(isum[i][j], _mm512_maddubs_epi16(u, xv[j]), s);
      }
    }
    for (int j = 0; j < RM; ++j) {
      const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.xbs + j * a.nb * 16 + b * 16));
      const float dy = a.xd[j * a.nb + b];
      for (int i = 0; i < RN; ++i) {
        const __m512i ms = _mm512_zextsi256_si512(_mm256_madd_epi16(sc[i].m, bs));
        if constexpr (kq_sym(T)) {
          acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(isum[i][j], ms)), _mm512_set1_ps(dy * sc[i].D), acc[i][j]);
        } else {
          acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[i][j]), _mm512_set1_ps(dy * sc[i].D), acc[i][j]);
          acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ms), _mm512_set1_ps(-(dy * sc[i].Dmin)), acc[i][j]);
        }
      }
    }
  }
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) a.y[j * a.ldy + i] = _mm512_reduce_add_ps(acc[i][j]);
}

template <DType T, bool VNNI>
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
    for (; n + 4 <= n1; n += 4) {
      at(n, 0);
      tile<T, VNNI, 4, 1>(t);
    }
    for (; n < n1; ++n) {
      at(n, 0);
      tile<T, VNNI, 1, 1>(t);
    }
    return;
  }
  // Prefill: weight rows in blocks that stay in L2 while every RM-row activation tile passes.
  constexpr int RN = 2, RM = 4;
  const int64_t NB = std::max<int64_t>(RN, static_cast<int64_t>((192 * 1024) / std::max<size_t>(1, m.wstride)) / RN * RN);
  for (int64_t nb = n0; nb < n1; nb += NB) {
    const int64_t ne = std::min(n1, nb + NB);
    for (int64_t j = 0; j < m.M; j += RM) {
      const int rm = static_cast<int>(std::min<int64_t>(RM, m.M - j));
      int64_t n = nb;
      for (; n + RN <= ne; n += RN) {
        at(n, j);
        switch (rm) {
          case 1: tile<T, VNNI, RN, 1>(t); break;
          case 2: tile<T, VNNI, RN, 2>(t); break;
          case 3: tile<T, VNNI, RN, 3>(t); break;
          default: tile<T, VNNI, RN, 4>(t); break;
        }
      }
      for (; n < ne; ++n) {
        at(n, j);
        switch (rm) {
          case 1: tile<T, VNNI, 1, 1>(t); break;
          case 2: tile<T, VNNI, 1, 2>(t); break;
          case 3: tile<T, VNNI, 1, 3>(t); break;
          default: tile<T, VNNI, 1, 4>(t); break;
        }
      }
    }
  }
}

template <DType T>
void rows_isa(const MatArgs& m, int64_t n0, int64_t n1) {
  if (has_vnni()) return rows<T, true>(m, n0, n1);
  return rows<T, false>(m, n0, n1);
}

}  // namespace

void kquant_rows(const MatArgs& m, int64_t n0, int64_t n1) {
  switch (m.wt) {
    case DType::Q2_K: return rows_isa<DType::Q2_K>(m, n0, n1);
    case DType::Q3_K: return rows_isa<DType::Q3_K>(m, n0, n1);
    case DType::Q4_K: return rows_isa<DType::Q4_K>(m, n0, n1);
    case DType::Q5_K: return rows_isa<DType::Q5_K>(m, n0, n1);
    default: return rows_isa<DType::Q6_K>(m, n0, n1);
  }
}

}  // namespace kvscope::kernels::detail::avx512
