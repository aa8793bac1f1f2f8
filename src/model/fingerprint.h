// A model's identity for everything computed from its weights and stored elsewhere: session files,
// difficulty estimators, decision-cache keys.
#pragma once
#include <cstdint>

#include "model/model.h"

namespace kvscope {

// Shape hyper-parameters plus a hash of sampled bytes of every weight matrix. Stored in files, so
// the recipe must not change.
uint64_t model_fingerprint(const Model& model);

}  // namespace kvscope
