// Answer-confidence scores of one response: KV-CoE (spec section 3), the original paper's
// normalized Chain-of-Embedding (Wang et al., ICLR 2025), and the logit baselines.
//
// Trajectory e_1 .. e_T (token embeddings for KV-CoE; per-layer mean hidden states h_0 .. h_L for
// the original CoE). For s = 1 .. S = T-1:
//   dr_s     = ||e_{s+1} - e_s||_2
//   dtheta_s = arccos(e_{s+1} . e_s / (||e_{s+1}|| ||e_s||))     computed as
//              2 * atan2(||a^ - b^||, ||a^ + b^||) on the unit vectors, which is the same angle
//              without arccos's loss of precision near 0.
// Spec scores (unnormalized):
//   KV-CoE-C = | (1/S) sum_s (dr_s + i dtheta_s) | = sqrt(mean(dr)^2 + mean(dtheta)^2)
//   KV-CoE-R = (1/S) sum_s dr_s                      (the magnitude part alone)
// Paper-normalized scores, with DR = ||e_T - e_1||_2 and DTHETA = angle(e_1, e_T):
//   CoE-R-norm = (1/S) sum_s (dr_s / DR - dtheta_s / DTHETA)        (real-space combination)
//   CoE-C-norm = | (1/S) sum_s (dr_s / DR + i dtheta_s / DTHETA) |  (complex-space combination)
// A zero DR or DTHETA (e.g. T < 2, or a trajectory that returns to its start) makes that term 0.
// Orientation: see score_orientation() (which way each score points to "confident").
#pragma once
#include <string>
#include <vector>

namespace kvscope::signals {

struct TrajectoryStep {
  float dr = 0, dtheta = 0;
};

struct CoEScores {
  int n_points = 0;          // T
  double mean_dr = 0, mean_dtheta = 0;
  double coe_c = 0, coe_r = 0;            // spec (unnormalized)
  double coe_c_norm = 0, coe_r_norm = 0;  // paper-normalized
  double total_dr = 0, total_dtheta = 0;  // DR, DTHETA
};

// The angle between a and b in radians (0 when either is the zero vector).
double angle_between(const float* a, const float* b, int n);
double l2_distance(const float* a, const float* b, int n);

// Scores from the per-step changes and the first-to-last change.
CoEScores scores_from_steps(const std::vector<TrajectoryStep>& steps, double total_dr, double total_dtheta);
// The same from running sums of dr and dtheta over n_steps steps (the streaming path: the sums are
// all the scores need, so a tap does not keep a value per token).
CoEScores scores_from_sums(double sum_dr, double sum_dtheta, int n_steps, double total_dr, double total_dtheta);
// Scores of an explicit trajectory (points of equal length): the reference path.
CoEScores score_trajectory(const std::vector<std::vector<float>>& points);

// Logit baselines over the generated tokens: fed with each step's logits and the chosen token.
class LogitStats {
 public:
  void add(const float* logits, int n_vocab, int chosen);
  // The two halves of add for drivers that see the logits before the token is drawn: logits must
  // stay valid until choose (the scheduler calls on_logits and on_token in the same step).
  void observe(const float* logits, int n_vocab);
  void choose(int chosen);
  bool pending() const { return pending_ != nullptr; }
  int n() const { return n_; }
  double max_prob() const;     // mean over tokens of max_v p(v)
  double perplexity() const;   // exp(-mean log p(chosen))
  double entropy() const;      // mean over tokens of -sum_v p(v) log p(v), nats
  // Extremes and shares the confidence probe reads (0 before the first token).
  double min_max_prob() const { return n_ ? min_max_ : 0.0; }
  double max_entropy() const { return max_entropy_; }
  double mean_logp() const { return n_chosen_ ? sum_logp_ / n_chosen_ : 0.0; }
  double min_logp() const { return n_chosen_ ? min_logp_ : 0.0; }
  double share_max_prob_below(double t) const;  // t: 0.9 or 0.5
  // The latest chosen token: its probability, its distribution's top1 - top2 probability margin
  // and entropy (the confidence probe's number-token statistics read them per token).
  double last_p() const { return last_p_; }
  double last_margin() const { return last_margin_; }
  double last_entropy() const { return last_entropy_; }

 private:
  int n_ = 0, n_chosen_ = 0, n_below90_ = 0, n_below50_ = 0;
  double sum_max_ = 0, sum_logp_ = 0, sum_entropy_ = 0;
  double min_max_ = 1, max_entropy_ = 0, min_logp_ = 0;
  std::vector<double> p_;
  const float* pending_ = nullptr;
  int pending_n_ = 0;
  double pending_max_ = 0, pending_logz_ = 0, pending_margin_ = 0, pending_entropy_ = 0;
  double last_p_ = 0, last_margin_ = 0, last_entropy_ = 0;
};

// +1 when a higher value means "more likely correct", -1 when lower does. MaxProb: +1; perplexity
// and entropy: -1; the CoE family: +1 (the paper's reading: correct answers travel a larger,
// more decisive latent path). Unknown names: +1.
int score_orientation(const std::string& name);

}  // namespace kvscope::signals
