// Metric code against values worked out by hand.
#include "signals/confidence_metrics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "signals/coe_scores.h"
#include "signals/embed_metrics.h"
#include "util/error.h"

namespace confidence_metrics_test {

using namespace kvscope;
using namespace kvscope::signals;

TEST(SignalsMetrics, AurocCountsPairsAndHalvesTies) {
  // positives {0.9, 0.7}, negatives {0.8, 0.6}: 3 of 4 pairs ordered right.
  EXPECT_DOUBLE_EQ(auroc({0.9, 0.8, 0.7, 0.6}, {true, false, true, false}), 0.75);
  // positive 1 vs negatives {1, 0}: one tie (1/2) and one win.
  EXPECT_DOUBLE_EQ(auroc({1, 1, 0}, {true, false, false}), 0.75);
  EXPECT_DOUBLE_EQ(auroc({3, 2, 1}, {true, true, false}), 1.0);
  EXPECT_DOUBLE_EQ(auroc({1, 2, 3}, {true, true, false}), 0.0);
  EXPECT_DOUBLE_EQ(auroc({5, 5, 5, 5}, {true, false, true, false}), 0.5);
  EXPECT_TRUE(std::isnan(auroc({1, 2}, {true, true})));
}

TEST(SignalsMetrics, Fpr95AcceptsNearlyAllPositives) {
  // Accepting both positives needs threshold 0.7, which also accepts the negative 0.8.
  EXPECT_DOUBLE_EQ(fpr_at_tpr({0.9, 0.8, 0.7, 0.6}, {true, false, true, false}), 0.5);
  EXPECT_DOUBLE_EQ(fpr_at_tpr({0.9, 0.8, 0.1, 0.2}, {true, true, false, false}), 0.0);
  // 20 positives: 95% is 19 of them, so the lowest positive may be missed.
  std::vector<double> s;
  std::vector<bool> p;
  for (int i = 0; i < 20; ++i) s.push_back(10 + i), p.push_back(true);
  s.push_back(0), p.push_back(true);   // the one positive below every negative
  s.push_back(5), p.push_back(false);  // negatives between
  s.push_back(1), p.push_back(false);
  // 20 of 21 positives = 95.2% >= 95% at threshold 10: no negative accepted.
  EXPECT_DOUBLE_EQ(fpr_at_tpr(s, p), 0.0);
  // Ties with a negative enter together.
  EXPECT_DOUBLE_EQ(fpr_at_tpr({1, 1, 0}, {true, false, false}), 0.5);
}

TEST(SignalsMetrics, AuprIsAveragePrecision) {
  // P N P N: precision 1 at recall 0.5, then 2/3 at recall 1.
  EXPECT_NEAR(aupr({0.9, 0.8, 0.7, 0.6}, {true, false, true, false}), 0.5 + 0.5 * 2.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(aupr({3, 2, 1}, {true, true, false}), 1.0);
  EXPECT_DOUBLE_EQ(aupr({1, 1, 0}, {true, false, false}), 0.5);  // tie: precision 1/2 when the positive comes in
  EXPECT_THROW(aupr({1, 2}, {true}), InputError);
}

TEST(SignalsMetrics, SpearmanPurityAndCentroids) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 30, 45}), 1.0);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_NEAR(spearman({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(22.5), 1e-12);
  EXPECT_DOUBLE_EQ(purity({0, 0, 1, 1}, {7, 8, 8, 8}), 0.75);
  Matrix train = {{1, 0}, {0.9f, 0.1f}, {0, 1}}, test = {{0.8f, 0.2f}, {0.1f, 0.9f}};
  EXPECT_DOUBLE_EQ(nearest_centroid_accuracy(train, {0, 0, 1}, test, {0, 1}), 1.0);
  // Two well separated groups are found whatever the seed.
  Matrix x = {{0, 0}, {0.1f, 0}, {0, 0.1f}, {5, 5}, {5.1f, 5}, {5, 5.1f}};
  for (uint64_t seed = 1; seed < 6; ++seed) EXPECT_DOUBLE_EQ(purity(kmeans(x, 2, seed), {0, 0, 0, 1, 1, 1}), 1.0);
}

TEST(SignalsScores, TrajectoryScoresByHand) {
  // (1,0) -> (0,1) -> (-1,0): two steps of length sqrt2 turning pi/2; first to last: 2 and pi.
  const CoEScores c = score_trajectory({{1, 0}, {0, 1}, {-1, 0}});
  const double r2 = std::sqrt(2.0), pi = std::acos(-1.0);
  EXPECT_EQ(c.n_points, 3);
  EXPECT_NEAR(c.mean_dr, r2, 1e-6);
  EXPECT_NEAR(c.mean_dtheta, pi / 2, 1e-6);
  EXPECT_NEAR(c.coe_r, r2, 1e-6);
  EXPECT_NEAR(c.coe_c, std::hypot(r2, pi / 2), 1e-6);
  EXPECT_NEAR(c.total_dr, 2.0, 1e-6);
  EXPECT_NEAR(c.total_dtheta, pi, 1e-6);
  EXPECT_NEAR(c.coe_r_norm, r2 / 2 - 0.5, 1e-6);
  EXPECT_NEAR(c.coe_c_norm, std::hypot(r2 / 2, 0.5), 1e-6);
  EXPECT_EQ(score_trajectory({{1, 2}}).coe_c, 0.0);  // one point: no change to score
  // The stable angle formula agrees with arccos where arccos is well conditioned.
  const float a[3] = {1, 2, 3}, b[3] = {-2, 0.5f, 1};
  const double cosab = (-2 + 1 + 3) / (std::sqrt(14.0) * std::sqrt(5.25));
  EXPECT_NEAR(angle_between(a, b, 3), std::acos(cosab), 1e-6);
}

TEST(SignalsScores, LogitBaselinesByHand) {
  LogitStats s;
  const float l[2] = {0.0f, std::log(3.0f)};  // p = (1/4, 3/4)
  s.add(l, 2, 0);
  EXPECT_NEAR(s.max_prob(), 0.75, 1e-6);
  EXPECT_NEAR(s.perplexity(), 4.0, 1e-5);
  EXPECT_NEAR(s.entropy(), -(0.25 * std::log(0.25) + 0.75 * std::log(0.75)), 1e-6);
  s.add(l, 2, 1);  // log p = log 3/4: perplexity exp(-(log 1/4 + log 3/4) / 2)
  EXPECT_NEAR(s.perplexity(), std::exp(-(std::log(0.25) + std::log(0.75)) / 2), 1e-5);
  EXPECT_THROW(s.add(l, 2, 2), InputError);
  EXPECT_EQ(score_orientation("max_prob"), 1);
  EXPECT_EQ(score_orientation("perplexity"), -1);
  EXPECT_EQ(score_orientation("entropy"), -1);
}

// A confident wrong answer is what calibration error counts: 0.95 said, 50% right in that bin.
TEST(ConfidenceMetrics, CalibrationErrorWeighsEachBinByItsShare) {
  EXPECT_DOUBLE_EQ(expected_calibration_error({}, {}), 0.0);
  EXPECT_NEAR(expected_calibration_error({0.95, 0.95}, {true, false}), 0.45, 1e-12);
  // Two bins, each calibrated: 0.25 said and 1 in 4 right, 0.75 said and 3 in 4 right.
  EXPECT_NEAR(expected_calibration_error({0.25, 0.25, 0.25, 0.25, 0.75, 0.75, 0.75, 0.75},
                                         {true, false, false, false, true, true, true, false}),
              0.0, 1e-12);
  // 1.0 falls in the top bin, 0.0 in the bottom one.
  EXPECT_NEAR(expected_calibration_error({1.0, 0.0}, {false, true}), 1.0, 1e-12);
}

}  // namespace confidence_metrics_test
