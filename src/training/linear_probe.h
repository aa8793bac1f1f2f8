// A logistic-regression probe (standardized inputs, L2, full-batch Adam): the cheap, standard
// way to ask how much of a label a feature set carries (analyze-difficulty fits dozens of them).
#pragma once
#include <vector>

namespace kvscope::reasoning {

class LinearProbe {
 public:
  // y: positives are true. Deterministic (zero init, full batch).
  void fit(const std::vector<std::vector<float>>& X, const std::vector<bool>& y, double l2 = 1e-2, int iters = 300,
           double lr = 0.05);
  // P(positive | x).
  double predict(const std::vector<float>& x) const;

 private:
  std::vector<double> mean_, inv_std_, w_;
  double b_ = 0;
};

}  // namespace kvscope::reasoning
