// The difficulty estimator as the confidence probe's prompt prior (signals::PromptPrior): a copy of
// its window and weights, kept in the probe file.
#pragma once
#include <memory>
#include <string>

#include "reasoning/difficulty_mlp.h"
#include "signals/confidence_probe.h"

namespace kvscope::reasoning {

// Throws InputError when the estimator reads K before RoPE (the probe's tap sees the cache's K).
// n_layer: the model's layers (the estimator's "every layer" is spelled out).
std::shared_ptr<const signals::PromptPrior> prompt_prior(const DifficultyFile& f, int n_layer, const std::string& path);

}  // namespace kvscope::reasoning
