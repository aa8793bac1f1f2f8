// AVX2+FMA element-wise ops.
#include <immintrin.h>

#include <cmath>

#include "kernels/internal.h"
#include "kernels/avx2_common.h"

namespace kvscope::kernels::detail::avx2 {

namespace {
using simd256::hsum;
inline float hmax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// exp(x) with ~2 ulp error (Cephes polynomial); 0 below -87.3, clamped above 88.37.
inline __m256 exp8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.3f);
  const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  x = _mm256_min_ps(_mm256_max_ps(x, lo), _mm256_set1_ps(88.37f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500E-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507E-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073E-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894E-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459E-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201E-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(under, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

// tanh(x): odd polynomial (Cephes tanhf) below |x| = 0.625, where 1 - 2/(e^2x + 1) would lose
// digits to cancellation; that form above it (saturates to +-1 through exp8's clamp).
inline __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 ax = _mm256_andnot_ps(sign, x);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 big = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f),
                                                      _mm256_add_ps(exp8(_mm256_add_ps(ax, ax)), one)));
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-5.70498872745E-3f);
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(2.06390887954E-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-5.37397155531E-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.33314422036E-1f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-3.33332819422E-1f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), x, x);
  const __m256 use_big = _mm256_cmp_ps(ax, _mm256_set1_ps(0.625f), _CMP_GE_OQ);
  return _mm256_blendv_ps(small, _mm256_or_ps(big, _mm256_and_ps(x, sign)), use_big);
}

// GELU (tanh form) of 8 lanes, fp16-rounded in and out; 0 at or below -10, x at or above 10.
inline __m256 gelu8(__m256 x) {
  const __m256 h = _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
  const __m256 inner = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.7978845608f), h),
                                     _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(0.044715f), h), h, _mm256_set1_ps(1.0f)));
  __m256 g = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), h), _mm256_add_ps(_mm256_set1_ps(1.0f), tanh8(inner)));
  g = _mm256_cvtph_ps(_mm256_cvtps_ph(g, _MM_FROUND_TO_NEAREST_INT));
  g = _mm256_blendv_ps(g, _mm256_setzero_ps(), _mm256_cmp_ps(x, _mm256_set1_ps(-10.0f), _CMP_LE_OQ));
  return _mm256_blendv_ps(g, x, _mm256_cmp_ps(x, _mm256_set1_ps(10.0f), _CMP_GE_OQ));
}
}  // namespace

void gelu_mul(const float* gate, const float* up, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(gelu8(_mm256_loadu_ps(gate + i)), _mm256_loadu_ps(up + i)));
  if (i < n) {  // tail through a padded lane buffer, so it rounds exactly like the body
    alignas(32) float g[8] = {}, u[8] = {}, o[8];
    for (int64_t j = i; j < n; ++j) g[j - i] = gate[j], u[j - i] = up[j];
    _mm256_store_ps(o, _mm256_mul_ps(gelu8(_mm256_load_ps(g)), _mm256_load_ps(u)));
    for (int64_t j = i; j < n; ++j) y[j] = o[j - i];
  }
}

void softcap(float* x, int64_t n, float cap) {
  const __m256 vc = _mm256_set1_ps(cap), vi = _mm256_set1_ps(1.0f / cap);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(tanh8(_mm256_mul_ps(_mm256_loadu_ps(x + i), vi)), vc));
  if (i < n) {
    alignas(32) float b[8] = {};
    for (int64_t j = i; j < n; ++j) b[j - i] = x[j];
    _mm256_store_ps(b, _mm256_mul_ps(tanh8(_mm256_mul_ps(_mm256_load_ps(b), vi)), vc));
    for (int64_t j = i; j < n; ++j) x[j] = b[j - i];
  }
}

void rmsnorm(const float* x, const float* weight, float* y, int64_t n, float eps) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    a0 = _mm256_fmadd_ps(v0, v0, a0);
    a1 = _mm256_fmadd_ps(v1, v1, a1);
  }
  float ss = hsum(_mm256_add_ps(a0, a1));
  for (; i < n; ++i) ss += x[i] * x[i];
  const float scale = 1.0f / std::sqrt(ss / static_cast<float>(n > 0 ? n : 1) + eps);
  const __m256 vs = _mm256_set1_ps(scale);
  i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), vs);
    if (weight) v = _mm256_mul_ps(v, _mm256_loadu_ps(weight + i));
    _mm256_storeu_ps(y + i, v);
  }
  for (; i < n; ++i) y[i] = x[i] * scale * (weight ? weight[i] : 1.0f);
}

void softmax_inplace(float* x, int64_t n) {
  if (n <= 0) return;
  __m256 vm = _mm256_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) vm = _mm256_max_ps(vm, _mm256_loadu_ps(x + i));
  float mx = hmax(vm);
  for (; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  const __m256 vmx = _mm256_set1_ps(mx);
  __m256 vsum = _mm256_setzero_ps();
  i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmx));
    _mm256_storeu_ps(x + i, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  float sum = hsum(vsum);
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  const float inv = 1.0f / sum;
  const __m256 vinv = _mm256_set1_ps(inv);
  i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vinv));
  for (; i < n; ++i) x[i] *= inv;
}

void silu_mul(const float* gate, const float* up, float* y, int64_t n) {
  int64_t i = 0;
  const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 s = _mm256_div_ps(g, _mm256_add_ps(one, exp8(_mm256_sub_ps(zero, g))));
    _mm256_storeu_ps(y + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) y[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void add_inplace(float* y, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] += x[i];
}

float dot_f32(const float* a, const float* b, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  float s = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

void axpy(float a, const float* x, float* y, int64_t n) {
  const __m256 va = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] += a * x[i];
}

}  // namespace kvscope::kernels::detail::avx2
