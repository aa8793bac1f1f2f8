#include "training/difficulty_train.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernels/kernels.h"
#include "util/error.h"
#include "util/rng.h"

namespace kvscope::reasoning {

namespace {

// The estimator's weights as views into its flat pack() layout:
// mean[in] inv_std[in] w1[hid][in] b1[hid] w2[hid][hid] b2[hid] w3[3][hid] b3[3].
struct Params {
  struct View {
    float* p;
    size_t n;
  };
  int in, hid;
  std::vector<float> flat;
  float *mean, *inv_std;
  View w[6];  // w1 b1 w2 b2 w3 b3, the order Adam walks them in

  Params(const Params&) = delete;  // the views point into flat
  Params(int in_, int hid_, std::vector<float> f) : in(in_), hid(hid_), flat(std::move(f)) {
    float* p = flat.data();
    mean = p;
    inv_std = p + in;
    p += 2 * in;
    const size_t sizes[6] = {size_t(hid) * in, size_t(hid), size_t(hid) * hid, size_t(hid), size_t(kClasses) * hid,
                             size_t(kClasses)};
    for (int k = 0; k < 6; ++k) {
      w[k] = {p, sizes[k]};
      p += sizes[k];
    }
  }

  // x standardized; the same arithmetic as DifficultyMLP::estimate.
  void forward(const float* x, float* h1, float* h2, float* logits) const {
    auto dense = [](const float* W, const float* b, const float* v, float* y, int out, int n) {
      for (int o = 0; o < out; ++o) y[o] = b[o] + kernels::dot_f32(W + static_cast<size_t>(o) * n, v, n);
    };
    dense(w[0].p, w[1].p, x, h1, hid, in);
    for (int i = 0; i < hid; ++i) h1[i] = std::max(h1[i], 0.0f);
    dense(w[2].p, w[3].p, h1, h2, hid, hid);
    for (int i = 0; i < hid; ++i) h2[i] = std::max(h2[i], 0.0f);
    dense(w[4].p, w[5].p, h2, logits, kClasses, hid);
  }
};

}  // namespace

TrainReport train_difficulty(DifficultyMLP& mlp, const std::vector<std::vector<float>>& X, const std::vector<int>& y,
                             const TrainOptions& o) {
  const int in = mlp.input_dim(), hid = mlp.hidden();
  if (in == 0) throw InputError("difficulty MLP: give it dimensions before training");
  const size_t n = X.size();
  if (n < 4 || y.size() != n) throw InputError("difficulty MLP: need at least 4 labelled rows");
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<int>(X[i].size()) != in) throw InputError("difficulty MLP: rows of different lengths");
    if (y[i] < 0 || y[i] >= kClasses) throw InputError("difficulty MLP: label out of range");
  }
  Params P(in, hid, mlp.pack());
  util::SplitMix64 r{o.seed ^ 0x5bd1e995ull};
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  for (size_t i = n - 1; i > 0; --i) std::swap(idx[i], idx[r.next() % (i + 1)]);
  const size_t n_val = std::clamp<size_t>(static_cast<size_t>(o.val_fraction * n), 1, n - 1);
  std::vector<size_t> val(idx.begin(), idx.begin() + n_val), tr(idx.begin() + n_val, idx.end());

  // Standardization from the training rows only.
  std::vector<double> m(in, 0.0), v(in, 0.0);
  for (size_t i : tr)
    for (int j = 0; j < in; ++j) m[j] += X[i][j];
  for (int j = 0; j < in; ++j) m[j] /= tr.size();
  for (size_t i : tr)
    for (int j = 0; j < in; ++j) v[j] += (X[i][j] - m[j]) * (X[i][j] - m[j]);
  for (int j = 0; j < in; ++j) {
    P.mean[j] = static_cast<float>(m[j]);
    P.inv_std[j] = static_cast<float>(1.0 / std::sqrt(v[j] / tr.size() + 1e-8));
  }
  std::vector<float> Xs(n * in);
  for (size_t i = 0; i < n; ++i)
    for (int j = 0; j < in; ++j) Xs[i * in + j] = (X[i][j] - P.mean[j]) * P.inv_std[j];

  std::vector<std::vector<float>> g(6), am(6), av(6);
  for (int k = 0; k < 6; ++k) {
    g[k].assign(P.w[k].n, 0.0f);
    am[k].assign(P.w[k].n, 0.0f);
    av[k].assign(P.w[k].n, 0.0f);
  }
  const float* w2 = P.w[2].p;
  const float* w3 = P.w[4].p;
  std::vector<float> h1(hid), h2(hid), d1(hid), d2(hid);
  auto eval = [&](const std::vector<size_t>& rows, double& loss, double& acc) {
    loss = 0;
    int ok = 0;
    for (size_t i : rows) {
      float z[kClasses];
      double p[kClasses];
      P.forward(&Xs[i * in], h1.data(), h2.data(), z);
      class_probs(z, p);
      loss -= std::log(std::max(p[y[i]], 1e-12));
      ok += std::max_element(p, p + kClasses) - p == y[i];
    }
    loss /= rows.size();
    acc = double(ok) / rows.size();
  };

  TrainReport rep;
  rep.n_train = static_cast<int>(tr.size());
  rep.n_val = static_cast<int>(n_val);
  std::vector<float> best = P.flat;
  double best_loss = std::numeric_limits<double>::infinity();
  long t = 0;
  const double b1 = 0.9, b2 = 0.999;
  for (int ep = 1; ep <= o.max_epochs; ++ep) {
    for (size_t i = tr.size() - 1; i > 0; --i) std::swap(tr[i], tr[r.next() % (i + 1)]);
    double tr_loss = 0;
    for (size_t s = 0; s < tr.size(); s += o.batch) {
      const size_t e = std::min(tr.size(), s + o.batch);
      for (auto& gk : g) std::fill(gk.begin(), gk.end(), 0.0f);
      for (size_t q = s; q < e; ++q) {
        const size_t i = tr[q];
        const float* x = &Xs[i * in];
        float z[kClasses];
        double p[kClasses];
        P.forward(x, h1.data(), h2.data(), z);
        class_probs(z, p);
        tr_loss -= std::log(std::max(p[y[i]], 1e-12));
        float dz[kClasses];
        for (int c = 0; c < kClasses; ++c) dz[c] = static_cast<float>(p[c] - (c == y[i]));
        std::fill(d2.begin(), d2.end(), 0.0f);
        for (int c = 0; c < kClasses; ++c) {
          g[5][c] += dz[c];
          for (int j = 0; j < hid; ++j) {
            g[4][c * hid + j] += dz[c] * h2[j];
            d2[j] += dz[c] * w3[c * hid + j];
          }
        }
        std::fill(d1.begin(), d1.end(), 0.0f);
        for (int j = 0; j < hid; ++j) {
          if (h2[j] <= 0) continue;
          g[3][j] += d2[j];
          for (int k = 0; k < hid; ++k) {
            g[2][j * hid + k] += d2[j] * h1[k];
            d1[k] += d2[j] * w2[j * hid + k];
          }
        }
        for (int k = 0; k < hid; ++k) {
          if (h1[k] <= 0) continue;
          g[1][k] += d1[k];
          float* gr = &g[0][static_cast<size_t>(k) * in];
          for (int j = 0; j < in; ++j) gr[j] += d1[k] * x[j];
        }
      }
      ++t;
      const double scale = 1.0 / (e - s);
      const double c1 = 1.0 - std::pow(b1, t), c2 = 1.0 - std::pow(b2, t);
      for (int k = 0; k < 6; ++k) {
        float* w = P.w[k].p;
        const bool decay = k % 2 == 0;  // weights, not biases
        for (size_t j = 0; j < P.w[k].n; ++j) {
          const double gj = g[k][j] * scale;
          am[k][j] = static_cast<float>(b1 * am[k][j] + (1 - b1) * gj);
          av[k][j] = static_cast<float>(b2 * av[k][j] + (1 - b2) * gj * gj);
          double step = o.lr * (am[k][j] / c1) / (std::sqrt(av[k][j] / c2) + 1e-8);
          if (decay) step += o.lr * o.weight_decay * w[j];
          w[j] -= static_cast<float>(step);
        }
      }
    }
    tr_loss /= tr.size();
    double vl, va;
    eval(val, vl, va);
    rep.epochs = ep;
    if (o.on_epoch) o.on_epoch(ep, tr_loss, vl, va);
    if (vl < best_loss - 1e-6) {
      best_loss = vl;
      rep.best_epoch = ep;
      rep.val_accuracy = va;
      best = P.flat;
    } else if (ep - rep.best_epoch >= o.patience) {
      break;
    }
  }
  std::copy(best.begin(), best.end(), P.flat.begin());  // the views keep pointing into P.flat
  rep.best_val_loss = best_loss;
  double tl;
  eval(tr, tl, rep.train_accuracy);
  mlp.unpack(in, hid, P.flat);
  return rep;
}

FitResult fit_difficulty(const std::vector<ProblemRecord>& recs, int hidden, Mode unsolved, const TrainOptions& o) {
  std::vector<std::vector<float>> X;
  std::vector<int> y;
  int counts[kClasses] = {0, 0, 0}, cp_counts[kClasses] = {0, 0, 0}, n_unsolved = 0;
  for (const auto& r : recs) {
    X.push_back(r.features);
    y.push_back(r.label(unsolved));
    counts[y.back()]++;
    n_unsolved += !r.solved();
    for (const auto& c : r.checkpoints) {
      X.push_back(c.features);
      y.push_back(r.checkpoint_label(c, unsolved));
      cp_counts[y.back()]++;
    }
  }
  if (X.empty() || X[0].empty()) throw InputError("no difficulty rows to train on (no problems, or no features)");
  FitResult out{DifficultyMLP(static_cast<int>(X[0].size()), hidden, o.seed), {}};
  const TrainReport rep = train_difficulty(out.mlp, X, y, o);
  out.info = {{"rows", X.size()},
              {"labels_question", {{"fast", counts[0]}, {"mixed", counts[1]}, {"slow", counts[2]}}},
              {"labels_checkpoints", {{"fast", cp_counts[0]}, {"mixed", cp_counts[1]}, {"slow", cp_counts[2]}}},
              {"unsolved", n_unsolved},
              {"epochs", rep.epochs},
              {"best_epoch", rep.best_epoch},
              {"val_loss", rep.best_val_loss},
              {"val_accuracy", rep.val_accuracy},
              {"train_accuracy", rep.train_accuracy},
              {"params", out.mlp.n_params()}};
  return out;
}

}  // namespace kvscope::reasoning
