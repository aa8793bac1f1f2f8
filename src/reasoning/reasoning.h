// The reasoning module: difficulty features and estimator, the fast/slow controller, adaptive
// generation, the decision cache.
#pragma once
#include "reasoning/adaptive_generate.h"
#include "reasoning/controller.h"
#include "reasoning/difficulty_features.h"
#include "reasoning/difficulty_mlp.h"
