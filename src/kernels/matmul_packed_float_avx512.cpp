// AVX-512 matmul over packed float weights (pack_weight): F32, F16 or BF16 in groups of 16 rows
// stored column by column, so one load is element k of 16 output rows (widened to F32 in a
// register) and y[16 rows] += w[k] * x[k] is one FMA with a broadcast activation. Decode reads each group as one sequential stream (row-major
// tiles read 8 rows at a time gave the prefetcher 8 short streams); prefill runs a register tile
// of 2 groups x 8 activation rows over L1-sized chunks of K, reusing each weight load 8 times.
#include "kernels/avx512_common.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/internal.h"

namespace kvscope::kernels::detail::avx512 {

namespace {

// Element k of a group's 16 rows, as 16 floats.
struct Col32 {
  using T = float;
  static __m512 load(const T* w, int64_t k) { return _mm512_load_ps(w + 16 * k); }
};
struct Col16 {
  using T = uint16_t;
  static __m512 load(const T* w, int64_t k) {
    return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(w + 16 * k)));
  }
};
struct ColBF16 {
  using T = uint16_t;
  static __m512 load(const T* w, int64_t k) {
    const __m256i h = _mm256_load_si256(reinterpret_cast<const __m256i*>(w + 16 * k));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
};

inline __mmask16 lane_mask(int64_t n0, int64_t n1, int64_t r0) {
  const int64_t lo = std::max(n0, r0) - r0, hi = std::min(n1, r0 + kPackRows) - r0;
  return static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

// One group, one activation row, all of K: four accumulators over k mod 4 hide the FMA latency.
template <class L>
void gemv_group(const typename L::T* w, const float* x, int64_t K, float* y, __mmask16 lanes) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t k = 0;
  for (; k + 4 <= K; k += 4) {
    a0 = _mm512_fmadd_ps(L::load(w, k), _mm512_set1_ps(x[k]), a0);
    a1 = _mm512_fmadd_ps(L::load(w, k + 1), _mm512_set1_ps(x[k + 1]), a1);
    a2 = _mm512_fmadd_ps(L::load(w, k + 2), _mm512_set1_ps(x[k + 2]), a2);
    a3 = _mm512_fmadd_ps(L::load(w, k + 3), _mm512_set1_ps(x[k + 3]), a3);
  }
  for (; k < K; ++k) a0 = _mm512_fmadd_ps(L::load(w, k), _mm512_set1_ps(x[k]), a0);
  _mm512_mask_storeu_ps(y, lanes, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

template <class L>
struct Tile {
  const typename L::T* w;  // first group's column k0
  int64_t gs;       // floats between groups
  const float* x;   // activation row m0, column k0
  int64_t ldx;
  int64_t kc;
  float* y;         // row m0, first group's first row
  int64_t ldy;
  __mmask16 lanes[2];
  bool add;         // accumulate into y (not the first chunk of K)
};

template <class L, int RG, int RM>
void tile(const Tile<L>& t) {
  __m512 acc[RM][RG];
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RG; ++i)
      acc[j][i] = t.add ? _mm512_maskz_loadu_ps(t.lanes[i], t.y + j * t.ldy + 16 * i) : _mm512_setzero_ps();
  for (int64_t k = 0; k < t.kc; ++k) {
    __m512 w[RG];
    for (int i = 0; i < RG; ++i) w[i] = L::load(t.w + i * t.gs, k);
    for (int j = 0; j < RM; ++j) {
      const __m512 xb = _mm512_set1_ps(t.x[j * t.ldx + k]);
      for (int i = 0; i < RG; ++i) acc[j][i] = _mm512_fmadd_ps(w[i], xb, acc[j][i]);
    }
  }
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RG; ++i) _mm512_mask_storeu_ps(t.y + j * t.ldy + 16 * i, t.lanes[i], acc[j][i]);
}

template <class L, int RG>
void tile_disp(int rm, const Tile<L>& t) {
  switch (rm) {
    case 1: return tile<L, RG, 1>(t);
    case 2: return tile<L, RG, 2>(t);
    case 3: return tile<L, RG, 3>(t);
    case 4: return tile<L, RG, 4>(t);
    case 5: return tile<L, RG, 5>(t);
    case 6: return tile<L, RG, 6>(t);
    case 7: return tile<L, RG, 7>(t);
    default: return tile<L, RG, 8>(t);
  }
}

template <class L>
void rows(const MatArgs& m, int64_t n0, int64_t n1) {
  const auto* w = reinterpret_cast<const typename L::T*>(m.packed);
  const int64_t K = m.K, gs = K * kPackRows;
  const int64_t g0 = n0 / kPackRows, g1 = (n1 + kPackRows - 1) / kPackRows;
  if (m.M == 1) {
    for (int64_t g = g0; g < g1; ++g)
      gemv_group<L>(w + g * gs, m.x.f, K, m.y + g * kPackRows, lane_mask(n0, n1, g * kPackRows));
    return;
  }
  constexpr int RM = 8;
  const int64_t KC = K <= 192 ? K : 128;  // 2 groups x 128 columns x 64 bytes = 16 KiB of L1 (F32)
  [[maybe_unused]] float* wide = nullptr;
  if constexpr (!std::is_same_v<L, Col32>)
    wide = static_cast<float*>(scratch(7, static_cast<size_t>(2 * KC * kPackRows) * sizeof(float)));
  for (int64_t k0 = 0; k0 < K; k0 += KC) {
    Tile<L> t{};
    t.gs = gs;
    t.ldx = m.x.ldf;
    t.ldy = m.ldy;
    t.kc = std::min(KC, K - k0);
    t.add = k0 > 0;
    for (int64_t g = g0; g < g1; g += 2) {
      const int rg = g + 1 < g1 ? 2 : 1;
      t.w = w + g * gs + k0 * kPackRows;
      t.lanes[0] = lane_mask(n0, n1, g * kPackRows);
      t.lanes[1] = rg == 2 ? lane_mask(n0, n1, (g + 1) * kPackRows) : 0;
      if constexpr (!std::is_same_v<L, Col32>) {
        if (m.M > RM) {
          // Widen the chunk to F32 once (16 KiB, stays in L1) instead of once per tile of RM rows:
          // the inner loop is then loads and FMAs only.
          Tile<Col32> t32{};
          t32.gs = t.kc * kPackRows;
          t32.ldx = t.ldx;
          t32.ldy = t.ldy;
          t32.kc = t.kc;
          t32.add = t.add;
          t32.lanes[0] = t.lanes[0];
          t32.lanes[1] = t.lanes[1];
          for (int i = 0; i < rg; ++i)
            for (int64_t k = 0; k < t.kc; ++k) _mm512_store_ps(wide + (i * t.kc + k) * kPackRows, L::load(t.w + i * gs, k));
          t32.w = wide;
          for (int64_t m0 = 0; m0 < m.M; m0 += RM) {
            const int rm = static_cast<int>(std::min<int64_t>(RM, m.M - m0));
            t32.x = m.x.f + m0 * m.x.ldf + k0;
            t32.y = m.y + m0 * m.ldy + g * kPackRows;
            if (rg == 2)
              tile_disp<Col32, 2>(rm, t32);
            else
              tile_disp<Col32, 1>(rm, t32);
          }
          continue;
        }
      }
      for (int64_t m0 = 0; m0 < m.M; m0 += RM) {
        const int rm = static_cast<int>(std::min<int64_t>(RM, m.M - m0));
        t.x = m.x.f + m0 * m.x.ldf + k0;
        t.y = m.y + m0 * m.ldy + g * kPackRows;
        if (rg == 2)
          tile_disp<L, 2>(rm, t);
        else
          tile_disp<L, 1>(rm, t);
      }
    }
  }
}

// BF16 with vdpbf16ps (pair layout, bf16_pair_layout()): one instruction multiplies two columns of
// 16 rows by a broadcast activation pair and adds both products, twice the work of an FMA. The
// activations are BF16-exact already (rounded by the matmul driver), so their pairs are the high
// halves of the floats. Products of two bf16 are exact in F32; the instruction treats bf16
// denormals as zero, as llama.cpp's BF16 dot product on the same CPUs does.
void bf16_pairs(const float* x, int64_t K, uint32_t* xp) {
  const int64_t kp = (K + 1) / 2;
  uint32_t bits[2];
  for (int64_t p = 0; p < kp; ++p) {
    for (int h = 0; h < 2; ++h) {
      const int64_t k = 2 * p + h;
      uint32_t v = 0;
      if (k < K) std::memcpy(&v, x + k, 4);
      bits[h] = v >> 16;
    }
    xp[p] = bits[0] | (bits[1] << 16);
  }
}

template <int RG, int RM>
void dp_tile(const uint16_t* w, int64_t gs, const uint32_t* xp, int64_t ldxp, int64_t pc, float* y, int64_t ldy,
             const __mmask16* lanes, bool add) {
  __m512 acc[RM][RG];
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RG; ++i) acc[j][i] = add ? _mm512_maskz_loadu_ps(lanes[i], y + j * ldy + 16 * i) : _mm512_setzero_ps();
  for (int64_t p = 0; p < pc; ++p) {
    __m512bh wv[RG];
    for (int i = 0; i < RG; ++i) wv[i] = (__m512bh)_mm512_load_si512(w + i * gs + 32 * p);
    for (int j = 0; j < RM; ++j) {
      const __m512bh xb = (__m512bh)_mm512_set1_epi32(static_cast<int>(xp[j * ldxp + p]));
      for (int i = 0; i < RG; ++i) acc[j][i] = _mm512_dpbf16_ps(acc[j][i], wv[i], xb);
    }
  }
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RG; ++i) _mm512_mask_storeu_ps(y + j * ldy + 16 * i, lanes[i], acc[j][i]);
}

template <int RG>
void dp_disp(int rm, const uint16_t* w, int64_t gs, const uint32_t* xp, int64_t ldxp, int64_t pc, float* y, int64_t ldy,
             const __mmask16* lanes, bool add) {
  switch (rm) {
    case 1: return dp_tile<RG, 1>(w, gs, xp, ldxp, pc, y, ldy, lanes, add);
    case 2: return dp_tile<RG, 2>(w, gs, xp, ldxp, pc, y, ldy, lanes, add);
    case 3: return dp_tile<RG, 3>(w, gs, xp, ldxp, pc, y, ldy, lanes, add);
    case 4: return dp_tile<RG, 4>(w, gs, xp, ldxp, pc, y, ldy, lanes, add);
    case 5: return dp_tile<RG, 5>(w, gs, xp, ldxp, pc, y, ldy, lanes, add);
    case 6: return dp_tile<RG, 6>(w, gs, xp, ldxp, pc, y, ldy, lanes, add);
    case 7: return dp_tile<RG, 7>(w, gs, xp, ldxp, pc, y, ldy, lanes, add);
    default: return dp_tile<RG, 8>(w, gs, xp, ldxp, pc, y, ldy, lanes, add);
  }
}

void rows_bf16_pairs(const MatArgs& m, int64_t n0, int64_t n1) {
  const auto* w = reinterpret_cast<const uint16_t*>(m.packed);
  const int64_t K = m.K, kp = (K + 1) / 2, gs = kp * kPackRows * 2;  // uint16s per group
  const int64_t ldxp = (kp + 15) & ~int64_t{15};
  auto* xp = static_cast<uint32_t*>(scratch(7, static_cast<size_t>(m.M * ldxp) * 4 + 64));
  for (int64_t j = 0; j < m.M; ++j) bf16_pairs(m.x.f + j * m.x.ldf, K, xp + j * ldxp);
  const int64_t g0 = n0 / kPackRows, g1 = (n1 + kPackRows - 1) / kPackRows;
  if (m.M == 1) {
    for (int64_t g = g0; g < g1; ++g) {
      const uint16_t* wg = w + g * gs;
      __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      int64_t p = 0;
      for (; p + 4 <= kp; p += 4) {
        a0 = _mm512_dpbf16_ps(a0, (__m512bh)_mm512_load_si512(wg + 32 * p), (__m512bh)_mm512_set1_epi32(static_cast<int>(xp[p])));
        a1 = _mm512_dpbf16_ps(a1, (__m512bh)_mm512_load_si512(wg + 32 * p + 32), (__m512bh)_mm512_set1_epi32(static_cast<int>(xp[p + 1])));
        a2 = _mm512_dpbf16_ps(a2, (__m512bh)_mm512_load_si512(wg + 32 * p + 64), (__m512bh)_mm512_set1_epi32(static_cast<int>(xp[p + 2])));
        a3 = _mm512_dpbf16_ps(a3, (__m512bh)_mm512_load_si512(wg + 32 * p + 96), (__m512bh)_mm512_set1_epi32(static_cast<int>(xp[p + 3])));
      }
      for (; p < kp; ++p)
        a0 = _mm512_dpbf16_ps(a0, (__m512bh)_mm512_load_si512(wg + 32 * p), (__m512bh)_mm512_set1_epi32(static_cast<int>(xp[p])));
      _mm512_mask_storeu_ps(m.y + g * kPackRows, lane_mask(n0, n1, g * kPackRows), _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    }
    return;
  }
  constexpr int RM = 8;
  const int64_t PC = kp <= 96 ? kp : 64;  // 2 groups x 64 pairs x 64 bytes = 8 KiB of L1
  for (int64_t p0 = 0; p0 < kp; p0 += PC) {
    const int64_t pc = std::min(PC, kp - p0);
    for (int64_t g = g0; g < g1; g += 2) {
      const int rg = g + 1 < g1 ? 2 : 1;
      const __mmask16 lanes[2] = {lane_mask(n0, n1, g * kPackRows), rg == 2 ? lane_mask(n0, n1, (g + 1) * kPackRows) : __mmask16{0}};
      for (int64_t m0 = 0; m0 < m.M; m0 += RM) {
        const int rm = static_cast<int>(std::min<int64_t>(RM, m.M - m0));
        const uint16_t* wt = w + g * gs + 32 * p0;
        float* yt = m.y + m0 * m.ldy + g * kPackRows;
        if (rg == 2)
          dp_disp<2>(rm, wt, gs, xp + m0 * ldxp + p0, ldxp, pc, yt, m.ldy, lanes, p0 > 0);
        else
          dp_disp<1>(rm, wt, gs, xp + m0 * ldxp + p0, ldxp, pc, yt, m.ldy, lanes, p0 > 0);
      }
    }
  }
}

}  // namespace

void packed_float_matmul_rows(const MatArgs& m, int64_t n0, int64_t n1) {
  switch (m.wt) {
    case DType::F16: return rows<Col16>(m, n0, n1);
    case DType::BF16:
      if (bf16_pair_layout()) return rows_bf16_pairs(m, n0, n1);
      return rows<ColBF16>(m, n0, n1);
    default: return rows<Col32>(m, n0, n1);
  }
}

}  // namespace kvscope::kernels::detail::avx512
