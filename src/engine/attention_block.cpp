// Scalar references of the block-wise attention loops.
#include "engine/attention_block.h"

namespace kvscope::attn {

namespace ref {
void block_scores(const float* k, int stride, int n, const float* q, int hd, int group, float scale, float* scores, int ld) {
  for (int i = 0; i < n; ++i)
    for (int g = 0; g < group; ++g) {
      float s = 0.0f;
      for (int c = 0; c < hd; ++c) s += q[g * hd + c] * k[i * stride + c];
      scores[g * ld + i] = s * scale;
    }
}
void block_weighted_sum(const float* v, int stride, int n, const float* p, int ld, int hd, int group, float* out) {
  for (int g = 0; g < group; ++g)
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < hd; ++c) out[g * hd + c] += p[g * ld + i] * v[i * stride + c];
}
}  // namespace ref

}  // namespace kvscope::attn
