#include "reasoning/prompt_prior.h"

#include "util/error.h"

namespace kvscope::reasoning {

std::shared_ptr<const signals::PromptPrior> prompt_prior(const DifficultyFile& f, int n_layer, const std::string& path) {
  if (f.features.pre_rope)
    throw InputError("difficulty estimator '" + path +
                     "' reads K before RoPE; the probe's prompt prior reads the cache's K (train one without --pre-rope)");
  auto p = std::make_shared<signals::PromptPrior>();
  p->layers = f.features.layers;
  if (p->layers.empty())
    for (int l = 0; l < n_layer; ++l) p->layers.push_back(l);
  p->prompt_fraction = f.features.prompt_fraction;
  p->mlp = f.mlp;
  p->source = f.info;
  return p;
}

}  // namespace kvscope::reasoning
