// Training the confidence probe (signals/confidence_probe.h): binary cross-entropy, AdamW,
// a seeded train/validation split by problem (every snapshot of one answer stays on one side) and
// early stopping on validation loss. A tool workflow (train-confidence), apart from the runtime.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "signals/confidence_probe.h"

namespace kvscope::training {

struct ProbeTrainOptions {
  int max_epochs = 200;
  int batch = 64;
  double lr = 1e-3;
  double weight_decay = 1e-3;   // decoupled (AdamW)
  double val_fraction = 0.2;
  int patience = 20;
  uint64_t seed = 1;
  std::function<void(int epoch, double train_loss, double val_loss, double val_auroc)> on_epoch;
};

struct ProbeTrainReport {
  int epochs = 0, best_epoch = 0, n_train = 0, n_val = 0;
  double best_val_loss = 0, val_auroc = 0;
};

// X: rows of mlp.input_dim() raw features; y: 1 correct, 0 wrong; group: the answer a row comes
// from (rows of one group go to the same side of the split). Fits the standardization on the
// training rows, keeps the weights of the best validation epoch.
ProbeTrainReport train_probe(signals::ProbeMLP& mlp, const std::vector<std::vector<float>>& X, const std::vector<int>& y,
                             const std::vector<int>& group, const ProbeTrainOptions& o);

}  // namespace kvscope::training
