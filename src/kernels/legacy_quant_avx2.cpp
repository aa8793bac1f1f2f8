// AVX2 rows for Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS: each 32-block is unpacked in registers to 32
// byte codes (never to floats) and multiplied with the int8 activations by maddubs: unsigned codes
// (Q4_1 0..15, Q5_x 0..31) directly, Q5_0's -16 offset removed with the activation block sum, the
// signed IQ4 codebook values with the sign trick (|w| times x carrying w's sign). Tiles of 4 weight
// rows x 2 activation rows reuse each unpacked block for both activation rows.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/legacy_quant.h"
#include "kernels/avx2_common.h"

namespace kvscope::kernels::legacy::avx2 {

namespace {

using detail::MatArgs;

inline float h2f(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

using simd256::hsum;

// 16 packed bytes -> 32 codes: low nibbles are elements 0..15, high nibbles 16..31.
inline __m256i nibbles(const uint8_t* qs) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i m4 = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v, 4), m4), _mm_and_si128(v, m4));
}

// Byte j = 0x10 where bit j of qh is set (the 5th bit of Q5 element j).
inline __m256i fifth_bits(const uint8_t* p) {
  uint32_t qh;
  std::memcpy(&qh, p, 4);
  const __m256i byte_of = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
  const __m256i bit_of = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  __m256i r = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)), byte_of);
  r = _mm256_cmpeq_epi8(_mm256_and_si256(r, bit_of), bit_of);
  return _mm256_and_si256(r, _mm256_set1_epi8(0x10));
}

inline __m256i iq4_table() {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4Values)));
}

template <DType T>
struct Traits {
  static constexpr size_t kBytes = T == DType::Q4_1 ? 20 : T == DType::Q5_0 ? 22 : T == DType::Q5_1 ? 24 : 18;
  static constexpr bool kAffine = T == DType::Q4_1 || T == DType::Q5_1;  // has a min term (Q8_1 activations)
  static constexpr bool kSigned = T == DType::IQ4_NL;                       // codes are signed values
  static __m256i codes(const uint8_t* blk, const __m256i& table) {
    if constexpr (T == DType::Q4_1) return nibbles(blk + 4);
    if constexpr (T == DType::Q5_0) return _mm256_or_si256(nibbles(blk + 6), fifth_bits(blk + 2));
    if constexpr (T == DType::Q5_1) return _mm256_or_si256(nibbles(blk + 8), fifth_bits(blk + 4));
    return _mm256_shuffle_epi8(table, nibbles(blk + 2));
  }
};

struct Tile {
  const uint8_t* w;
  size_t ws;
  const int8_t* xq;
  int64_t ldq;
  const float* xd;
  const int32_t* xs;
  const float* xsd;
  int64_t nb;
  float* y;
  int64_t ldy;
};

template <DType T, int RN, int RM>
void tile32(const Tile& a) {
  using Tr = Traits<T>;
  __m256 acc[RM][RN];
  float macc[RM][RN] = {};
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) acc[j][i] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i table = iq4_table();
  for (int64_t b = 0; b < a.nb; ++b) {
    __m256i wv[RN], aw[RN];
    float dw[RN], mw[RN];
    for (int i = 0; i < RN; ++i) {
      const uint8_t* blk = a.w + i * a.ws + b * Tr::kBytes;
      dw[i] = h2f(blk);
      if constexpr (Tr::kAffine) mw[i] = h2f(blk + 2);
      wv[i] = Tr::codes(blk, table);
      if constexpr (Tr::kSigned) aw[i] = _mm256_sign_epi8(wv[i], wv[i]);
    }
    for (int j = 0; j < RM; ++j) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.xq + j * a.ldq + b * 32));
      const float dx = a.xd[j * a.nb + b];
      __m256i corr = _mm256_setzero_si256();
      if constexpr (T == DType::Q5_0) corr = _mm256_castsi128_si256(_mm_cvtsi32_si128(-16 * a.xs[j * a.nb + b]));
      for (int i = 0; i < RN; ++i) {
        __m256i p;
        if constexpr (Tr::kSigned)
          p = _mm256_madd_epi16(_mm256_maddubs_epi16(aw[i], _mm256_sign_epi8(xv, wv[i])), ones);
        else
          p = _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(wv[i], xv), ones), corr);
        acc[j][i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(dw[i] * dx), acc[j][i]);
        if constexpr (Tr::kAffine) macc[j][i] += mw[i] * a.xsd[j * a.nb + b];
      }
    }
  }
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) a.y[j * a.ldy + i] = hsum(acc[j][i]) + macc[j][i];
}

// IQ4_XS against Q8_K: per sub-block the signed codebook dot (sign trick) is weighted by the
// sub-block's integer scale inside madd, summed exactly in int32 over the super-block, then scaled.
template <int RN, int RM>
void tile_xs(const Tile& a) {
  __m256 acc[RM][RN];
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) acc[j][i] = _mm256_setzero_ps();
  const __m256i table = iq4_table();
  for (int64_t b = 0; b < a.nb; ++b) {
    __m256i isum[RM][RN];
    for (int j = 0; j < RM; ++j)
      for (int i = 0; i < RN; ++i) isum[j][i] = _mm256_setzero_si256();
    for (int s = 0; s < 8; ++s) {
      for (int i = 0; i < RN; ++i) {
        const uint8_t* blk = a.w + i * a.ws + b * sizeof(BlockIQ4_XS);
        const __m256i wv = _mm256_shuffle_epi8(table, nibbles(blk + 8 + 16 * s));
        const __m256i aw = _mm256_sign_epi8(wv, wv);
        const __m256i sc = _mm256_set1_epi16(static_cast<int16_t>(iq4xs_scale(blk, s)));
        for (int j = 0; j < RM; ++j) {
          const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.xq + j * a.ldq + b * 256 + 32 * s));
          const __m256i p16 = _mm256_maddubs_epi16(aw, _mm256_sign_epi8(xv, wv));
          isum[j][i] = _mm256_add_epi32(isum[j][i], _mm256_madd_epi16(p16, sc));
        }
      }
    }
    for (int i = 0; i < RN; ++i) {
      const float dw = h2f(a.w + i * a.ws + b * sizeof(BlockIQ4_XS));
      for (int j = 0; j < RM; ++j)
        acc[j][i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[j][i]), _mm256_set1_ps(dw * a.xd[j * a.nb + b]), acc[j][i]);
    }
  }
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) a.y[j * a.ldy + i] = hsum(acc[j][i]);
}

template <DType T, int RN, int RM>
inline void tile(const Tile& a) {
  if constexpr (T == DType::IQ4_XS)
    tile_xs<RN, RM>(a);
  else
    tile32<T, RN, RM>(a);
}

template <DType T, int RM>
void disp_rn(int rn, const Tile& a) {
  switch (rn) {
    case 1: return tile<T, 1, RM>(a);
    case 2: return tile<T, 2, RM>(a);
    case 3: return tile<T, 3, RM>(a);
    default: return tile<T, 4, RM>(a);
  }
}

template <DType T>
void rows(const MatArgs& m, int64_t n0, int64_t n1) {
  constexpr int RN = 4, RM = 2;
  Tile a{nullptr, m.wstride, nullptr, m.x.ldq, nullptr, nullptr, nullptr, m.x.nb, nullptr, m.ldy};
  // Weight rows in L2-sized blocks, each reused for every activation tile.
  const int64_t NB = std::max<int64_t>(RN, (192 * 1024 / static_cast<int64_t>(std::max<size_t>(1, m.wstride))) / RN * RN);
  for (int64_t nb = n0; nb < n1; nb += NB) {
    const int64_t ne = std::min(n1, nb + NB);
    for (int64_t j = 0; j < m.M; j += RM) {
      const int rm = static_cast<int>(std::min<int64_t>(RM, m.M - j));
      a.xq = m.x.q + j * m.x.ldq;
      a.xd = m.x.d + j * m.x.nb;
      if (m.x.s) a.xs = m.x.s + j * m.x.nb;
      if (m.x.sd) a.xsd = m.x.sd + j * m.x.nb;
      for (int64_t n = nb; n < ne; n += RN) {
        const int rn = static_cast<int>(std::min<int64_t>(RN, ne - n));
        a.w = m.w + n * m.wstride;
        a.y = m.y + j * m.ldy + n;
        if (rm == 1)
          disp_rn<T, 1>(rn, a);
        else
          disp_rn<T, 2>(rn, a);
      }
    }
  }
}

}  // namespace

void matmul_rows(const MatArgs& m, int64_t n0, int64_t n1) {
  if (m.packed) return m.wt == DType::IQ4_XS ? detail::avx2::kq_packed_rows(m, n0, n1) : detail::avx2::packed_matmul_rows(m, n0, n1);
  switch (m.wt) {
    case DType::Q4_1: return rows<DType::Q4_1>(m, n0, n1);
    case DType::Q5_0: return rows<DType::Q5_0>(m, n0, n1);
    case DType::Q5_1: return rows<DType::Q5_1>(m, n0, n1);
    case DType::IQ4_NL: return rows<DType::IQ4_NL>(m, n0, n1);
    case DType::IQ4_XS: return rows<DType::IQ4_XS>(m, n0, n1);
    default: return scalar::matmul_rows(m, n0, n1);
  }
}

}  // namespace kvscope::kernels::legacy::avx2
