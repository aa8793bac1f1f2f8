// The learned KV confidence probe: a small MLP over features of a response's KV that a tap keeps
// as running sums while the response is generated, plus (optionally) running logit statistics.
// It predicts P(answer correct) at any point of the response, so it serves as a final confidence
// score and as an early warning (its score after a share of the tokens).
//
// Features, for each selected layer l (ProbeSpec::layers) over the observed (response) tokens t:
//   u_{l,t} = L2norm( [ mean_h K_h(l,t) | mean_h V_h(l,t) ] )               (2 * head_dim)
//   pooled_l = L2norm( sum_t u_{l,t} )                                     (2 * head_dim values)
//   dr_{l,t} = ||u_{l,t+1} - u_{l,t}||,  dtheta_{l,t} = angle(u_{l,t}, u_{l,t+1})
//   mean and max of dr and dtheta over consecutive pairs                    (4 values)
//   with ProbeSpec::prompt: L2norm( sum of u_{l,t} over the prompt's positions ) (2 * head_dim)
//   with ProbeSpec::last: the latest u_{l,t}                                (2 * head_dim)
// then, with ProbeSpec::logits, the running logit statistics of signals::LogitStats (8 values:
// mean and min max-probability, mean and max entropy, mean and min log p(chosen), shares of tokens
// whose max-probability is under 0.9 and 0.5), with ProbeSpec::numbers the number-token statistics
// of signals::NumberStats (kProbeNumberFeatures values), and last log(1 + tokens observed).
// State per sequence: two 2*head_dim float vectors and four scalars per layer (fixed, no per-token
// growth), e.g. 1 KB for two layers of a head_dim-32 model.
#pragma once
#include <array>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/batch.h"
#include "model/model.h"
#include "signals/coe_scores.h"
#include "signals/difficulty_mlp.h"

namespace kvscope::signals {

// The prompt prior (ProbeSpec::prior): the difficulty estimator (signals/difficulty_mlp.h) read
// once per request from the prompt's KV. Its input is the estimator's own: per layer of `layers`,
// the mean K row and the mean V row (K after RoPE, as the cache stores it) over the prompt's first
// ceil(prompt_fraction * prompt length) positions; its output the three class probabilities of the
// cheapest mode answering right (fast, mixed, slow; slow also holds "no mode does"). The probe reads
// their logs (kProbePriorFeatures values): how hard the question looks before a token is written.
// The network is a copy of the estimator's, kept in the probe file so the probe does not change
// when the estimator is retrained.
struct PromptPrior {
  std::vector<int> layers;
  double prompt_fraction = 1.0;
  DifficultyMLP mlp;
  std::string source;  // the estimator file's info (how it was trained)

  // Positions pooled for a prompt of n tokens: [0, window_end(n)) (0 for an empty prompt).
  int window_end(int n) const;
  // The class probabilities from raw pooled features (mlp.input_dim() floats).
  std::array<double, 3> probs(const float* x) const { return mlp.probs(x); }
  // Throws InputError unless the layers and dimensions fit a model of n_layer layers and kv_dim.
  void validate(int n_layer, int kv_dim) const;
  // A hash of the window and the weights: feature rows name the estimator their prior came from.
  uint64_t id() const;
};
inline constexpr int kProbePriorFeatures = 3;

struct ProbeSpec {
  std::vector<int> layers;  // KV layers read (must be non-empty when kv is set)
  bool kv = true;           // the KV features (false: a logit-statistics-only ablation)
  bool logits = true;       // the running logit statistics
  bool prompt = false;      // also the prompt's pooled u per layer (what was asked, next to how it is answered)
  bool last = false;        // also the latest token's u per layer (already kept for dtheta)
  // Also the logit statistics of the tokens that write numbers (NumberStats): a wrong result digit
  // is one low-confidence token among a hundred sure ones, invisible in means over every token.
  bool numbers = false;
  // The prompt prior (log class probabilities of the difficulty estimator), computed once from the
  // prompt's KV at prefill; null: not read.
  std::shared_ptr<const PromptPrior> prior = nullptr;
  int per_layer(int head_dim) const { return 2 * head_dim + 4 + (prompt ? 2 * head_dim : 0) + (last ? 2 * head_dim : 0); }
  int dim(int head_dim) const;
};

inline constexpr int kProbeLogitFeatures = 8;
inline constexpr int kProbeNumberFeatures = 14;

// What a chosen token's text holds, for NumberStats.
enum TokenClass : uint8_t { kTokDigit = 1, kTokEquals = 2, kTokOperator = 4, kTokNewline = 8 };
uint8_t classify_piece(const std::string& piece);

// Running logit statistics over the tokens that write numbers, read from each chosen token's
// probability p, its distribution's top1 - top2 margin and entropy. A number is a run of tokens
// holding digits; a result is a number after "=" (up to the number's end; a newline also ends the
// "=" context); the last number is the latest one (the final answer once the response ends).
// Features (kProbeNumberFeatures), each 1 / 0 for p and margin when no token of the kind was seen:
//   result digits: min p, mean log p, min margin, max entropy
//   every digit token: min p, mean log p, min margin
//   operator tokens (+ - * / x, = excluded): min p, min margin
//   the last number: p of its first token, min p, min margin
//   log(1 + result digit tokens), log(1 + numbers)
struct NumberStats {
  struct Agg {
    int n = 0;
    double min_p = 1, sum_logp = 0, min_margin = 1, max_entropy = 0;
    void add(double p, double margin, double entropy);
  };
  Agg result, digits, ops, last;
  double last_first_p = 1;
  int numbers = 0;
  bool in_number = false, in_result = false, after_eq = false;

  void add(double p, double margin, double entropy, uint8_t cls);
  void append(std::vector<float>& f) const;
};
// The reference: the same features from whole per-token lists (no running state), for the tests.
std::vector<double> number_features_reference(const std::vector<std::string>& pieces, const std::vector<double>& p,
                                              const std::vector<double>& margin, const std::vector<double>& entropy);

// The tap side: running per-layer sums over positions >= begin (the response).
class ProbeFeatures final : public KVTap {
 public:
  // Positions [begin, end) are observed (the response: [prompt length, end of context); the prompt
  // for the anomaly profile: [0, prompt length)).
  ProbeFeatures(const HParams& hp, ProbeSpec spec, int begin = 0, int end = INT_MAX);
  void on_kv(int layer, int pos0, int n, const float* k, const float* v) override;
  void reset(int begin, int end = INT_MAX);
  // A token was chosen (after ls.choose): its text feeds the number statistics (spec.numbers).
  void on_token(const LogitStats& ls, const std::string& piece);
  bool wants_tokens() const { return spec_.numbers; }

  const ProbeSpec& spec() const { return spec_; }
  int n_tokens() const { return st_.n_tokens; }
  int dim() const { return spec_.dim(head_dim_); }
  // The prompt prior's features (kProbePriorFeatures), final once the response's first row arrived
  // or every prior layer saw the whole window; empty without a prior in the spec.
  std::vector<float> prior_features() const;
  // The feature vector now (logit statistics from `ls`, ignored when the spec has no logits).
  std::vector<float> features(const LogitStats& ls) const;
  // Bytes of per-sequence state (the sums and the previous u of every layer).
  size_t state_bytes() const;

  // The state as plain data, to restore after a probe or a retry (like DifficultyTap::State).
  struct State {
    std::vector<float> sum, prev, prompt_sum;
    std::vector<float> stats;  // per layer: sum dr, sum dtheta, max dr, max dtheta
    std::vector<int> n;        // per layer: tokens observed
    int next_pos = INT_MIN, n_tokens = 0;
    NumberStats numbers;
    // The prompt prior: per prior layer the running sums of K and V (2 * kv_dim, freed once the
    // prior is computed), rows counted and the next unseen position; the prior once computed.
    std::vector<double> prior_sum;
    std::vector<int> prior_count, prior_next;
    std::vector<float> prior;
  };
  State state() const { return st_; }
  void restore(const State& s) { st_ = s; }

 private:
  int head_dim_, n_head_kv_, kv_dim_, begin_, end_ = INT_MAX;
  ProbeSpec spec_;
  std::vector<int> slot_;  // layer -> index into spec_.layers, -1 when not read
  int last_layer_ = -1;
  std::vector<int> prior_slot_;  // layer -> index into spec_.prior->layers, -1 when not pooled
  int prior_end_ = 0;           // the prior's window: prompt positions [0, prior_end_)
  State st_;
  std::vector<float> prior_now() const;  // the prior from the sums as they are
  void finish_prior();
};

// The reference computation of the KV part of the features from stored K/V: k[l][t], v[l][t] are
// the kv_dim rows of selected layer spec.layers[l] at response token t. Double precision, no
// running state: what the tests compare the tap with.
std::vector<double> probe_kv_features_reference(const ProbeSpec& spec, int head_dim, int n_head_kv,
                                                const std::vector<std::vector<std::vector<float>>>& k,
                                                const std::vector<std::vector<std::vector<float>>>& v);

// in -> hidden (ReLU) -> hidden (ReLU) -> 1 logit; inputs standardized with the training set's
// statistics. score() is P(correct) = sigmoid(logit).
class ProbeMLP {
 public:
  ProbeMLP() = default;
  ProbeMLP(int input_dim, int hidden, uint64_t seed);
  int input_dim() const { return in_; }
  int hidden() const { return hid_; }
  size_t n_params() const;
  double score(const std::vector<float>& x) const;
  double logit(const float* x_raw) const;
  std::vector<float> pack() const;  // mean, inv_std, w1, b1, w2, b2, w3, b3
  void unpack(int input_dim, int hidden, const std::vector<float>& flat);
  static size_t packed_size(int input_dim, int hidden);

 private:
  int in_ = 0, hid_ = 0;
  std::vector<float> flat_;
};

// What a confidence file holds: the probe, the features it reads, the model it belongs to, and the
// early-cut threshold chosen at training (answers scoring below it are predicted wrong).
struct ProbeFile {
  uint64_t model_fingerprint = 0;
  ProbeSpec spec;
  ProbeMLP mlp;
  double cut_below = 0;   // early-warning threshold on P(correct)
  std::string info;       // JSON text: how it was trained
};

// Binary, little-endian: "KVSPROB1", version, fingerprint, spec, threshold, info, [prior], dims,
// floats. Version 2 (written when the spec reads number statistics) adds that flag, version 3
// (written when it reads the prompt prior) the prior's flag and block; files of versions 1 and 2
// load with their meaning, and each file is written with the lowest version that holds it.
void save_probe(const std::string& path, const ProbeFile& f);
// Throws InputError naming the file: not a confidence file, damaged, wrong version, or (when
// expect_fingerprint != 0) trained for another model.
ProbeFile load_probe(const std::string& path, uint64_t expect_fingerprint = 0);
// "<stem>.confidence.bin" beside "<stem>.gguf", or "" when absent.
std::string sibling_probe_path(const std::string& model_path);

// The reference of the prompt prior's features from stored K/V: k[l][t], v[l][t] are the kv_dim
// rows of prior layer l at prompt position t (the window's positions). Double precision.
std::vector<double> prior_features_reference(const PromptPrior& p, const std::vector<std::vector<std::vector<float>>>& k,
                                             const std::vector<std::vector<std::vector<float>>>& v);

}  // namespace kvscope::signals
