// Training the difficulty estimator (reasoning/difficulty_mlp.h) in C++: Adam with decoupled weight
// decay, a seeded train/validation split and early stopping on validation loss. A tool workflow
// (train-difficulty), kept out of the runtime that only loads and evaluates the estimator.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "reasoning/difficulty_mlp.h"
#include "training/difficulty_data.h"

namespace kvscope::reasoning {

struct TrainOptions {
  int max_epochs = 300;
  int batch = 64;
  double lr = 1e-3;
  double weight_decay = 1e-4;   // decoupled (AdamW)
  double val_fraction = 0.2;
  int patience = 25;            // epochs without a better validation loss before stopping
  uint64_t seed = 1;
  // Called after every epoch (for the progress bar).
  std::function<void(int epoch, double train_loss, double val_loss, double val_acc)> on_epoch;
};

struct TrainReport {
  int epochs = 0, best_epoch = 0, n_train = 0, n_val = 0;
  double best_val_loss = 0, val_accuracy = 0, train_accuracy = 0;
};

// Fits the standardization on X, then trains `mlp` from its current weights; X rows are
// mlp.input_dim() long, y in [0, kClasses). Rows are split into train / validation by a seeded
// shuffle (stratification is not needed at these sizes). The weights of the best validation epoch
// are kept.
TrainReport train_difficulty(DifficultyMLP& mlp, const std::vector<std::vector<float>>& X, const std::vector<int>& y,
                             const TrainOptions& o);

// train-difficulty's fit: each question's window labelled with the cheapest right mode, each check
// point with its own label (problems no mode solves get `unsolved`), and a new MLP of `hidden` units
// (seeded by o.seed) trained on those rows. info: the rows, their labels and the training report,
// as train-difficulty prints them and the file records them. InputError when there are no rows.
struct FitResult {
  DifficultyMLP mlp;
  nlohmann::json info;
};
FitResult fit_difficulty(const std::vector<ProblemRecord>& recs, int hidden, Mode unsolved, const TrainOptions& o);

}  // namespace kvscope::reasoning
