#include "signals/confidence_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "util/error.h"

namespace kvscope::signals {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void check(const std::vector<double>& s, const std::vector<bool>& p) {
  if (s.size() != p.size()) throw InputError("metrics: scores and labels differ in length");
  for (double x : s)
    if (std::isnan(x)) throw InputError("metrics: NaN score");
}

// Indices sorted by descending score.
std::vector<size_t> order_desc(const std::vector<double>& s) {
  std::vector<size_t> idx(s.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return s[a] > s[b]; });
  return idx;
}

}  // namespace

double auroc(const std::vector<double>& scores, const std::vector<bool>& positive) {
  check(scores, positive);
  const size_t n = scores.size();
  const double np = static_cast<double>(std::count(positive.begin(), positive.end(), true));
  const double nn = static_cast<double>(n) - np;
  if (np == 0 || nn == 0) return kNaN;
  // Mann-Whitney U with mid-ranks for ties.
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  double rank_sum = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && scores[idx[j]] == scores[idx[i]]) ++j;
    const double mid = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (positive[idx[k]]) rank_sum += mid;
    i = j;
  }
  return (rank_sum - np * (np + 1) / 2.0) / (np * nn);
}

double fpr_at_tpr(const std::vector<double>& scores, const std::vector<bool>& positive, double tpr) {
  check(scores, positive);
  const double np = static_cast<double>(std::count(positive.begin(), positive.end(), true));
  const double nn = static_cast<double>(scores.size()) - np;
  if (np == 0 || nn == 0) return kNaN;
  const auto idx = order_desc(scores);
  double tp = 0, fp = 0;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j < idx.size() && scores[idx[j]] == scores[idx[i]]) {
      (positive[idx[j]] ? tp : fp) += 1;
      ++j;
    }
    if (tp / np >= tpr - 1e-12) return fp / nn;
    i = j;
  }
  return 1.0;
}

double aupr(const std::vector<double>& scores, const std::vector<bool>& positive) {
  check(scores, positive);
  const double np = static_cast<double>(std::count(positive.begin(), positive.end(), true));
  if (np == 0 || np == static_cast<double>(scores.size())) return kNaN;
  const auto idx = order_desc(scores);
  double tp = 0, fp = 0, ap = 0, prev_recall = 0;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j < idx.size() && scores[idx[j]] == scores[idx[i]]) {
      (positive[idx[j]] ? tp : fp) += 1;
      ++j;
    }
    const double recall = tp / np;
    ap += (tp / (tp + fp)) * (recall - prev_recall);
    prev_recall = recall;
    i = j;
  }
  return ap;
}

double expected_calibration_error(const std::vector<double>& scores, const std::vector<bool>& positive) {
  if (scores.empty()) return 0;
  double n[10] = {}, conf[10] = {}, acc[10] = {};
  for (size_t i = 0; i < scores.size(); ++i) {
    const int b = std::clamp(static_cast<int>(scores[i] * 10), 0, 9);
    n[b] += 1;
    conf[b] += scores[i];
    acc[b] += positive[i];
  }
  double e = 0;
  for (int b = 0; b < 10; ++b)
    if (n[b] > 0) e += n[b] / static_cast<double>(scores.size()) * std::abs(acc[b] / n[b] - conf[b] / n[b]);
  return e;
}

}  // namespace kvscope::signals
