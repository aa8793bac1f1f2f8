// The difficulty estimator's input: per-layer mean of the K and V rows the forward pass writes,
// over a window of positions (the spec's mean_pool(kv_cache)).
//
// For each selected layer l the tap keeps the running sums of K(l, t) and V(l, t) over observed
// positions t: those in [0, end) and those from `resume` on (the question's pooled share, then the
// mode line and the response after the question); features() is their concatenation, layer by layer:
//   [ mean_t K(l0, t) | mean_t V(l0, t) | mean_t K(l1, t) | ... ]   (2 * kv_dim floats per layer)
// Positions at or below the last one already seen are ignored, so a recomputation after a
// preemption or a restart does not count a token twice. features() may be called from another
// thread while the forward pass feeds the tap (the asynchronous analysis reads snapshots).
#pragma once
#include <climits>
#include <mutex>
#include <string>
#include <vector>

#include "engine/batch.h"
#include "model/model.h"

namespace kvscope::reasoning {

// Which features the estimator reads; saved in the difficulty file.
struct FeatureSpec {
  std::vector<int> layers;      // empty: every layer
  double prompt_fraction = 1.0;  // share of the question's positions pooled (first 10%, 20%, ... 100%)
  bool pre_rope = false;        // K before RoPE (true) or as the cache stores it (false)
  // Positions of the window for a question of n_question tokens: [0, ceil(prompt_fraction * n)).
  int window_end(int n_question) const;
  std::string describe() const;  // "layers 0-3, first 100% of the prompt, K after RoPE"
};

class DifficultyTap final : public KVTap {
 public:
  // Observes positions [0, end) and [resume, infinity).
  DifficultyTap(const HParams& hp, std::vector<int> layers, bool pre_rope, int end = INT_MAX, int resume = INT_MAX);

  void on_kv(int layer, int pos0, int n, const float* k, const float* v) override;
  // Forget everything (the window stays).
  void reset();

  const std::vector<int>& layers() const { return layers_; }
  int dim() const { return static_cast<int>(layers_.size()) * 2 * kv_dim_; }
  // Tokens observed so far (per layer, so the count of the last selected layer).
  int n_tokens() const;
  // The pooled features (dim() floats); zeros when nothing was observed. Thread-safe.
  std::vector<float> features() const;
  // Features of a subset of this tap's layers (must be among layers()), in the order given.
  std::vector<float> features_of(const std::vector<int>& layers) const;

  // The running sums, to go back to after a detour (a forced-answer probe, a restart).
  struct State {
    std::vector<double> sum;
    std::vector<int> count, next;
  };
  State state() const;
  void restore(const State& s);

 private:
  int kv_dim_;
  std::vector<int> layers_;
  std::vector<int> slot_;  // model layer -> index in layers_, -1 if not selected
  int end_ = INT_MAX, resume_ = INT_MAX;
  mutable std::mutex mu_;
  std::vector<double> sum_;         // layers_.size() * 2 * kv_dim
  std::vector<int> count_, next_;   // per selected layer: positions summed, next unseen position
};

}  // namespace kvscope::reasoning
