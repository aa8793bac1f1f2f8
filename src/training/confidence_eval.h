// The eval-confidence workflow as library calls (the command in cli/cmd_eval_confidence.cpp parses
// flags, calls these and prints): every confidence score of the same greedy tinygsm answers, how
// well each tells right answers from wrong ones (AUROC, FPR95, AUPR), the layer ablation's
// selections, and the learned probe's own cost measured alone.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/context.h"
#include "signals/confidence_probe.h"
#include "signals/scored_generation.h"
#include "tinygsm/tinygsm.h"
#include "training/prompt_format.h"

namespace kvscope::training {

// One score's quality at telling right answers (ok) from wrong, its raw values oriented first
// (orientation +1: higher is confident, -1: lower is). auroc_best is the better of the two
// orientations, so a sign that points the wrong way shows as flipped.
struct ScoreQuality {
  double auroc = 0, auroc_best = 0, fpr95 = 0, aupr = 0;
  bool flipped = false;
};
ScoreQuality score_quality(const std::vector<double>& raw, const std::vector<bool>& ok, int orientation);

// The ablation's selections of KV-CoE, scored on the same pass: every layer and the middle third
// with K after and before RoPE, then each layer alone (K as pre_rope says).
std::vector<signals::SignalOptions::Extra> ablation_selections(int n_layer, bool pre_rope);

struct ConfidenceEvalOptions {
  ContextParams context;
  int max_tokens = 256;        // generation cap per problem
  signals::SignalOptions signals;
  // After each problem (details file, progress): the item, whether its answer was right, the result.
  std::function<void(const tinygsm::Item&, bool right, const signals::ScoredResult&)> on_item;
};

struct ConfidenceEval {
  int correct = 0;
  long tokens = 0;                 // generated, over every problem
  double wall_s = 0;
  std::vector<bool> ok;            // per problem: the answer was right
  std::vector<std::string> names;  // the scores, in ResponseSignals::named()'s order
  std::map<std::string, std::vector<double>> values;  // score -> per problem
  // Ablation selection -> per problem: KV-CoE's C, R and normalized C.
  std::map<std::string, std::vector<double>> ablation_c, ablation_r, ablation_cn;
  std::map<std::string, std::vector<double>> early;  // "25%", "50%", "75%" -> the probe's score then
  // Summed over problems: the probe's state, the KV, the KV tap, the hidden tap, and every layer's
  // hidden states kept whole (the paper's implementation).
  size_t probe_bytes = 0, kv_bytes = 0, tap_bytes = 0, hidden_bytes = 0, hidden_full_bytes = 0;
};

// Answers every item greedily at mode m, prompted as fmt prompts (the first reasoner: tinygsm's
// prompt; a chat model: the question as a user turn at the mode's effort), with every score of
// o.signals. Throws LimitError when a prompt does not fit the context.
ConfidenceEval eval_confidence(const Model& model, const PromptFormat& fmt, const std::vector<tinygsm::Item>& items, Mode m,
                               const ConfidenceEvalOptions& o);

// The probe's own cost, measured alone (robust on a shared machine): its tap fed random K/V rows of
// its layers, then the features and the MLP, as a stream scoring every token would; and the prompt
// prior, paid once per request at prefill (a prior_prompt_tokens-token prompt), timed apart.
struct ProbeCost {
  double us_per_token = 0;
  double prior_us_per_request = 0;  // 0 without a prompt prior
  int prior_prompt_tokens = 0;
  size_t prior_peak_bytes = 0;      // held during the prefill only
};
ProbeCost measure_probe_cost(const Model& model, const signals::ProbeFile& probe);

}  // namespace kvscope::training
