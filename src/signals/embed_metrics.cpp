#include "signals/embed_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "util/error.h"
#include "util/rng.h"

namespace kvscope::signals {

namespace {

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
  return s;
}

double dist2(const std::vector<float>& a, const std::vector<double>& c) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (a[i] - c[i]) * (a[i] - c[i]);
  return s;
}

uint64_t splitmix(uint64_t& s) {
  util::SplitMix64 r{s};
  const uint64_t v = r.next();
  s = r.s;
  return v;
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j < idx.size() && v[idx[j]] == v[idx[i]]) ++j;
    for (size_t k = i; k < j; ++k) r[idx[k]] = (double(i) + double(j - 1)) / 2.0;
    i = j;
  }
  return r;
}

}  // namespace

double nearest_centroid_accuracy(const Matrix& train, const std::vector<int>& train_labels, const Matrix& test,
                                 const std::vector<int>& test_labels) {
  if (train.size() != train_labels.size() || test.size() != test_labels.size() || train.empty() || test.empty())
    throw InputError("nearest centroid: empty sets or labels of the wrong length");
  std::map<int, std::vector<float>> cent;
  for (size_t i = 0; i < train.size(); ++i) {
    auto& c = cent[train_labels[i]];
    if (c.empty()) c.assign(train[i].size(), 0.0f);
    for (size_t j = 0; j < c.size(); ++j) c[j] += train[i][j];
  }
  for (auto& [l, c] : cent) {
    const double n = std::sqrt(dot(c, c));
    if (n > 0)
      for (float& x : c) x = static_cast<float>(x / n);
  }
  int ok = 0;
  for (size_t i = 0; i < test.size(); ++i) {
    int best = 0;
    double best_s = -std::numeric_limits<double>::infinity();
    for (auto& [l, c] : cent) {
      const double s = dot(test[i], c);
      if (s > best_s) best_s = s, best = l;
    }
    ok += best == test_labels[i];
  }
  return double(ok) / double(test.size());
}

std::vector<int> kmeans(const Matrix& x, int k, uint64_t seed) {
  const size_t n = x.size();
  if (n == 0 || k < 1) throw InputError("k-means: no rows or k < 1");
  k = std::min<int>(k, static_cast<int>(n));
  const size_t d = x[0].size();
  std::vector<std::vector<double>> c;
  uint64_t s = seed;
  const size_t first = splitmix(s) % n;
  c.emplace_back(x[first].begin(), x[first].end());
  std::vector<double> dmin(n, std::numeric_limits<double>::infinity());
  while (static_cast<int>(c.size()) < k) {  // k-means++: next centre with probability ~ distance^2
    double total = 0;
    for (size_t i = 0; i < n; ++i) total += dmin[i] = std::min(dmin[i], dist2(x[i], c.back()));
    double r = (splitmix(s) >> 11) * 0x1.0p-53 * total;
    size_t pick = n - 1;
    for (size_t i = 0; i < n; ++i)
      if ((r -= dmin[i]) <= 0) {
        pick = i;
        break;
      }
    c.emplace_back(x[pick].begin(), x[pick].end());
  }
  std::vector<int> a(n, -1);
  for (int it = 0; it < 100; ++it) {
    bool changed = false;
    for (size_t i = 0; i < n; ++i) {
      int best = 0;
      double bd = std::numeric_limits<double>::infinity();
      for (int j = 0; j < k; ++j) {
        const double dd = dist2(x[i], c[j]);
        if (dd < bd) bd = dd, best = j;
      }
      if (a[i] != best) a[i] = best, changed = true;
    }
    if (!changed) break;
    std::vector<std::vector<double>> sum(k, std::vector<double>(d, 0.0));
    std::vector<int> cnt(k, 0);
    for (size_t i = 0; i < n; ++i) {
      ++cnt[a[i]];
      for (size_t j = 0; j < d; ++j) sum[a[i]][j] += x[i][j];
    }
    for (int j = 0; j < k; ++j)
      if (cnt[j])
        for (size_t t = 0; t < d; ++t) c[j][t] = sum[j][t] / cnt[j];
  }
  return a;
}

double purity(const std::vector<int>& clusters, const std::vector<int>& labels) {
  if (clusters.size() != labels.size() || clusters.empty()) throw InputError("purity: empty or mismatched labels");
  std::map<int, std::map<int, int>> m;
  for (size_t i = 0; i < clusters.size(); ++i) ++m[clusters[i]][labels[i]];
  int sum = 0;
  for (auto& [c, counts] : m) {
    int best = 0;
    for (auto& [l, n] : counts) best = std::max(best, n);
    sum += best;
  }
  return double(sum) / double(clusters.size());
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) throw InputError("spearman: need two equal-length series of 2+ values");
  const auto ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (saa == 0 || sbb == 0) return std::numeric_limits<double>::quiet_NaN();
  return sab / std::sqrt(saa * sbb);
}

}  // namespace kvscope::signals
