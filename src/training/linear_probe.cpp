#include "training/linear_probe.h"

#include <cmath>

#include "util/error.h"

namespace kvscope::reasoning {

void LinearProbe::fit(const std::vector<std::vector<float>>& X, const std::vector<bool>& y, double l2, int iters,
                      double lr) {
  const size_t n = X.size();
  if (n == 0 || y.size() != n) throw InputError("probe: need labelled rows");
  const size_t d = X[0].size();
  mean_.assign(d, 0.0);
  inv_std_.assign(d, 0.0);
  for (const auto& x : X) {
    if (x.size() != d) throw InputError("probe: rows of different lengths");
    for (size_t j = 0; j < d; ++j) mean_[j] += x[j];
  }
  for (size_t j = 0; j < d; ++j) mean_[j] /= n;
  for (const auto& x : X)
    for (size_t j = 0; j < d; ++j) inv_std_[j] += (x[j] - mean_[j]) * (x[j] - mean_[j]);
  for (size_t j = 0; j < d; ++j) inv_std_[j] = 1.0 / std::sqrt(inv_std_[j] / n + 1e-8);
  std::vector<float> Xs(n * d);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < d; ++j) Xs[i * d + j] = static_cast<float>((X[i][j] - mean_[j]) * inv_std_[j]);

  w_.assign(d, 0.0);
  b_ = 0;
  std::vector<double> g(d), m(d + 1, 0.0), v(d + 1, 0.0);
  for (int t = 1; t <= iters; ++t) {
    std::fill(g.begin(), g.end(), 0.0);
    double gb = 0;
    for (size_t i = 0; i < n; ++i) {
      const float* x = &Xs[i * d];
      double z = b_;
      for (size_t j = 0; j < d; ++j) z += w_[j] * x[j];
      const double err = 1.0 / (1.0 + std::exp(-z)) - (y[i] ? 1.0 : 0.0);
      gb += err;
      for (size_t j = 0; j < d; ++j) g[j] += err * x[j];
    }
    const double c1 = 1 - std::pow(0.9, t), c2 = 1 - std::pow(0.999, t);
    for (size_t j = 0; j <= d; ++j) {
      const double gj = j < d ? g[j] / n + l2 * w_[j] : gb / n;
      m[j] = 0.9 * m[j] + 0.1 * gj;
      v[j] = 0.999 * v[j] + 0.001 * gj * gj;
      const double step = lr * (m[j] / c1) / (std::sqrt(v[j] / c2) + 1e-8);
      if (j < d)
        w_[j] -= step;
      else
        b_ -= step;
    }
  }
}

double LinearProbe::predict(const std::vector<float>& x) const {
  if (x.size() != w_.size()) throw InputError("probe: feature length differs from the fitted one");
  double z = b_;
  for (size_t j = 0; j < x.size(); ++j) z += w_[j] * (x[j] - mean_[j]) * inv_std_[j];
  return 1.0 / (1.0 + std::exp(-z));
}

}  // namespace kvscope::reasoning
