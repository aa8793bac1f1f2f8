// Rotary position embedding, in the two orderings GGUF models use.
#pragma once
#include <vector>

#include "model/model.h"

namespace kvscope {

// Precomputed cos/sin per position for one model's rope settings.
class Rope {
 public:
  explicit Rope(const HParams& hp, const float* freq_factors);
  // Rotates n_heads heads of head_dim floats each, in place, for token position pos.
  void apply(float* x, int n_heads, int pos) const;

 private:
  void angles(int pos, float* cos_out, float* sin_out) const;
  int head_dim_, rope_dim_;
  bool neox_;
  float linear_scale_;
  float theta_scale_;
  std::vector<float> freq_factors_;  // per pair (llama3 scaling), 1 otherwise
};

}  // namespace kvscope
