#include "reasoning/difficulty_mlp.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>

#include "kernels/kernels.h"
#include "util/error.h"

namespace kvscope::reasoning {

namespace {

// splitmix64: a tiny deterministic generator for initialization and shuffles.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
  double normal() {
    const double u = std::max(uniform(), 1e-300), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
};

// SIMD dot products: the estimate runs every few generated tokens, next to the decode step.
void dense(const float* w, const float* b, const float* x, float* y, int out, int in) {
  for (int o = 0; o < out; ++o) y[o] = b[o] + kernels::dot_f32(w + static_cast<size_t>(o) * in, x, in);
}

void softmax(const float* z, double* p) {
  const double m = std::max({z[0], z[1], z[2]});
  double s = 0;
  for (int c = 0; c < kClasses; ++c) s += (p[c] = std::exp(z[c] - m));
  for (int c = 0; c < kClasses; ++c) p[c] /= s;
}

}  // namespace

int Estimate::label() const {
  return static_cast<int>(std::max_element(probs.begin(), probs.end()) - probs.begin());
}

DifficultyMLP::DifficultyMLP(int input_dim, int hidden, uint64_t seed) : in_(input_dim), hid_(hidden) {
  if (input_dim <= 0 || hidden <= 0) throw InputError("difficulty MLP: dimensions must be positive");
  Rng r{seed};
  auto init = [&](std::vector<float>& w, int out, int in) {
    w.resize(static_cast<size_t>(out) * in);
    const double sd = std::sqrt(2.0 / in);  // He init for ReLU layers
    for (float& x : w) x = static_cast<float>(r.normal() * sd);
  };
  init(w1_, hid_, in_);
  init(w2_, hid_, hid_);
  init(w3_, kClasses, hid_);
  b1_.assign(hid_, 0.0f);
  b2_.assign(hid_, 0.0f);
  b3_.assign(kClasses, 0.0f);
  mean_.assign(in_, 0.0f);
  inv_std_.assign(in_, 1.0f);
}

size_t DifficultyMLP::n_params() const {
  return w1_.size() + b1_.size() + w2_.size() + b2_.size() + w3_.size() + b3_.size();
}

void DifficultyMLP::forward(const float* x, float* h1, float* h2, float* logits) const {
  dense(w1_.data(), b1_.data(), x, h1, hid_, in_);
  for (int i = 0; i < hid_; ++i) h1[i] = std::max(h1[i], 0.0f);
  dense(w2_.data(), b2_.data(), h1, h2, hid_, hid_);
  for (int i = 0; i < hid_; ++i) h2[i] = std::max(h2[i], 0.0f);
  dense(w3_.data(), b3_.data(), h2, logits, kClasses, hid_);
}

Estimate DifficultyMLP::estimate(const std::vector<float>& x) const {
  if (in_ == 0) throw InputError("difficulty MLP: not trained or loaded");
  if (static_cast<int>(x.size()) != in_)
    throw InputError("difficulty MLP: got " + std::to_string(x.size()) + " features, expects " + std::to_string(in_));
  std::vector<float> xs(in_), h1(hid_), h2(hid_);
  for (int i = 0; i < in_; ++i) xs[i] = (x[i] - mean_[i]) * inv_std_[i];
  float z[kClasses];
  forward(xs.data(), h1.data(), h2.data(), z);
  Estimate e;
  softmax(z, e.probs.data());
  e.difficulty = 100.0 * (0.5 * e.probs[1] + e.probs[2]);
  e.confidence = *std::max_element(e.probs.begin(), e.probs.end());
  return e;
}

TrainReport DifficultyMLP::train(const std::vector<std::vector<float>>& X, const std::vector<int>& y,
                                 const TrainOptions& o) {
  const size_t n = X.size();
  if (n < 4 || y.size() != n) throw InputError("difficulty MLP: need at least 4 labelled rows");
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<int>(X[i].size()) != in_) throw InputError("difficulty MLP: rows of different lengths");
    if (y[i] < 0 || y[i] >= kClasses) throw InputError("difficulty MLP: label out of range");
  }
  Rng r{o.seed ^ 0x5bd1e995ull};
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  for (size_t i = n - 1; i > 0; --i) std::swap(idx[i], idx[r.next() % (i + 1)]);
  const size_t n_val = std::clamp<size_t>(static_cast<size_t>(o.val_fraction * n), 1, n - 1);
  std::vector<size_t> val(idx.begin(), idx.begin() + n_val), tr(idx.begin() + n_val, idx.end());

  // Standardization from the training rows only.
  std::vector<double> m(in_, 0.0), v(in_, 0.0);
  for (size_t i : tr)
    for (int j = 0; j < in_; ++j) m[j] += X[i][j];
  for (int j = 0; j < in_; ++j) m[j] /= tr.size();
  for (size_t i : tr)
    for (int j = 0; j < in_; ++j) v[j] += (X[i][j] - m[j]) * (X[i][j] - m[j]);
  for (int j = 0; j < in_; ++j) {
    mean_[j] = static_cast<float>(m[j]);
    inv_std_[j] = static_cast<float>(1.0 / std::sqrt(v[j] / tr.size() + 1e-8));
  }
  std::vector<float> Xs(n * in_);
  for (size_t i = 0; i < n; ++i)
    for (int j = 0; j < in_; ++j) Xs[i * in_ + j] = (X[i][j] - mean_[j]) * inv_std_[j];

  std::vector<std::vector<float>*> params = {&w1_, &b1_, &w2_, &b2_, &w3_, &b3_};
  std::vector<std::vector<float>> g(params.size()), am(params.size()), av(params.size());
  for (size_t k = 0; k < params.size(); ++k) {
    g[k].assign(params[k]->size(), 0.0f);
    am[k].assign(params[k]->size(), 0.0f);
    av[k].assign(params[k]->size(), 0.0f);
  }
  std::vector<float> h1(hid_), h2(hid_), d1(hid_), d2(hid_);
  auto eval = [&](const std::vector<size_t>& rows, double& loss, double& acc) {
    loss = 0;
    int ok = 0;
    for (size_t i : rows) {
      float z[kClasses];
      double p[kClasses];
      forward(&Xs[i * in_], h1.data(), h2.data(), z);
      softmax(z, p);
      loss -= std::log(std::max(p[y[i]], 1e-12));
      ok += std::max_element(p, p + kClasses) - p == y[i];
    }
    loss /= rows.size();
    acc = double(ok) / rows.size();
  };

  TrainReport rep;
  rep.n_train = static_cast<int>(tr.size());
  rep.n_val = static_cast<int>(n_val);
  std::vector<float> best = pack();
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
        const float* x = &Xs[i * in_];
        float z[kClasses];
        double p[kClasses];
        forward(x, h1.data(), h2.data(), z);
        softmax(z, p);
        tr_loss -= std::log(std::max(p[y[i]], 1e-12));
        float dz[kClasses];
        for (int c = 0; c < kClasses; ++c) dz[c] = static_cast<float>(p[c] - (c == y[i]));
        std::fill(d2.begin(), d2.end(), 0.0f);
        for (int c = 0; c < kClasses; ++c) {
          g[5][c] += dz[c];
          for (int j = 0; j < hid_; ++j) {
            g[4][c * hid_ + j] += dz[c] * h2[j];
            d2[j] += dz[c] * w3_[c * hid_ + j];
          }
        }
        std::fill(d1.begin(), d1.end(), 0.0f);
        for (int j = 0; j < hid_; ++j) {
          if (h2[j] <= 0) continue;
          g[3][j] += d2[j];
          for (int k = 0; k < hid_; ++k) {
            g[2][j * hid_ + k] += d2[j] * h1[k];
            d1[k] += d2[j] * w2_[j * hid_ + k];
          }
        }
        for (int k = 0; k < hid_; ++k) {
          if (h1[k] <= 0) continue;
          g[1][k] += d1[k];
          float* gr = &g[0][static_cast<size_t>(k) * in_];
          for (int j = 0; j < in_; ++j) gr[j] += d1[k] * x[j];
        }
      }
      ++t;
      const double scale = 1.0 / (e - s);
      const double c1 = 1.0 - std::pow(b1, t), c2 = 1.0 - std::pow(b2, t);
      for (size_t k = 0; k < params.size(); ++k) {
        auto& w = *params[k];
        const bool decay = k % 2 == 0;  // weights, not biases
        for (size_t j = 0; j < w.size(); ++j) {
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
      best = pack();
    } else if (ep - rep.best_epoch >= o.patience) {
      break;
    }
  }
  unpack(in_, hid_, best);
  rep.best_val_loss = best_loss;
  double tl;
  eval(tr, tl, rep.train_accuracy);
  return rep;
}

std::vector<float> DifficultyMLP::pack() const {
  std::vector<float> out;
  for (const auto* v : {&mean_, &inv_std_, &w1_, &b1_, &w2_, &b2_, &w3_, &b3_}) out.insert(out.end(), v->begin(), v->end());
  return out;
}

void DifficultyMLP::unpack(int input_dim, int hidden, const std::vector<float>& flat) {
  const size_t in = input_dim, h = hidden;
  const size_t need = 2 * in + h * in + h + h * h + h + kClasses * h + kClasses;
  if (input_dim <= 0 || hidden <= 0 || flat.size() != need)
    throw InputError("difficulty MLP: weight vector of the wrong size");
  in_ = input_dim;
  hid_ = hidden;
  size_t off = 0;
  auto take = [&](std::vector<float>& v, size_t len) {
    v.assign(flat.begin() + off, flat.begin() + off + len);
    off += len;
  };
  take(mean_, in);
  take(inv_std_, in);
  take(w1_, h * in);
  take(b1_, h);
  take(w2_, h * h);
  take(b2_, h);
  take(w3_, kClasses * h);
  take(b3_, kClasses);
}

namespace {

constexpr char kMagic[8] = {'K', 'V', 'S', 'D', 'I', 'F', 'F', '1'};
constexpr uint32_t kVersion = 1;

struct Out {
  std::string b;
  template <class T>
  void put(T v) { b.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const std::string& s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    b += s;
  }
};

struct In {
  const std::string& b;
  const std::string& path;
  size_t off = 0;
  void need(size_t n) {
    if (b.size() - off < n) throw InputError("difficulty file '" + path + "' is truncated or damaged");
  }
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, b.data() + off, sizeof v);
    off += sizeof v;
    return v;
  }
  std::string str() {
    const uint32_t n = get<uint32_t>();
    need(n);
    std::string s = b.substr(off, n);
    off += n;
    return s;
  }
};

}  // namespace

void save_difficulty(const std::string& path, const DifficultyFile& f) {
  Out o;
  o.b.append(kMagic, sizeof kMagic);
  o.put<uint32_t>(kVersion);
  o.put<uint64_t>(f.model_fingerprint);
  o.put<uint32_t>(static_cast<uint32_t>(f.features.layers.size()));
  for (int l : f.features.layers) o.put<int32_t>(l);
  o.put<double>(f.features.prompt_fraction);
  o.put<uint8_t>(f.features.pre_rope);
  o.str(f.info);
  o.put<int32_t>(f.mlp.input_dim());
  o.put<int32_t>(f.mlp.hidden());
  const auto w = f.mlp.pack();
  o.put<uint64_t>(w.size());
  o.b.append(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float));
  std::ofstream out(path, std::ios::binary);
  if (!out || !out.write(o.b.data(), static_cast<std::streamsize>(o.b.size())))
    throw InputError("cannot write difficulty file '" + path + "'");
}

DifficultyFile load_difficulty(const std::string& path, uint64_t expect_fingerprint) {
  std::ifstream fin(path, std::ios::binary);
  if (!fin) throw InputError("cannot open difficulty file '" + path + "'");
  const std::string b((std::istreambuf_iterator<char>(fin)), std::istreambuf_iterator<char>());
  In in{b, path};
  in.need(sizeof kMagic);
  if (std::memcmp(b.data(), kMagic, sizeof kMagic) != 0)
    throw InputError("'" + path + "' is not a kvscope difficulty file (bad magic)");
  in.off = sizeof kMagic;
  const uint32_t ver = in.get<uint32_t>();
  if (ver != kVersion)
    throw InputError("difficulty file '" + path + "' has version " + std::to_string(ver) + ", this build reads " +
                     std::to_string(kVersion));
  DifficultyFile f;
  f.model_fingerprint = in.get<uint64_t>();
  if (expect_fingerprint && f.model_fingerprint != expect_fingerprint)
    throw InputError("difficulty file '" + path +
                     "' was trained for another model (its model fingerprint does not match); retrain it with "
                     "kvscope train-difficulty for this model");
  const uint32_t nl = in.get<uint32_t>();
  if (nl > 4096) throw InputError("difficulty file '" + path + "' is damaged (layer count)");
  for (uint32_t i = 0; i < nl; ++i) f.features.layers.push_back(in.get<int32_t>());
  f.features.prompt_fraction = in.get<double>();
  f.features.pre_rope = in.get<uint8_t>() != 0;
  if (!(f.features.prompt_fraction > 0 && f.features.prompt_fraction <= 1))
    throw InputError("difficulty file '" + path + "' is damaged (prompt fraction)");
  f.info = in.str();
  const int32_t din = in.get<int32_t>(), hid = in.get<int32_t>();
  const uint64_t nw = in.get<uint64_t>();
  if (din <= 0 || hid <= 0 || din > (1 << 22) || hid > (1 << 16) || nw > (uint64_t{1} << 28))
    throw InputError("difficulty file '" + path + "' is damaged (dimensions)");
  in.need(nw * sizeof(float));
  std::vector<float> w(nw);
  std::memcpy(w.data(), b.data() + in.off, nw * sizeof(float));
  in.off += nw * sizeof(float);
  try {
    f.mlp.unpack(din, hid, w);
  } catch (const InputError&) {
    throw InputError("difficulty file '" + path + "' is damaged (weights do not match its dimensions)");
  }
  if (in.off != b.size()) throw InputError("difficulty file '" + path + "' has trailing bytes (damaged)");
  return f;
}

std::string sibling_difficulty_path(const std::string& model_path) {
  std::string stem = model_path;
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".gguf") == 0) stem.resize(stem.size() - 5);
  const std::string cand = stem + ".difficulty.bin";
  return std::ifstream(cand, std::ios::binary) ? cand : std::string();
}

}  // namespace kvscope::reasoning
