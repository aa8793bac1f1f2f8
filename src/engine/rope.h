// Rotary position embedding, in the two orderings GGUF models use.
#pragma once
#include <vector>

#include "model/model.h"

namespace kvscope {

// Precomputed cos/sin per position for one model's rope settings.
class Rope {
 public:
  // sliding: the settings of the model's sliding-window layers (gemma's own base and scale).
  explicit Rope(const HParams& hp, const float* freq_factors, bool sliding = false);
  // Rotates the query heads and the key heads of one token at position pos, in place (head_dim
  // floats per head); the angles are computed once for both.
  void apply(float* q, int n_q_heads, float* k, int n_k_heads, int pos) const;

 private:
  void angles(int pos, float* cos_out, float* sin_out) const;
  void rotate(float* x, int n_heads, const float* c, const float* s) const;
  int head_dim_, rope_dim_;
  bool neox_;
  float linear_scale_;
  float mscale_;  // rope.scaling.attn_factor: multiplies cos and sin
  float theta_scale_;
  std::vector<float> freq_factors_;  // per pair (llama3 scaling), 1 otherwise
};

}  // namespace kvscope
