#include "engine/rope.h"

#include <cmath>

namespace kvscope {

Rope::Rope(const HParams& hp, const float* freq_factors, bool sliding)
    : head_dim_(hp.head_dim), rope_dim_(hp.rope_dim), neox_(hp.rope_neox),
      linear_scale_(sliding ? 1.0f / hp.rope_scale_swa
                            : hp.rope_scaling == RopeScaling::Linear ? 1.0f / hp.rope_scale_factor : 1.0f),
      mscale_(hp.rope_attn_factor) {
  theta_scale_ = std::pow(sliding ? hp.rope_theta_swa : hp.rope_theta, -2.0f / static_cast<float>(rope_dim_));
  freq_factors_.assign(rope_dim_ / 2, 1.0f);
  if (freq_factors) freq_factors_.assign(freq_factors, freq_factors + rope_dim_ / 2);
}

void Rope::angles(int pos, float* c, float* s) const {
  // The angle is accumulated by repeated multiplication in float, as GGML does, so our rounding
  // tracks llama.cpp's.
  float theta = static_cast<float>(pos) * linear_scale_;
  for (int i = 0; i < rope_dim_ / 2; ++i) {
    const float t = theta / freq_factors_[i];
    c[i] = std::cos(t) * mscale_;
    s[i] = std::sin(t) * mscale_;
    theta *= theta_scale_;
  }
}

void Rope::rotate(float* x, int n_heads, const float* c, const float* s) const {
  const int half = rope_dim_ / 2;
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + static_cast<size_t>(h) * head_dim_;
    for (int i = 0; i < half; ++i) {
      const int a = neox_ ? i : 2 * i;
      const int b = neox_ ? i + half : 2 * i + 1;
      const float x0 = v[a], x1 = v[b];
      v[a] = x0 * c[i] - x1 * s[i];
      v[b] = x0 * s[i] + x1 * c[i];
    }
  }
}

void Rope::apply(float* q, int n_q_heads, float* k, int n_k_heads, int pos) const {
  // Sized from the model (any head size a GGUF declares), reused across calls on this thread.
  thread_local std::vector<float> cs;
  const size_t half = static_cast<size_t>(rope_dim_ / 2);
  if (cs.size() < 2 * half) cs.resize(2 * half);
  angles(pos, cs.data(), cs.data() + half);
  rotate(q, n_q_heads, cs.data(), cs.data() + half);
  rotate(k, n_k_heads, cs.data(), cs.data() + half);
}

}  // namespace kvscope
