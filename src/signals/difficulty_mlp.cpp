#include "signals/difficulty_mlp.h"

#include <algorithm>
#include <cmath>

#include "kernels/kernels.h"
#include "util/error.h"
#include "util/rng.h"

namespace kvscope::signals {

namespace {

// SIMD dot products: the estimate runs every few generated tokens, next to the decode step.
void dense(const float* w, const float* b, const float* x, float* y, int out, int in) {
  for (int o = 0; o < out; ++o) y[o] = b[o] + kernels::dot_f32(w + static_cast<size_t>(o) * in, x, in);
}

}  // namespace

void class_probs(const float* z, double* p) {
  const double m = std::max({z[0], z[1], z[2]});
  double s = 0;
  for (int c = 0; c < kClasses; ++c) s += (p[c] = std::exp(z[c] - m));
  for (int c = 0; c < kClasses; ++c) p[c] /= s;
}

int Estimate::label() const {
  return static_cast<int>(std::max_element(probs.begin(), probs.end()) - probs.begin());
}

DifficultyMLP::DifficultyMLP(int input_dim, int hidden, uint64_t seed) : in_(input_dim), hid_(hidden) {
  if (input_dim <= 0 || hidden <= 0) throw InputError("difficulty MLP: dimensions must be positive");
  util::SplitMix64 r{seed};
  auto init = [&](std::vector<float>& w, int out, int in) {
    w.resize(static_cast<size_t>(out) * in);
    const double sd = std::sqrt(2.0 / in);  // He init for ReLU layers
    for (float& x : w) x = static_cast<float>(r.normal() * sd);
  };
  init(w1_, hid_, in_);
  init(w2_, hid_, hid_);
  init(w3_, kClasses, hid_);
  b1_.assign(hid_, 0.0f);
  b2_.assign(hid_, 0.0f);
  b3_.assign(kClasses, 0.0f);
  mean_.assign(in_, 0.0f);
  inv_std_.assign(in_, 1.0f);
}

size_t DifficultyMLP::n_params() const {
  return w1_.size() + b1_.size() + w2_.size() + b2_.size() + w3_.size() + b3_.size();
}

void DifficultyMLP::forward(const float* x, float* h1, float* h2, float* logits) const {
  dense(w1_.data(), b1_.data(), x, h1, hid_, in_);
  for (int i = 0; i < hid_; ++i) h1[i] = std::max(h1[i], 0.0f);
  dense(w2_.data(), b2_.data(), h1, h2, hid_, hid_);
  for (int i = 0; i < hid_; ++i) h2[i] = std::max(h2[i], 0.0f);
  dense(w3_.data(), b3_.data(), h2, logits, kClasses, hid_);
}

Estimate DifficultyMLP::estimate(const std::vector<float>& x) const {
  if (in_ == 0) throw InputError("difficulty MLP: not trained or loaded");
  if (static_cast<int>(x.size()) != in_)
    throw InputError("difficulty MLP: got " + std::to_string(x.size()) + " features, expects " + std::to_string(in_));
  Estimate e;
  e.probs = probs(x.data());
  e.difficulty = 100.0 * (0.5 * e.probs[1] + e.probs[2]);
  e.confidence = *std::max_element(e.probs.begin(), e.probs.end());
  return e;
}

std::array<double, kClasses> DifficultyMLP::probs(const float* x) const {
  std::vector<float> xs(in_), h1(hid_), h2(hid_);
  for (int i = 0; i < in_; ++i) xs[i] = (x[i] - mean_[i]) * inv_std_[i];
  float z[kClasses];
  forward(xs.data(), h1.data(), h2.data(), z);
  std::array<double, kClasses> p{};
  class_probs(z, p.data());
  return p;
}

std::vector<float> DifficultyMLP::pack() const {
  std::vector<float> out;
  for (const auto* v : {&mean_, &inv_std_, &w1_, &b1_, &w2_, &b2_, &w3_, &b3_}) out.insert(out.end(), v->begin(), v->end());
  return out;
}

void DifficultyMLP::unpack(int input_dim, int hidden, const std::vector<float>& flat) {
  const size_t in = input_dim, h = hidden;
  const size_t need = 2 * in + h * in + h + h * h + h + kClasses * h + kClasses;
  if (input_dim <= 0 || hidden <= 0 || flat.size() != need)
    throw InputError("difficulty MLP: weight vector of the wrong size");
  in_ = input_dim;
  hid_ = hidden;
  size_t off = 0;
  auto take = [&](std::vector<float>& v, size_t len) {
    v.assign(flat.begin() + off, flat.begin() + off + len);
    off += len;
  };
  take(mean_, in);
  take(inv_std_, in);
  take(w1_, h * in);
  take(b1_, h);
  take(w2_, h * h);
  take(b2_, h);
  take(w3_, kClasses * h);
  take(b3_, kClasses);
}

}  // namespace kvscope::signals
