// Block-scale extraction for the K-quant SIMD kernels (included only by kquant_avx2.cpp and
// kquant_avx512.cpp). Everything here has internal linkage: each ISA's translation unit gets its own
// copy compiled with its own flags, so the linker can never hand AVX-512 code to the AVX2 path.
#pragma once
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dtype.h"

namespace kvscope::kernels::detail {
namespace {  // NOLINT: internal linkage on purpose (see above)

inline float kq_h2f(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}
inline uint64_t kq_ld64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t kq_ld32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Per-16-element scales s (int16 x16) and offsets m (int16 x16) of a block, and D / Dmin; see
// kquant.h for the decomposition. Values are identical to kquant::block_scales.
struct KqScales {
  __m256i s, m;
  float D, Dmin;
};

// 8 unsigned bytes -> 16 int16, each repeated twice (a 32-element scale covers two 16-blocks).
inline __m256i kq_dup8(uint64_t v) {
  const __m128i w = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<long long>(v)));
  return _mm256_set_m128i(_mm_unpackhi_epi16(w, w), _mm_unpacklo_epi16(w, w));
}

template <DType T>
inline KqScales kq_scales(const uint8_t* blk) {
  KqScales r;
  if constexpr (T == DType::Q4_K || T == DType::Q5_K) {
    // 12 bytes: bytes 0-3 scales 0-3 (low 6 bits), 4-7 mins 0-3; bytes 8-11 the low nibbles of
    // scales 4-7 (low) and mins 4-7 (high); the top 2 bits of bytes 0-7 are the high bits of 4-7.
    const uint8_t* q = blk + 4;
    const uint32_t a = kq_ld32(q), b = kq_ld32(q + 4), c = kq_ld32(q + 8);
    constexpr uint32_t k6 = 0x3f3f3f3fu, k4 = 0x0f0f0f0fu, k2 = 0x03030303u;
    const uint32_t sc_lo = a & k6, mn_lo = b & k6;
    const uint32_t sc_hi = (c & k4) | (((a >> 6) & k2) << 4);
    const uint32_t mn_hi = ((c >> 4) & k4) | (((b >> 6) & k2) << 4);
    r.s = kq_dup8(sc_lo | (static_cast<uint64_t>(sc_hi) << 32));
    r.m = kq_dup8(mn_lo | (static_cast<uint64_t>(mn_hi) << 32));
    r.D = kq_h2f(blk);
    r.Dmin = kq_h2f(blk + 2);
  } else if constexpr (T == DType::Q6_K) {
    r.s = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + offsetof(BlockQ6_K, scales))));
    r.m = _mm256_slli_epi16(r.s, 5);
    r.D = r.Dmin = kq_h2f(blk + offsetof(BlockQ6_K, d));
  } else if constexpr (T == DType::Q2_K) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk));
    const __m128i m4 = _mm_set1_epi8(0x0f);
    r.s = _mm256_cvtepu8_epi16(_mm_and_si128(v, m4));
    r.m = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(v, 4), m4));
    r.D = kq_h2f(blk + offsetof(BlockQ2_K, d));
    r.Dmin = kq_h2f(blk + offsetof(BlockQ2_K, dmin));
  } else {  // Q3_K: low nibbles in bytes 0-7 (scales 0-7 low, 8-15 high), top 2 bits in bytes 8-11
    const uint8_t* q = blk + offsetof(BlockQ3_K, scales);
    const uint64_t a = kq_ld64(q);
    const uint32_t h = kq_ld32(q + 8);
    constexpr uint64_t k4 = 0x0f0f0f0f0f0f0f0full;
    constexpr uint32_t k2 = 0x03030303u;
    const uint64_t h0 = (h & k2) | (static_cast<uint64_t>((h >> 2) & k2) << 32);
    const uint64_t h1 = ((h >> 4) & k2) | (static_cast<uint64_t>((h >> 6) & k2) << 32);
    const uint64_t b0 = (a & k4) | (h0 << 4), b1 = ((a >> 4) & k4) | (h1 << 4);
    const __m128i u = _mm_set_epi64x(static_cast<long long>(b1), static_cast<long long>(b0));
    r.s = _mm256_cvtepi8_epi16(_mm_sub_epi8(u, _mm_set1_epi8(32)));
    r.m = _mm256_slli_epi16(r.s, 2);
    r.D = r.Dmin = kq_h2f(blk + offsetof(BlockQ3_K, d));
  }
  return r;
}

constexpr bool kq_sym(DType t) { return t == DType::Q3_K || t == DType::Q6_K; }

}  // namespace
}  // namespace kvscope::kernels::detail
