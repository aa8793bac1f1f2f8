// Generation with the signals tap attached: the response's KV-CoE scores, the logit baselines
// and the hidden-state CoE, all from the one decoding pass.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "engine/context.h"
#include "sampling/sampler.h"
#include "signals/coe_scores.h"
#include "signals/kv_tap.h"

namespace kvscope::signals {

struct SignalOptions {
  std::string layers = "mid";       // the main selection (parse_layers)
  bool pre_rope = kDefaultPreRope;
  bool hidden = true;               // hidden-state CoE: (n_layer + 1) * n_embd doubles per sequence
  // Generation that stops at the length cap leaves the last token without K/V; one more forward
  // step computes it so the trajectory covers every generated token (EOS stops need none).
  bool include_last = true;
  // Ablation: further selections scored on the same pass, each as (name, layers).
  std::vector<std::pair<std::string, std::vector<int>>> extra;
};

struct ResponseSignals {
  std::vector<int> layers;
  bool pre_rope = false;
  int n_tokens = 0;                 // generated tokens in the trajectory
  CoEScores kv;                     // KV-CoE on the main selection
  CoEScores hidden;                 // original CoE over layers (normalized forms are the paper's)
  bool has_hidden = false;
  double max_prob = 0, perplexity = 0, entropy = 0;  // over every sampled token, EOS included
  std::vector<std::pair<std::string, CoEScores>> extra;
  // Memory per sequence: its KV, the KV tap's state, the hidden tap's running sums, and what
  // keeping every layer's hidden state of the response would take (the paper's implementation).
  size_t kv_bytes = 0, tap_bytes = 0, hidden_bytes = 0, hidden_full_bytes = 0;

  // Named scores for evaluation: kv_coe_c, kv_coe_r, kv_coe_c_norm, kv_coe_r_norm, max_prob,
  // perplexity, entropy, hidden_coe_c, hidden_coe_r (hidden ones only with has_hidden).
  std::vector<std::pair<std::string, double>> named() const;
  nlohmann::json to_json() const;
};

struct ScoredResult {
  GenerateResult gen;
  ResponseSignals signals;
};

// generate() of engine/context.h with the tap: same sampling and stop rules, positions from the
// prompt's end form the trajectory.
ScoredResult generate_scored(Context& ctx, const std::vector<int32_t>& prompt, const SamplingParams& sp, int max_tokens,
                             const SignalOptions& so,
                             const std::function<bool(int32_t tok, const std::string& piece)>& on_token = nullptr);

}  // namespace kvscope::signals
