#include "signals/coe_scores.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/error.h"

namespace kvscope::signals {

double angle_between(const float* a, const float* b, int n) {
  double na = 0, nb = 0;
  for (int i = 0; i < n; ++i) {
    na += double(a[i]) * a[i];
    nb += double(b[i]) * b[i];
  }
  if (na <= 0 || nb <= 0) return 0;
  na = std::sqrt(na);
  nb = std::sqrt(nb);
  double diff = 0, sum = 0;
  for (int i = 0; i < n; ++i) {
    const double x = a[i] / na, y = b[i] / nb;
    diff += (x - y) * (x - y);
    sum += (x + y) * (x + y);
  }
  return 2.0 * std::atan2(std::sqrt(diff), std::sqrt(sum));
}

double l2_distance(const float* a, const float* b, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) {
    const double d = double(a[i]) - b[i];
    s += d * d;
  }
  return std::sqrt(s);
}

CoEScores scores_from_steps(const std::vector<TrajectoryStep>& steps, double total_dr, double total_dtheta) {
  double sdr = 0, sdt = 0;
  for (const auto& s : steps) {
    sdr += s.dr;
    sdt += s.dtheta;
  }
  return scores_from_sums(sdr, sdt, static_cast<int>(steps.size()), total_dr, total_dtheta);
}

CoEScores scores_from_sums(double sum_dr, double sum_dtheta, int n_steps, double total_dr, double total_dtheta) {
  CoEScores c;
  c.n_points = n_steps <= 0 ? 0 : n_steps + 1;
  c.total_dr = total_dr;
  c.total_dtheta = total_dtheta;
  if (n_steps <= 0) return c;
  const double S = static_cast<double>(n_steps);
  c.mean_dr = sum_dr / S;
  c.mean_dtheta = sum_dtheta / S;
  c.coe_r = c.mean_dr;
  c.coe_c = std::hypot(c.mean_dr, c.mean_dtheta);
  const double r = total_dr > 0 ? c.mean_dr / total_dr : 0.0;
  const double a = total_dtheta > 0 ? c.mean_dtheta / total_dtheta : 0.0;
  c.coe_r_norm = r - a;
  c.coe_c_norm = std::hypot(r, a);
  return c;
}

CoEScores score_trajectory(const std::vector<std::vector<float>>& points) {
  if (points.size() < 2) {
    CoEScores c;
    c.n_points = static_cast<int>(points.size());
    return c;
  }
  const int n = static_cast<int>(points[0].size());
  for (const auto& p : points)
    if (static_cast<int>(p.size()) != n) throw InputError("trajectory points differ in length");
  std::vector<TrajectoryStep> steps;
  for (size_t i = 0; i + 1 < points.size(); ++i)
    steps.push_back({static_cast<float>(l2_distance(points[i + 1].data(), points[i].data(), n)),
                     static_cast<float>(angle_between(points[i].data(), points[i + 1].data(), n))});
  return scores_from_steps(steps, l2_distance(points.back().data(), points.front().data(), n),
                           angle_between(points.front().data(), points.back().data(), n));
}

void LogitStats::add(const float* logits, int n_vocab, int chosen) {
  if (chosen < 0 || chosen >= n_vocab) throw InputError("logit stats: token outside the vocabulary");
  observe(logits, n_vocab);
  choose(chosen);
}

void LogitStats::observe(const float* logits, int n_vocab) {
  if (n_vocab <= 0) throw InputError("logit stats: empty vocabulary");
  // Softmax in double: the baselines are compared at the third decimal.
  const float mx = *std::max_element(logits, logits + n_vocab);
  p_.resize(n_vocab);
  double z = 0, second = 0;  // second: the runner-up's exp(logit - max)
  bool seen_max = false;
  for (int i = 0; i < n_vocab; ++i) {
    z += p_[i] = std::exp(double(logits[i]) - mx);
    if (logits[i] == mx && !seen_max)
      seen_max = true;
    else
      second = std::max(second, p_[i]);
  }
  double h = 0;
  for (int i = 0; i < n_vocab; ++i) {
    const double p = p_[i] / z;
    if (p > 0) h -= p * std::log(p);
  }
  const double pmax = 1.0 / z;  // the max logit's probability is exp(0) / z
  sum_max_ += pmax;
  sum_entropy_ += h;
  min_max_ = std::min(min_max_, pmax);
  max_entropy_ = std::max(max_entropy_, h);
  n_below90_ += pmax < 0.9;
  n_below50_ += pmax < 0.5;
  ++n_;
  pending_ = logits;
  pending_n_ = n_vocab;
  pending_max_ = mx;
  pending_logz_ = std::log(z);
  pending_margin_ = (1.0 - second) / z;
  pending_entropy_ = h;
}

void LogitStats::choose(int chosen) {
  if (!pending_) throw InputError("logit stats: a token without logits");
  if (chosen < 0 || chosen >= pending_n_) throw InputError("logit stats: token outside the vocabulary");
  const double lp = double(pending_[chosen]) - pending_max_ - pending_logz_;
  sum_logp_ += lp;
  min_logp_ = n_chosen_ ? std::min(min_logp_, lp) : lp;
  ++n_chosen_;
  last_p_ = std::exp(lp);
  last_margin_ = pending_margin_;
  last_entropy_ = pending_entropy_;
  pending_ = nullptr;
}

double LogitStats::max_prob() const { return n_ ? sum_max_ / n_ : 0.0; }
double LogitStats::perplexity() const { return n_ ? std::exp(-sum_logp_ / n_) : 0.0; }
double LogitStats::entropy() const { return n_ ? sum_entropy_ / n_ : 0.0; }
double LogitStats::share_max_prob_below(double t) const {
  if (!n_) return 0.0;
  return (t >= 0.9 ? n_below90_ : n_below50_) / static_cast<double>(n_);
}

int score_orientation(const std::string& name) {
  if (name == "perplexity" || name == "entropy") return -1;
  return +1;
}

}  // namespace kvscope::signals
