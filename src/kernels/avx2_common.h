// Shared prelude of the AVX2 translation units (only *_avx2.cpp files include it: they are the ones
// compiled with the AVX2/FMA flags).
#pragma once
#include <immintrin.h>

namespace kvscope::simd256 {

// The sum of the 8 lanes.
inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace kvscope::simd256
