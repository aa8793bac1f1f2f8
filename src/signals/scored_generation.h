// Generation with the signals tap attached: the response's KV-CoE scores, the logit baselines
// and the hidden-state CoE, all from the one decoding pass.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "engine/context.h"
#include "engine/engine.h"
#include "sampling/sampler.h"
#include "signals/coe_scores.h"
#include "signals/confidence_probe.h"
#include "signals/kv_tap.h"

namespace kvscope::signals {

struct SignalOptions {
  std::string layers = "mid";       // the main selection (parse_layers)
  bool pre_rope = kDefaultPreRope;
  bool hidden = true;               // hidden-state CoE: (n_layer + 1) * n_embd doubles per sequence
  // Generation that stops at the length cap leaves the last token without K/V; one more forward
  // step computes it so the trajectory covers every generated token (EOS stops need none).
  bool include_last = true;
  bool trace = false;               // report the per-token steps (dr_t, dtheta_t) in ResponseSignals
  // Ablation: further selections scored on the same pass (their K before or after RoPE may differ
  // from the main one's).
  struct Extra {
    std::string name;
    std::vector<int> layers;
    bool pre_rope = kDefaultPreRope;
  };
  std::vector<Extra> extra;
  // The learned confidence probe (score "kv_probe"); not owned, must outlive the scorer.
  const ProbeFile* probe = nullptr;
  bool probe_trace = false;          // keep the probe's score after every token (early warning)
  // Keep the probe's feature vector after every token (training data); the spec read when no
  // probe is given.
  bool probe_features_trace = false;
  ProbeSpec probe_spec;
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
  std::vector<TrajectoryStep> steps;  // with SignalOptions::trace: dr_t, dtheta_t of each step
  bool has_probe = false;
  double probe = 0;                     // P(correct) from the confidence probe at the end
  std::vector<float> probe_trace;       // its score after each sampled token (probe_trace)
  std::vector<std::vector<float>> probe_features;  // per token, then the final vector (features trace)
  size_t probe_bytes = 0;               // the probe tap's state
  // The probe's score after `share` of the tokens (the trace's entry at ceil(share * n)).
  double probe_at(double share) const;
  // Memory per sequence: its KV, the KV tap's state, the hidden tap's running sums, and what
  // keeping every layer's hidden state of the response would take (the paper's implementation).
  size_t kv_bytes = 0, tap_bytes = 0, hidden_bytes = 0, hidden_full_bytes = 0;

  // Named scores for evaluation: kv_coe_c, kv_coe_r, kv_coe_c_norm, kv_coe_r_norm, max_prob,
  // perplexity, entropy, hidden_coe_c, hidden_coe_r (hidden ones only with has_hidden).
  std::vector<std::pair<std::string, double>> named() const;
  nlohmann::json to_json() const;
};

// Scores one response as any driver generates it. With the scheduler:
//   ResponseScorer sc(model, prompt.size(), so);
//   req.tap = sc.tap();
//   req.on_logits = [&](const float* l, int nv) { sc.observe_logits(l, nv); };
//   req.on_token = [&](const TokenEvent& e) { sc.observe_token(e, eos_id); ... };
// then sc.result(kv_bytes) once the request finished. The scheduler path has no extra step for the
// last token, so its K/V (never computed) is not in the trajectory.
class ResponseScorer {
 public:
  ResponseScorer(const Model& model, int prompt_len, const SignalOptions& so);
  KVTap* tap() { return tap_; }
  // The logits the next token is drawn from; the pointer must stay valid until observe_token.
  void observe_logits(const float* logits, int n_vocab) { logit_stats_.observe(logits, n_vocab); }
  void observe_token(int32_t chosen);
  // Scheduler events: a token, or the final event of an EOS stop (whose token is eos_id).
  void observe_token(const TokenEvent& ev, int32_t eos_id);
  // kv_bytes: the sequence's KV footprint, for the memory report.
  ResponseSignals result(size_t kv_bytes) const;
  // The probe's P(correct) now (NaN without a probe): for streams and early cuts.
  double probe_score() const;
  int n_sampled() const { return logit_stats_.n(); }

 private:
  const HParams& hp_;
  const tok::Tokenizer& tokenizer_;  // the chosen tokens' text, for the probe's number statistics
  SignalOptions so_;
  FeatureTap main_;
  std::vector<std::unique_ptr<FeatureTap>> extra_;
  std::unique_ptr<ProbeFeatures> probe_;
  std::vector<float> probe_trace_;
  std::vector<std::vector<float>> probe_feats_;
  std::unique_ptr<TapFanout> fan_;
  KVTap* tap_ = nullptr;
  LogitStats logit_stats_;
};

struct ScoredResult {
  GenerateResult gen;
  ResponseSignals signals;
};

// One greedy or sampled answer on an Engine of its own with the signals' tap: the trajectory is the
// positions from the prompt's end, and a stop other than EOS gets one more step (the engine's
// session keeps the sequence, so only the last token is computed) so the last token's K/V is in
// it. The engine runs one sequence at a time, without a prefix cache: the tap must see every
// prompt position computed (make one with scored_engine_params). Throws InputError on an empty
// prompt or a bad max_tokens, LimitError when the prompt does not fit.
ScoredResult generate_scored(Engine& eng, const std::vector<int32_t>& prompt, const SamplingParams& sp, int max_tokens,
                             const SignalOptions& so);
// The engine generate_scored needs for a context of these parameters: one sequence of the whole
// context, no prefix cache, the context's threads, batch and K/V types.
EngineParams scored_engine_params(const Model& model, const ContextParams& cp);

}  // namespace kvscope::signals
