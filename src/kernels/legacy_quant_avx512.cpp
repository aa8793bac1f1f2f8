// AVX-512 VNNI rows for Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS: two 32-blocks per 512-bit register,
// unpacked to unsigned byte codes and multiplied with the int8 activations by vpdpbusd. Codes that
// are signed (Q5_0's q - 16, IQ4's codebook values) are stored with a bias (q, value + 128) that
// is removed by starting each block's accumulator at -bias * sum(x_block), so no sign trick and no
// 16-bit saturation. An odd last block fills the upper half with zeros. Without VNNI, AVX2 rows.
#include "kernels/avx512_common.h"

#include <algorithm>
#include <cstring>

#include "kernels/legacy_quant.h"

namespace kvscope::kernels::legacy::avx512 {

namespace {

using detail::MatArgs;

inline float h2f(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}
inline uint32_t ld32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Two blocks' 16 packed bytes -> 64 codes: [block0 low nibbles, block0 high, block1 low, block1 high].
inline __m512i nibbles2(const uint8_t* qs0, const uint8_t* qs1) {
  const __m256i v = _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs1)),
                                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs0)));
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
  const __m512i t = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);  // [lo0 lo1 hi0 hi1]
  return _mm512_shuffle_i64x2(t, t, _MM_SHUFFLE(3, 1, 2, 0));
}

// The IQ4 codebook plus 128 (unsigned), in every 128-bit lane for vpshufb.
inline __m512i iq4_table_u8() {
  alignas(16) uint8_t t[16];
  for (int i = 0; i < 16; ++i) t[i] = static_cast<uint8_t>(kIQ4Values[i] + 128);
  return _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(t)));
}

// Lane 0 of each 256-bit half set to a and b (the blocks' accumulator start values).
inline __m512i halves_first(int32_t a, int32_t b) {
  return _mm512_or_si512(_mm512_maskz_set1_epi32(0x0001, a), _mm512_maskz_set1_epi32(0x0100, b));
}
inline __m512 halves_ps(float a, float b) {
  return _mm512_insertf32x8(_mm512_set1_ps(a), _mm256_set1_ps(b), 1);
}

template <DType T>
struct Traits {
  static constexpr size_t kBytes = T == DType::Q4_1 ? 20 : T == DType::Q5_0 ? 22 : T == DType::Q5_1 ? 24 : 18;
  static constexpr bool kAffine = T == DType::Q4_1 || T == DType::Q5_1;
  static constexpr int kBias = T == DType::Q5_0 ? 16 : T == DType::IQ4_NL ? 128 : 0;
  static __m512i codes(const uint8_t* b0, const uint8_t* b1, const __m512i& table) {
    if constexpr (T == DType::Q4_1) return nibbles2(b0 + 4, b1 + 4);
    if constexpr (T == DType::IQ4_NL) return _mm512_shuffle_epi8(table, nibbles2(b0 + 2, b1 + 2));
    constexpr int off = T == DType::Q5_0 ? 2 : 4;
    const __mmask64 hb = static_cast<__mmask64>(ld32(b0 + off)) | (static_cast<__mmask64>(ld32(b1 + off)) << 32);
    return _mm512_or_si512(nibbles2(b0 + off + 4, b1 + off + 4), _mm512_maskz_set1_epi8(hb, 0x10));
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
  const int16_t* bsums;
  int64_t nb;
  float* y;
  int64_t ldy;
};

template <DType T, int RN, int RM>
void tile32(const Tile& a) {
  using Tr = Traits<T>;
  __m512 acc[RM][RN];
  float macc[RM][RN] = {};
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) acc[j][i] = _mm512_setzero_ps();
  const __m512i table = iq4_table_u8();
  for (int64_t b = 0; b < a.nb; b += 2) {
    const bool two = b + 1 < a.nb;
    const __mmask64 xm = two ? ~__mmask64{0} : __mmask64{0xFFFFFFFFu};
    __m512i wv[RN];
    float dw0[RN], dw1[RN], mw0[RN], mw1[RN];
    for (int i = 0; i < RN; ++i) {
      const uint8_t* b0 = a.w + i * a.ws + b * Tr::kBytes;
      const uint8_t* b1 = two ? b0 + Tr::kBytes : b0;
      dw0[i] = h2f(b0);
      dw1[i] = two ? h2f(b1) : 0.0f;
      if constexpr (Tr::kAffine) {
        mw0[i] = h2f(b0 + 2);
        mw1[i] = two ? h2f(b1 + 2) : 0.0f;
      }
      wv[i] = _mm512_maskz_mov_epi8(xm, Tr::codes(b0, b1, table));
    }
    for (int j = 0; j < RM; ++j) {
      const __m512i xv = _mm512_maskz_loadu_epi8(xm, a.xq + j * a.ldq + b * 32);
      const float dx0 = a.xd[j * a.nb + b], dx1 = two ? a.xd[j * a.nb + b + 1] : 0.0f;
      __m512i init = _mm512_setzero_si512();
      if constexpr (Tr::kBias != 0)
        init = halves_first(-Tr::kBias * a.xs[j * a.nb + b], two ? -Tr::kBias * a.xs[j * a.nb + b + 1] : 0);
      float sd0 = 0.0f, sd1 = 0.0f;
      if constexpr (Tr::kAffine) sd0 = a.xsd[j * a.nb + b], sd1 = two ? a.xsd[j * a.nb + b + 1] : 0.0f;
      for (int i = 0; i < RN; ++i) {
        const __m512i p = _mm512_dpbusd_epi32(init, wv[i], xv);
        acc[j][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), halves_ps(dw0[i] * dx0, dw1[i] * dx1), acc[j][i]);
        if constexpr (Tr::kAffine) macc[j][i] += mw0[i] * sd0 + mw1[i] * sd1;
      }
    }
  }
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) a.y[j * a.ldy + i] = _mm512_reduce_add_ps(acc[j][i]) + macc[j][i];
}

// IQ4_XS against Q8_K: sub-block pairs per register; each sub-block's dot (bias removed through the
// Q8_K 16-sums) times its integer scale, summed exactly in int32 over the super-block, then scaled.
template <int RN, int RM>
void tile_xs(const Tile& a) {
  __m512 acc[RM][RN];
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) acc[j][i] = _mm512_setzero_ps();
  const __m512i table = iq4_table_u8();
  for (int64_t b = 0; b < a.nb; ++b) {
    __m512i isum[RM][RN];
    for (int j = 0; j < RM; ++j)
      for (int i = 0; i < RN; ++i) isum[j][i] = _mm512_setzero_si512();
    for (int p = 0; p < 4; ++p) {
      __m512i init[RM], xv[RM];
      for (int j = 0; j < RM; ++j) {
        const int16_t* bs = a.bsums + (j * a.nb + b) * 16 + 4 * p;
        init[j] = halves_first(-128 * (bs[0] + bs[1]), -128 * (bs[2] + bs[3]));
        xv[j] = _mm512_loadu_si512(a.xq + j * a.ldq + b * 256 + 64 * p);
      }
      for (int i = 0; i < RN; ++i) {
        const uint8_t* blk = a.w + i * a.ws + b * sizeof(BlockIQ4_XS);
        const uint8_t* qs = blk + 8 + 32 * p;
        const __m512i wv = _mm512_shuffle_epi8(table, nibbles2(qs, qs + 16));
        const __m512i sc = _mm512_inserti64x4(_mm512_set1_epi32(iq4xs_scale(blk, 2 * p)),
                                              _mm256_set1_epi32(iq4xs_scale(blk, 2 * p + 1)), 1);
        for (int j = 0; j < RM; ++j)
          isum[j][i] = _mm512_add_epi32(isum[j][i], _mm512_mullo_epi32(_mm512_dpbusd_epi32(init[j], wv, xv[j]), sc));
      }
    }
    for (int i = 0; i < RN; ++i) {
      const float dw = h2f(a.w + i * a.ws + b * sizeof(BlockIQ4_XS));
      for (int j = 0; j < RM; ++j)
        acc[j][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[j][i]), _mm512_set1_ps(dw * a.xd[j * a.nb + b]), acc[j][i]);
    }
  }
  for (int j = 0; j < RM; ++j)
    for (int i = 0; i < RN; ++i) a.y[j * a.ldy + i] = _mm512_reduce_add_ps(acc[j][i]);
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
  Tile a{nullptr, m.wstride, nullptr, m.x.ldq, nullptr, nullptr, nullptr, nullptr, m.x.nb, nullptr, m.ldy};
  const int64_t NB = std::max<int64_t>(RN, (192 * 1024 / static_cast<int64_t>(std::max<size_t>(1, m.wstride))) / RN * RN);
  for (int64_t nb = n0; nb < n1; nb += NB) {
    const int64_t ne = std::min(n1, nb + NB);
    for (int64_t j = 0; j < m.M; j += RM) {
      const int rm = static_cast<int>(std::min<int64_t>(RM, m.M - j));
      a.xq = m.x.q + j * m.x.ldq;
      a.xd = m.x.d + j * m.x.nb;
      if (m.x.s) a.xs = m.x.s + j * m.x.nb;
      if (m.x.sd) a.xsd = m.x.sd + j * m.x.nb;
      if (m.x.bs) a.bsums = m.x.bs + j * m.x.nb * 16;
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

bool has_vnni() {
  static const bool v = __builtin_cpu_supports("avx512vnni");
  return v;
}

}  // namespace

void matmul_rows(const MatArgs& m, int64_t n0, int64_t n1) {
  if (m.packed) return m.wt == DType::IQ4_XS ? detail::avx512::kq_packed_rows(m, n0, n1) : detail::avx512::packed_matmul_rows(m, n0, n1);
  if (!has_vnni()) return avx2::matmul_rows(m, n0, n1);
  switch (m.wt) {
    case DType::Q4_1: return rows<DType::Q4_1>(m, n0, n1);
    case DType::Q5_0: return rows<DType::Q5_0>(m, n0, n1);
    case DType::Q5_1: return rows<DType::Q5_1>(m, n0, n1);
    case DType::IQ4_NL: return rows<DType::IQ4_NL>(m, n0, n1);
    case DType::IQ4_XS: return rows<DType::IQ4_XS>(m, n0, n1);
    default: return scalar::matmul_rows(m, n0, n1);
  }
}

}  // namespace kvscope::kernels::legacy::avx512
