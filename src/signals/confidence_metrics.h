// How well a score separates correct (positive) from wrong (negative) answers. Every function
// takes scores oriented so that higher means "more likely correct".
//   AUROC: P(score_pos > score_neg) + 0.5 P(equal), over all positive/negative pairs (ties count half).
//   FPR95: the fraction of negatives accepted at the highest threshold that still accepts at
//          least 95% of the positives (accept: score >= threshold). Lower is better.
//   AUPR:  average precision with correct answers as positives: sum over distinct thresholds of
//          precision * (recall gained), tied scores entering together.
//   ECE:   expected calibration error of scores read as probabilities of being correct: 10
//          equal-width bins, |accuracy - mean score| per bin weighted by its share (0 for no answers).
// With no positives or no negatives the value is NaN (undefined), never a made-up number.
#pragma once
#include <vector>

namespace kvscope::signals {

double auroc(const std::vector<double>& scores, const std::vector<bool>& positive);
double fpr_at_tpr(const std::vector<double>& scores, const std::vector<bool>& positive, double tpr = 0.95);
double aupr(const std::vector<double>& scores, const std::vector<bool>& positive);
double expected_calibration_error(const std::vector<double>& scores, const std::vector<bool>& positive);

}  // namespace kvscope::signals
