#include "reasoning/difficulty_features.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/error.h"

namespace kvscope::reasoning {

int FeatureSpec::window_end(int n_question) const {
  if (n_question <= 0) return 0;
  const int end = static_cast<int>(std::ceil(prompt_fraction * n_question - 1e-9));
  return std::clamp(end, 1, n_question);
}

std::string FeatureSpec::describe() const {
  std::string ls = layers.empty() ? std::string("all layers") : "layers ";
  for (size_t i = 0; i < layers.size(); ++i) {
    if (i) ls.push_back(',');
    ls.append(std::to_string(layers[i]));
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s, first %.0f%% of the prompt, K %s RoPE", ls.c_str(), prompt_fraction * 100,
                pre_rope ? "before" : "after");
  return buf;
}

DifficultyTap::DifficultyTap(const HParams& hp, std::vector<int> layers, bool pre_rope_k, int end, int resume)
    : kv_dim_(hp.n_kv_dim()), layers_(std::move(layers)), end_(end), resume_(resume) {
  if (end < 0 || resume < end) throw InputError("difficulty features: bad position window");
  pre_rope = pre_rope_k;
  if (layers_.empty())
    for (int l = 0; l < hp.n_layer; ++l) layers_.push_back(l);
  slot_.assign(hp.n_layer, -1);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const int l = layers_[i];
    if (l < 0 || l >= hp.n_layer)
      throw InputError("difficulty features: layer " + std::to_string(l) + " out of range (the model has " +
                       std::to_string(hp.n_layer) + " layers)");
    if (slot_[l] >= 0) throw InputError("difficulty features: layer " + std::to_string(l) + " selected twice");
    slot_[l] = static_cast<int>(i);
  }
  reset();
}

void DifficultyTap::reset() {
  std::lock_guard<std::mutex> lk(mu_);
  sum_.assign(layers_.size() * 2 * kv_dim_, 0.0);
  count_.assign(layers_.size(), 0);
  next_.assign(layers_.size(), 0);
}

void DifficultyTap::on_kv(int layer, int pos0, int n, const float* k, const float* v) {
  if (layer < 0 || layer >= static_cast<int>(slot_.size()) || slot_[layer] < 0) return;
  const int s = slot_[layer];
  std::lock_guard<std::mutex> lk(mu_);
  const int a = std::max(pos0, next_[s]), b = pos0 + n;
  if (a >= b) return;
  double* ks = sum_.data() + static_cast<size_t>(s) * 2 * kv_dim_;
  double* vs = ks + kv_dim_;
  for (int p = a; p < b; ++p) {
    if (p >= end_ && p < resume_) continue;
    ++count_[s];
    const float* kr = k + static_cast<size_t>(p - pos0) * kv_dim_;
    const float* vr = v + static_cast<size_t>(p - pos0) * kv_dim_;
    for (int i = 0; i < kv_dim_; ++i) {
      ks[i] += kr[i];
      vs[i] += vr[i];
    }
  }
  next_[s] = b;
}

int DifficultyTap::n_tokens() const {
  std::lock_guard<std::mutex> lk(mu_);
  return count_.empty() ? 0 : count_.back();
}

std::vector<float> DifficultyTap::features() const { return features_of(layers_); }

std::vector<float> DifficultyTap::features_of(const std::vector<int>& layers) const {
  std::vector<float> out;
  out.reserve(layers.size() * 2 * kv_dim_);
  std::lock_guard<std::mutex> lk(mu_);
  for (int l : layers) {
    if (l < 0 || l >= static_cast<int>(slot_.size()) || slot_[l] < 0)
      throw InputError("difficulty features: layer " + std::to_string(l) + " was not observed");
    const int s = slot_[l];
    const double inv = count_[s] ? 1.0 / count_[s] : 0.0;
    const double* p = sum_.data() + static_cast<size_t>(s) * 2 * kv_dim_;
    for (int i = 0; i < 2 * kv_dim_; ++i) out.push_back(static_cast<float>(p[i] * inv));
  }
  return out;
}

DifficultyTap::State DifficultyTap::state() const {
  std::lock_guard<std::mutex> lk(mu_);
  return {sum_, count_, next_};
}

void DifficultyTap::restore(const State& s) {
  std::lock_guard<std::mutex> lk(mu_);
  if (s.sum.size() != sum_.size() || s.count.size() != count_.size())
    throw InputError("difficulty features: state from another tap");
  sum_ = s.sum;
  count_ = s.count;
  next_ = s.next;
}

}  // namespace kvscope::reasoning
