// The difficulty estimator: a small MLP over pooled KV features (difficulty_features.h) that
// predicts the cheapest reasoning mode answering a problem right (fast / mixed / slow), and from
// those probabilities a difficulty d in [0, 100] and a confidence:
//   d = 100 * (0.5 * p_mixed + 1.0 * p_slow),   confidence = max(p_fast, p_mixed, p_slow).
// Inputs are standardized with the training set's per-feature mean and deviation (saved with the
// weights). Training lives apart from the runtime, in training/difficulty_train.h.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "reasoning/difficulty_features.h"

namespace kvscope::reasoning {

inline constexpr int kClasses = 3;  // 0 fast, 1 mixed, 2 slow

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

  // Weights and standardization as one flat vector (save/load).
  std::vector<float> pack() const;
  void unpack(int input_dim, int hidden, const std::vector<float>& flat);

 private:
  void forward(const float* x, float* h1, float* h2, float* logits) const;  // x standardized
  int in_ = 0, hid_ = 0;
  std::vector<float> mean_, inv_std_;
  std::vector<float> w1_, b1_, w2_, b2_, w3_, b3_;  // row-major [out][in]
};

// What a difficulty file holds: the estimator, the features it reads, and the model it belongs to.
struct DifficultyFile {
  uint64_t model_fingerprint = 0;
  FeatureSpec features;
  DifficultyMLP mlp;
  std::string info;  // JSON text: how it was trained (task, n, labels, validation accuracy)
};

// Binary, little-endian: "KVSDIFF1", version, fingerprint, feature spec, info, dims, floats.
void save_difficulty(const std::string& path, const DifficultyFile& f);
// Throws InputError naming the file: not a difficulty file, damaged, wrong version, or (when
// expect_fingerprint != 0) trained for another model.
DifficultyFile load_difficulty(const std::string& path, uint64_t expect_fingerprint = 0);
// The estimator that goes with a model: "<stem>.difficulty.bin" beside "<stem>.gguf", or "" when absent.
std::string sibling_difficulty_path(const std::string& model_path);

}  // namespace kvscope::reasoning
