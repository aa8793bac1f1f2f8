// AVX-512 block-wise attention loops (see attention_block.h). Scores: four rows at a time, their
// 16-lane partial dots reduced together by one transposing horizontal add. Weighted sum: each
// 16-channel slice of a head's output stays in a register across all rows of the block.
#include "kernels/avx512_common.h"

#include "engine/attention_block.h"

namespace kvscope::attn::avx512 {

namespace {
using simd512::hsum4;
inline __mmask16 tail(int r) { return static_cast<__mmask16>((1u << r) - 1u); }

}  // namespace

void block_scores(const float* k, int stride, int n, const float* q, int hd, int group, float scale, float* scores, int ld) {
  for (int g = 0; g < group; ++g) {
    const float* qg = q + g * hd;
    float* sg = scores + g * ld;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
      __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      const float* k0 = k + i * stride;
      for (int c = 0; c < hd; c += 16) {
        const __mmask16 m = hd - c >= 16 ? __mmask16(0xFFFF) : tail(hd - c);
        const __m512 qv = _mm512_maskz_loadu_ps(m, qg + c);
        a0 = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(m, k0 + c), a0);
        a1 = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(m, k0 + stride + c), a1);
        a2 = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(m, k0 + 2 * stride + c), a2);
        a3 = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(m, k0 + 3 * stride + c), a3);
      }
      _mm_storeu_ps(sg + i, _mm_mul_ps(hsum4(a0, a1, a2, a3), _mm_set1_ps(scale)));
    }
    for (; i < n; ++i) {
      __m512 a = _mm512_setzero_ps();
      for (int c = 0; c < hd; c += 16) {
        const __mmask16 m = hd - c >= 16 ? __mmask16(0xFFFF) : tail(hd - c);
        a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, qg + c), _mm512_maskz_loadu_ps(m, k + i * stride + c), a);
      }
      sg[i] = _mm512_reduce_add_ps(a) * scale;
    }
  }
}

void block_weighted_sum(const float* v, int stride, int n, const float* p, int ld, int hd, int group, float* out) {
  for (int g = 0; g < group; ++g) {
    const float* pg = p + g * ld;
    float* og = out + g * hd;
    for (int c = 0; c < hd; c += 16) {
      const __mmask16 m = hd - c >= 16 ? __mmask16(0xFFFF) : tail(hd - c);
      __m512 a = _mm512_maskz_loadu_ps(m, og + c);
      for (int i = 0; i < n; ++i) a = _mm512_fmadd_ps(_mm512_set1_ps(pg[i]), _mm512_maskz_loadu_ps(m, v + i * stride + c), a);
      _mm512_mask_storeu_ps(og + c, m, a);
    }
  }
}

}  // namespace kvscope::attn::avx512
