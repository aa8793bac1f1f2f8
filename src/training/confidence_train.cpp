#include "training/confidence_train.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "signals/confidence_metrics.h"
#include "util/error.h"
#include "util/rng.h"

namespace kvscope::training {

ProbeTrainReport train_probe(signals::ProbeMLP& mlp, const std::vector<std::vector<float>>& X, const std::vector<int>& y,
                             const std::vector<int>& group, const ProbeTrainOptions& o) {
  const int in = mlp.input_dim(), hid = mlp.hidden();
  if (in == 0) throw InputError("confidence probe: give it dimensions before training");
  const size_t n = X.size();
  if (n < 4 || y.size() != n || group.size() != n) throw InputError("confidence probe: need at least 4 labelled rows");
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<int>(X[i].size()) != in) throw InputError("confidence probe: rows of different lengths");
    if (y[i] != 0 && y[i] != 1) throw InputError("confidence probe: labels must be 0 or 1");
  }
  // Split by group.
  util::SplitMix64 r{o.seed ^ 0x9e3779b97f4a7c15ull};
  std::vector<int> groups(group);
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  for (size_t i = groups.size() - 1; i > 0; --i) std::swap(groups[i], groups[r.next() % (i + 1)]);
  const size_t n_val_groups = std::clamp<size_t>(static_cast<size_t>(o.val_fraction * groups.size()), 1, groups.size() - 1);
  std::unordered_map<int, bool> is_val;
  for (size_t i = 0; i < groups.size(); ++i) is_val[groups[i]] = i < n_val_groups;
  std::vector<size_t> tr, val;
  for (size_t i = 0; i < n; ++i) (is_val[group[i]] ? val : tr).push_back(i);
  if (tr.empty() || val.empty()) throw InputError("confidence probe: too few answers to split");

  std::vector<float> flat = mlp.pack();
  float* mean = flat.data();
  float* inv = mean + in;
  std::vector<double> m(in, 0.0), v(in, 0.0);
  for (size_t i : tr)
    for (int j = 0; j < in; ++j) m[j] += X[i][j];
  for (int j = 0; j < in; ++j) m[j] /= tr.size();
  for (size_t i : tr)
    for (int j = 0; j < in; ++j) v[j] += (X[i][j] - m[j]) * (X[i][j] - m[j]);
  for (int j = 0; j < in; ++j) {
    mean[j] = static_cast<float>(m[j]);
    inv[j] = static_cast<float>(1.0 / std::sqrt(v[j] / tr.size() + 1e-8));
  }
  std::vector<float> Xs(n * in);
  for (size_t i = 0; i < n; ++i)
    for (int j = 0; j < in; ++j) Xs[i * in + j] = (X[i][j] - mean[j]) * inv[j];

  // Views into flat after the standardization.
  float* W1 = inv + in;
  float* B1 = W1 + static_cast<size_t>(hid) * in;
  float* W2 = B1 + hid;
  float* B2 = W2 + static_cast<size_t>(hid) * hid;
  float* W3 = B2 + hid;
  float* B3 = W3 + hid;
  const size_t off = 2 * static_cast<size_t>(in), np = flat.size() - off;
  std::vector<double> g(np), am(np, 0.0), av(np, 0.0);
  std::vector<char> decay(np, 0);
  auto mark = [&](float* p, size_t len) { std::fill_n(decay.begin() + (p - flat.data() - off), len, 1); };
  mark(W1, static_cast<size_t>(hid) * in);
  mark(W2, static_cast<size_t>(hid) * hid);
  mark(W3, hid);
  std::vector<float> h1(hid), h2(hid);
  std::vector<double> d1(hid), d2(hid);
  auto forward = [&](const float* x) {
    for (int k = 0; k < hid; ++k) {
      double s = B1[k];
      const float* w = W1 + static_cast<size_t>(k) * in;
      for (int j = 0; j < in; ++j) s += double(w[j]) * x[j];
      h1[k] = static_cast<float>(std::max(0.0, s));
    }
    for (int k = 0; k < hid; ++k) {
      double s = B2[k];
      const float* w = W2 + static_cast<size_t>(k) * hid;
      for (int j = 0; j < hid; ++j) s += double(w[j]) * h1[j];
      h2[k] = static_cast<float>(std::max(0.0, s));
    }
    double z = B3[0];
    for (int j = 0; j < hid; ++j) z += double(W3[j]) * h2[j];
    return z;
  };
  auto bce = [](double z, int t) {  // -log sigmoid(+-z), stable
    const double s = t ? -z : z;
    return s > 0 ? s + std::log1p(std::exp(-s)) : std::log1p(std::exp(s));
  };
  auto evaluate = [&](const std::vector<size_t>& rows, double& loss, double& auc) {
    loss = 0;
    std::vector<double> sc;
    std::vector<bool> pos;
    for (size_t i : rows) {
      const double z = forward(&Xs[i * in]);
      loss += bce(z, y[i]);
      sc.push_back(z);
      pos.push_back(y[i] == 1);
    }
    loss /= rows.size();
    auc = signals::auroc(sc, pos);
  };

  ProbeTrainReport rep;
  rep.n_train = static_cast<int>(tr.size());
  rep.n_val = static_cast<int>(val.size());
  std::vector<float> best = flat;
  double best_loss = std::numeric_limits<double>::infinity();
  long t = 0;
  const double b1 = 0.9, b2 = 0.999;
  for (int ep = 1; ep <= o.max_epochs; ++ep) {
    for (size_t i = tr.size() - 1; i > 0; --i) std::swap(tr[i], tr[r.next() % (i + 1)]);
    double tr_loss = 0;
    for (size_t s = 0; s < tr.size(); s += o.batch) {
      const size_t e = std::min(tr.size(), s + o.batch);
      std::fill(g.begin(), g.end(), 0.0);
      double* gW1 = g.data() + (W1 - flat.data() - off);
      double* gB1 = g.data() + (B1 - flat.data() - off);
      double* gW2 = g.data() + (W2 - flat.data() - off);
      double* gB2 = g.data() + (B2 - flat.data() - off);
      double* gW3 = g.data() + (W3 - flat.data() - off);
      double* gB3 = g.data() + (B3 - flat.data() - off);
      for (size_t q = s; q < e; ++q) {
        const size_t i = tr[q];
        const float* x = &Xs[i * in];
        const double z = forward(x);
        tr_loss += bce(z, y[i]);
        const double dz = 1.0 / (1.0 + std::exp(-z)) - y[i];
        gB3[0] += dz;
        for (int j = 0; j < hid; ++j) {
          gW3[j] += dz * h2[j];
          d2[j] = h2[j] > 0 ? dz * W3[j] : 0.0;
        }
        std::fill(d1.begin(), d1.end(), 0.0);
        for (int k = 0; k < hid; ++k) {
          if (d2[k] == 0) continue;
          gB2[k] += d2[k];
          const float* w = W2 + static_cast<size_t>(k) * hid;
          double* gw = gW2 + static_cast<size_t>(k) * hid;
          for (int j = 0; j < hid; ++j) {
            gw[j] += d2[k] * h1[j];
            d1[j] += d2[k] * w[j];
          }
        }
        for (int k = 0; k < hid; ++k) {
          if (h1[k] <= 0 || d1[k] == 0) continue;
          gB1[k] += d1[k];
          double* gw = gW1 + static_cast<size_t>(k) * in;
          for (int j = 0; j < in; ++j) gw[j] += d1[k] * x[j];
        }
      }
      ++t;
      const double scale = 1.0 / (e - s);
      const double c1 = 1.0 - std::pow(b1, t), c2 = 1.0 - std::pow(b2, t);
      float* w = flat.data() + off;
      for (size_t j = 0; j < np; ++j) {
        const double gj = g[j] * scale;
        am[j] = b1 * am[j] + (1 - b1) * gj;
        av[j] = b2 * av[j] + (1 - b2) * gj * gj;
        double step = o.lr * (am[j] / c1) / (std::sqrt(av[j] / c2) + 1e-8);
        if (decay[j]) step += o.lr * o.weight_decay * w[j];
        w[j] -= static_cast<float>(step);
      }
    }
    tr_loss /= tr.size();
    double vl, va;
    evaluate(val, vl, va);
    rep.epochs = ep;
    if (o.on_epoch) o.on_epoch(ep, tr_loss, vl, va);
    if (vl < best_loss - 1e-6) {
      best_loss = vl;
      rep.best_epoch = ep;
      rep.val_auroc = va;
      best = flat;
    } else if (ep - rep.best_epoch >= o.patience) {
      break;
    }
  }
  rep.best_val_loss = best_loss;
  mlp.unpack(in, hid, best);
  return rep;
}

}  // namespace kvscope::training
