// The mixture-of-experts FFN of one layer over a step's tokens: route each token to its top-k
// experts, then run every chosen expert once over all the tokens routed to it (so an expert's
// weights are read once per step, and experts no token chose are not read at all).
#pragma once
#include <vector>

#include "kernels/threadpool.h"
#include "model/model.h"

namespace kvscope {

struct MoeScratch {
  std::vector<float> probs, xg, gate, up, out, sh_gate, sh_up;
  std::vector<int> sel;       // [n x k] chosen experts per token, most probable first
  std::vector<float> weight;  // [n x k] their mixing weights
  std::vector<std::vector<std::pair<int, float>>> by_expert;  // (token, weight) per expert
  std::vector<int> single;  // experts with exactly one token this step
  std::vector<kernels::WeightRef> ws;
  std::vector<const float*> xs;
  std::vector<float*> ys;
};

// Router: probabilities softmax(router . x) per token, the k most probable experts (ties to the lower
// index), their probabilities renormalized to sum 1 when hp.expert_norm, times expert_weights_scale.
// probs: [n x n_expert] router logits on entry. Fills sel and weight ([n x k]).
void moe_route(const HParams& hp, float* probs, int n, int* sel, float* weight);

// y[n x n_embd] = the layer's MoE FFN (plus qwen2moe's gated shared expert) of xn[n x n_embd].
void moe_ffn(const HParams& hp, const LayerWeights& L, const float* xn, int n, float* y, MoeScratch& s,
             kernels::ThreadPool& pool);

}  // namespace kvscope
