// The difficulty estimator's network: a small MLP over pooled KV features that predicts the
// cheapest reasoning mode answering a problem right (fast / mixed / slow), and from those
// probabilities a difficulty d in [0, 100] and a confidence:
//   d = 100 * (0.5 * p_mixed + 1.0 * p_slow),   confidence = max(p_fast, p_mixed, p_slow).
// Inputs are standardized with the training set's per-feature mean and deviation (saved with the
// weights). It lives in signals, below reasoning, because the confidence probe reads it too (its
// prompt prior); the features, the file and the control around it are reasoning's
// (reasoning/difficulty_mlp.h), its training is training/difficulty_train.h.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvscope::signals {

inline constexpr int kClasses = 3;  // 0 fast, 1 mixed, 2 slow

// Class probabilities from the MLP's kClasses logits (a softmax); shared with its training.
void class_probs(const float* logits, double* probs);

struct Estimate {
  double difficulty = 0;   // [0, 100]
  double confidence = 0;   // [0, 1]
  std::array<double, kClasses> probs{};
  int label() const;       // argmax class
};

class DifficultyMLP {
 public:
  DifficultyMLP() = default;
  DifficultyMLP(int input_dim, int hidden, uint64_t seed);

  int input_dim() const { return in_; }
  int hidden() const { return hid_; }
  size_t n_params() const;

  // x: input_dim raw (unstandardized) features. Throws InputError on a wrong length.
  Estimate estimate(const std::vector<float>& x) const;
  // The class probabilities alone, from input_dim raw features (no length check).
  std::array<double, kClasses> probs(const float* x) const;

  // Weights and standardization as one flat vector (save/load).
  std::vector<float> pack() const;
  void unpack(int input_dim, int hidden, const std::vector<float>& flat);

 private:
  void forward(const float* x, float* h1, float* h2, float* logits) const;  // x standardized
  int in_ = 0, hid_ = 0;
  std::vector<float> mean_, inv_std_;
  std::vector<float> w1_, b1_, w2_, b2_, w3_, b3_;  // row-major [out][in]
};

}  // namespace kvscope::signals
