// The difficulty estimator's file: the network (signals/difficulty_mlp.h), the pooled KV features
// it reads (difficulty_features.h) and the model it belongs to. Training lives apart from the
// runtime, in training/difficulty_train.h.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "reasoning/difficulty_features.h"
#include "signals/difficulty_mlp.h"

namespace kvscope::reasoning {

// The network itself sits in signals (the confidence probe's prompt prior runs it too).
using signals::class_probs;
using signals::DifficultyMLP;
using signals::Estimate;
using signals::kClasses;

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
