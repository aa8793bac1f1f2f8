#include "signals/kv_profile.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "kernels/kernels.h"
#include "util/error.h"
#include "util/model_file.h"
#include "util/rng.h"

namespace kvscope::signals {

ProbeSpec KVProfile::spec() const {
  ProbeSpec s;
  s.layers = layers;
  s.kv = true;
  s.logits = false;
  return s;
}

double KVProfile::score(const std::vector<float>& x) const {
  if (static_cast<int>(x.size()) != dim)
    throw InputError("KV profile: got " + std::to_string(x.size()) + " values, expects " + std::to_string(dim));
  std::vector<double> c(dim);
  for (int i = 0; i < dim; ++i) c[i] = x[i] - mean[i];
  double s = 0;
  for (int i = 0; i < dim; ++i) {
    const double* w = whiten.data() + static_cast<size_t>(i) * dim;
    double z = 0;
    for (int j = 0; j <= i; ++j) z += w[j] * c[j];
    s += z * z;
  }
  return std::sqrt(s / dim);
}

namespace {

// Mean and lower-triangular whitening W = chol(S)^-1 of n rows of d floats (row i at rows + i * d),
// S the covariance shrunk toward its diagonal.
void fit_whitening(const float* rows, size_t n, int d, double shrink, std::vector<double>& mean, std::vector<double>& whiten) {
  mean.assign(d, 0.0);
  for (size_t r = 0; r < n; ++r)
    for (int i = 0; i < d; ++i) mean[i] += rows[r * d + i];
  for (double& m : mean) m /= static_cast<double>(n);
  std::vector<double> C(static_cast<size_t>(d) * d, 0.0), c(d);
  for (size_t r = 0; r < n; ++r) {
    for (int i = 0; i < d; ++i) c[i] = rows[r * d + i] - mean[i];
    for (int i = 0; i < d; ++i) {
      double* row = C.data() + static_cast<size_t>(i) * d;
      const double ci = c[i];
      for (int j = 0; j <= i; ++j) row[j] += ci * c[j];
    }
  }
  const double inv_n = 1.0 / static_cast<double>(n - 1);
  double mean_var = 0;
  for (int i = 0; i < d; ++i) mean_var += C[static_cast<size_t>(i) * d + i] * inv_n;
  mean_var /= d;
  // Shrink the off-diagonal part; a floor keeps constant features (e.g. a fixed length) invertible.
  const double eps = 1e-6 * (mean_var > 0 ? mean_var : 1.0);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j <= i; ++j) {
      double& v = C[static_cast<size_t>(i) * d + j];
      v *= inv_n;
      if (i != j) v *= 1.0 - shrink;
      else v += eps;
    }
  // Cholesky C = L L^T (lower), then W = L^-1 by forward substitution.
  std::vector<double> L(static_cast<size_t>(d) * d, 0.0);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = C[static_cast<size_t>(i) * d + j];
      for (int k = 0; k < j; ++k) s -= L[static_cast<size_t>(i) * d + k] * L[static_cast<size_t>(j) * d + k];
      if (i == j) {
        if (s <= 0) throw InputError("KV profile: covariance is not positive definite (raise --shrink)");
        L[static_cast<size_t>(i) * d + i] = std::sqrt(s);
      } else {
        L[static_cast<size_t>(i) * d + j] = s / L[static_cast<size_t>(j) * d + j];
      }
    }
  whiten.assign(static_cast<size_t>(d) * d, 0.0);
  for (int col = 0; col < d; ++col)
    for (int i = col; i < d; ++i) {
      double s = i == col ? 1.0 : 0.0;
      for (int k = col; k < i; ++k) s -= L[static_cast<size_t>(i) * d + k] * whiten[static_cast<size_t>(k) * d + col];
      whiten[static_cast<size_t>(i) * d + col] = s / L[static_cast<size_t>(i) * d + i];
    }
}

// z = W (y - mean) with W lower triangular.
void apply_whitening(const std::vector<double>& mean, const std::vector<double>& whiten, int d, const float* y, double* c, float* z) {
  for (int i = 0; i < d; ++i) c[i] = y[i] - mean[i];
  for (int i = 0; i < d; ++i) {
    const double* w = whiten.data() + static_cast<size_t>(i) * d;
    double acc = 0;
    for (int j = 0; j <= i; ++j) acc += w[j] * c[j];
    z[i] = static_cast<float>(acc);
  }
}

// The L2-normalized mean_h V_h of one row (hd floats into u).
void token_u(const float* vr, int n_head_kv, int hd, float* u) {
  const int e = hd;
  std::memset(u, 0, sizeof(float) * e);
  for (int h = 0; h < n_head_kv; ++h) kernels::add_inplace(u, vr + h * hd, hd);
  const float nn = kernels::dot_f32(u, u, e);
  const float sc = nn > 0 ? 1.0f / std::sqrt(nn) : 0.0f;
  for (int i = 0; i < e; ++i) u[i] *= sc;
}

}  // namespace

KVProfile fit_profile(const std::vector<std::vector<float>>& rows, double shrink) {
  if (rows.size() < 2) throw InputError("KV profile: need at least 2 prompts");
  const int d = static_cast<int>(rows[0].size());
  std::vector<float> flat;
  flat.reserve(rows.size() * d);
  for (const auto& r : rows) {
    if (static_cast<int>(r.size()) != d) throw InputError("KV profile: prompt vectors of different lengths");
    flat.insert(flat.end(), r.begin(), r.end());
  }
  KVProfile p;
  p.dim = d;
  fit_whitening(flat.data(), rows.size(), d, shrink, p.mean, p.whiten);
  return p;
}

double KVProfile::combine(double pooled, double token_max, double count_max, double user_part, int markers) const {
  if (!has_parts()) return pooled;
  double s = pooled / pooled_ref;
  if (!token.empty()) s = std::max({s, token_max / token_ref, count_max / count_ref});
  if (!user.empty()) s = std::max(s, user_part / user_ref) + marker_weight * markers;
  return s;
}

int special_tokens_in(const tok::Tokenizer& tk, const std::vector<int32_t>& prompt, const std::vector<std::pair<int, int>>& spans) {
  const auto& types = tk.vocab().types;
  if (types.empty()) return 0;
  int n = 0;
  for (const auto& [b, e] : spans)  // spans do not overlap (each is found after the one before)
    for (int i = std::max(b, 0); i < std::min<int>(e, static_cast<int>(prompt.size())); ++i) {
      const int32_t id = prompt[i];
      if (id >= 0 && id < static_cast<int32_t>(types.size()) &&
          (types[id] == tok::TokenType::Control || types[id] == tok::TokenType::UserDefined))
        ++n;
    }
  return n;
}

double TokenModel::count_score(const std::vector<int>& counts) const {
  double best = 0;
  for (size_t j = 0; j < count_mean.size() && j < counts.size(); ++j)
    best = std::max(best, (counts[j] - count_mean[j]) * double(count_scale[j]));
  return best;
}

void fit_token_counts(TokenModel& t, const std::vector<std::vector<int>>& counts, double floor) {
  t.count_mean.assign(t.k, 0.0f);
  t.count_scale.assign(t.k, 0.0f);
  if (counts.empty() || t.k == 0) return;
  for (int j = 0; j < t.k; ++j) {
    double s = 0, s2 = 0;
    for (const auto& c : counts) s += c[j], s2 += double(c[j]) * c[j];
    const double n = static_cast<double>(counts.size()), m = s / n, var = std::max(0.0, s2 / n - m * m);
    t.count_mean[j] = static_cast<float>(m);
    // Centroids a normal prompt holds under half a token of on average are left to the distance
    // part: with hundreds of them, one holding a stray rare word somewhere is common, and their
    // near-zero variance would make that look as odd as a duplicated template token.
    t.count_scale[j] = m < 0.5 ? 0.0f : static_cast<float>(1.0 / std::sqrt(var + floor));
  }
}

double TokenModel::distance(const float* y, int* nearest) const {
  std::vector<double> c(dim);
  std::vector<float> z(dim);
  return distance(y, nearest, c.data(), z.data());
}

double TokenModel::distance(const float* y, int* nearest, double* c, float* z) const {
  apply_whitening(mean, whiten, dim, y, c, z);
  const float zz = kernels::dot_f32(z, z, dim);
  float best = zz;  // no centroids: the distance from the mean
  int arg = -1;
  for (int j = 0; j < k; ++j) {
    const float d2 = zz - 2 * kernels::dot_f32(z, centroids.data() + static_cast<size_t>(j) * dim, dim) + c_norm2[j];
    if (j == 0 || d2 < best) best = d2, arg = j;
  }
  if (nearest) *nearest = arg;
  return std::sqrt(std::max(0.0f, best) / dim);
}

TokenModel fit_token_model(const std::vector<float>& rows, int dim, double shrink, int k, int iterations, uint64_t seed) {
  if (dim <= 0 || rows.size() % dim != 0) throw InputError("KV profile: token vectors of different lengths");
  const size_t n = rows.size() / dim;
  if (n < 2) throw InputError("KV profile: need at least 2 prompt tokens");
  TokenModel t;
  t.dim = dim;
  fit_whitening(rows.data(), n, dim, shrink, t.mean, t.whiten);
  std::vector<float> Z(n * dim);
  std::vector<double> c(dim);
  for (size_t r = 0; r < n; ++r) apply_whitening(t.mean, t.whiten, dim, rows.data() + r * dim, c.data(), Z.data() + r * dim);
  t.k = static_cast<int>(std::min<size_t>(std::max(k, 0), n));
  if (t.k == 0) return t;
  // Distinct random tokens as the first centroids, then Lloyd steps.
  std::vector<size_t> idx(n);
  for (size_t i = 0; i < n; ++i) idx[i] = i;
  util::SplitMix64 rng{seed};
  for (int j = 0; j < t.k; ++j) std::swap(idx[j], idx[j + rng.next() % (n - j)]);
  t.centroids.resize(static_cast<size_t>(t.k) * dim);
  for (int j = 0; j < t.k; ++j) std::memcpy(t.centroids.data() + static_cast<size_t>(j) * dim, Z.data() + idx[j] * dim, sizeof(float) * dim);
  t.c_norm2.resize(t.k);
  std::vector<double> sum(static_cast<size_t>(t.k) * dim);
  std::vector<size_t> count(t.k);
  auto norms = [&] {
    for (int j = 0; j < t.k; ++j) {
      const float* cj = t.centroids.data() + static_cast<size_t>(j) * dim;
      t.c_norm2[j] = kernels::dot_f32(cj, cj, dim);
    }
  };
  norms();
  for (int it = 0; it < iterations; ++it) {
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(count.begin(), count.end(), 0);
    for (size_t r = 0; r < n; ++r) {
      const float* z = Z.data() + r * dim;
      int best = 0;
      float bv = 0;
      for (int j = 0; j < t.k; ++j) {
        const float v = t.c_norm2[j] - 2 * kernels::dot_f32(z, t.centroids.data() + static_cast<size_t>(j) * dim, dim);
        if (j == 0 || v < bv) bv = v, best = j;
      }
      ++count[best];
      double* s = sum.data() + static_cast<size_t>(best) * dim;
      for (int i = 0; i < dim; ++i) s[i] += z[i];
    }
    for (int j = 0; j < t.k; ++j)
      if (count[j] > 0)  // an empty cluster keeps its centroid
        for (int i = 0; i < dim; ++i)
          t.centroids[static_cast<size_t>(j) * dim + i] = static_cast<float>(sum[static_cast<size_t>(j) * dim + i] / count[j]);
    norms();
  }
  return t;
}

TokenTap::TokenTap(const HParams& hp, std::vector<int> layers, const TokenModel* model, std::vector<std::pair<int, int>> spans)
    : TokenTap(hp, std::move(layers), model, 0, INT_MAX) {
  for (const auto& [b, e] : spans)
    if (b < 0 || e < b) throw InputError("KV profile: bad token span");
  std::sort(spans.begin(), spans.end());
  spans_ = std::move(spans);
  // No span: no token is scored (begin = end).
  begin_ = spans_.empty() ? 0 : spans_.front().first;
  end_ = 0;
  for (const auto& sp : spans_) end_ = std::max(end_, sp.second);
}

double TokenTap::top_mean(int k) const {
  const int n = std::min<int>(std::max(k, 1), static_cast<int>(top_.size()));
  if (n == 0) return 0;
  double s = 0;
  for (int i = 0; i < n; ++i) s += top_[i];
  return s / n;
}

TokenTap::TokenTap(const HParams& hp, std::vector<int> layers, const TokenModel* model, int begin, int end)
    : head_dim_(hp.head_dim), n_head_kv_(hp.n_head_kv), kv_dim_(hp.n_kv_dim()), begin_(begin), end_(end),
      layers_(std::move(layers)), model_(model) {
  std::sort(layers_.begin(), layers_.end());
  layers_.erase(std::unique(layers_.begin(), layers_.end()), layers_.end());
  if (layers_.empty()) throw InputError("KV profile: no KV layers selected");
  if (begin < 0 || end < begin) throw InputError("KV profile: bad position range");
  slot_.assign(hp.n_layer, -1);
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i] < 0 || layers_[i] >= hp.n_layer)
      throw InputError("KV profile: layer " + std::to_string(layers_[i]) + " out of range (the model has " +
                       std::to_string(hp.n_layer) + " layers)");
    slot_[layers_[i]] = static_cast<int>(i);
  }
  if (model_ && model_->dim != dim())
    throw InputError("KV profile: its token model has " + std::to_string(model_->dim) + " values per token, this model gives " +
                     std::to_string(dim()));
  if (model_) {
    counts_.assign(model_->k, 0);
    scratch_c_.resize(dim());
    scratch_z_.resize(dim());
  }
}

void TokenTap::on_kv(int layer, int pos0, int n, const float* /*k: V alone carries no RoPE*/, const float* v) {
  if (layer < 0 || layer >= static_cast<int>(slot_.size()) || slot_[layer] < 0) return;
  const int s = slot_[layer], e = head_dim_, d = dim();
  // Rows at or past next_pos_ and inside [begin, end) are new (a recomputation after a preemption
  // delivers rows again); every selected layer of a step sees the same rows, in layer order.
  const int lo = std::max(0, std::max(begin_, next_pos_) - pos0), hi = std::min(n, end_ - pos0);
  if (lo >= hi) return;
  if (s == 0) {
    chunk_pos0_ = pos0;
    chunk_n_ = n;
    chunk_.assign(static_cast<size_t>(n) * d, 0.0f);
  }
  if (pos0 != chunk_pos0_ || n != chunk_n_) return;  // a step that skipped the first layer: not expected
  auto inside = [&](int t) {
    if (spans_.empty()) return true;
    for (const auto& [b, e] : spans_)
      if (pos0 + t >= b && pos0 + t < e) return true;
    return false;
  };
  for (int t = lo; t < hi; ++t)
    if (inside(t)) token_u(v + static_cast<size_t>(t) * kv_dim_, n_head_kv_, head_dim_, chunk_.data() + static_cast<size_t>(t) * d + static_cast<size_t>(s) * e);
  if (s + 1 != static_cast<int>(layers_.size())) return;
  for (int t = lo; t < hi; ++t) {
    if (!inside(t)) continue;
    const float* y = chunk_.data() + static_cast<size_t>(t) * d;
    if (model_) {
      int near = -1;
      const double dist = model_->distance(y, &near, scratch_c_.data(), scratch_z_.data());
      if (argmax_ < 0 || dist > max_) max_ = dist, argmax_ = pos0 + t;
      if (near >= 0) ++counts_[near];
      // The kTop largest, largest first (a handful of values: insertion is cheapest).
      if (static_cast<int>(top_.size()) < kTop || dist > top_.back()) {
        if (static_cast<int>(top_.size()) == kTop) top_.pop_back();
        top_.insert(std::upper_bound(top_.begin(), top_.end(), dist, std::greater<double>()), dist);
      }
    } else {
      rows_.insert(rows_.end(), y, y + d);
    }
    ++n_tokens_;
  }
  next_pos_ = pos0 + hi;
}

std::vector<double> token_vector_reference(int head_dim, int n_head_kv, const std::vector<std::vector<float>>& v) {
  std::vector<double> out;
  for (size_t l = 0; l < v.size(); ++l) {
    std::vector<double> u(head_dim, 0.0);
    for (int h = 0; h < n_head_kv; ++h)
      for (int i = 0; i < head_dim; ++i) u[i] += v[l][h * head_dim + i];
    double nn = 0;
    for (double x : u) nn += x * x;
    for (double& x : u) out.push_back(nn > 0 ? x / std::sqrt(nn) : 0.0);
  }
  return out;
}

namespace {
constexpr char kMagic[8] = {'K', 'V', 'S', 'P', 'R', 'O', 'F', '1'};
constexpr uint32_t kVersion = 3;  // 2: the token model; 3: the user-content model

void put_token_model(ModelFileWriter& o, const TokenModel& t) {
  o.put<int32_t>(t.dim);
  for (double m : t.mean) o.put<double>(m);
  for (int i = 0; i < t.dim; ++i)
    for (int j = 0; j <= i; ++j) o.put<double>(t.whiten[static_cast<size_t>(i) * t.dim + j]);
  o.put<int32_t>(t.k);
  for (float c : t.centroids) o.put<float>(c);
  const bool counts = t.k > 0 && static_cast<int>(t.count_mean.size()) == t.k;
  o.put<uint8_t>(counts);
  if (counts)
    for (int j = 0; j < t.k; ++j) {
      o.put<float>(t.count_mean[j]);
      o.put<float>(t.count_scale[j]);
    }
}

void get_token_model(ModelFileReader& in, TokenModel& t) {
  t.dim = in.get<int32_t>();
  if (t.dim < 0 || t.dim > 65536) throw in.damaged("token dimension");
  const size_t td = t.dim;
  in.need((td + td * (td + 1) / 2) * sizeof(double));
  for (size_t i = 0; i < td; ++i) t.mean.push_back(in.get<double>());
  t.whiten.assign(td * td, 0.0);
  for (size_t i = 0; i < td; ++i)
    for (size_t j = 0; j <= i; ++j) t.whiten[i * td + j] = in.get<double>();
  t.k = in.get<int32_t>();
  if (t.k < 0 || t.k > (1 << 20) || (t.dim == 0 && t.k != 0)) throw in.damaged("token centroids");
  in.need(static_cast<size_t>(t.k) * td * sizeof(float));
  t.centroids.resize(static_cast<size_t>(t.k) * td);
  for (float& c : t.centroids) c = in.get<float>();
  t.c_norm2.resize(t.k);
  for (int j = 0; j < t.k; ++j) t.c_norm2[j] = kernels::dot_f32(t.centroids.data() + j * td, t.centroids.data() + j * td, t.dim);
  if (in.get<uint8_t>()) {
    in.need(static_cast<size_t>(t.k) * 2 * sizeof(float));
    for (int j = 0; j < t.k; ++j) {
      t.count_mean.push_back(in.get<float>());
      t.count_scale.push_back(in.get<float>());
      if (!std::isfinite(t.count_mean.back()) || !(t.count_scale.back() >= 0)) throw in.damaged("token counts");
    }
  }
}
}  // namespace

void save_profile(const std::string& path, const KVProfile& p) {
  ModelFileWriter o(kMagic, kVersion, p.model_fingerprint);
  o.put<uint32_t>(static_cast<uint32_t>(p.layers.size()));
  for (int l : p.layers) o.put<int32_t>(l);
  o.put<double>(p.threshold);
  o.str(p.info);
  o.put<int32_t>(p.dim);
  for (double m : p.mean) o.put<double>(m);
  // Lower triangle only.
  for (int i = 0; i < p.dim; ++i)
    for (int j = 0; j <= i; ++j) o.put<double>(p.whiten[static_cast<size_t>(i) * p.dim + j]);
  o.put<double>(p.pooled_ref);
  o.put<double>(p.token_ref);
  o.put<double>(p.count_ref);
  put_token_model(o, p.token);
  o.put<double>(p.user_ref);
  o.put<int32_t>(p.user_topk);
  put_token_model(o, p.user);
  o.put<double>(p.marker_weight);
  o.save(path, "KV profile");
}

KVProfile load_profile(const std::string& path, uint64_t expect_fingerprint) {
  ModelFileReader in(path, kMagic, kVersion, "KV profile", expect_fingerprint,
                     "build one for this model with kvscope kv-profile", 1);
  KVProfile p;
  p.model_fingerprint = in.fingerprint();
  const uint32_t nl = in.get<uint32_t>();
  if (nl == 0 || nl > 4096) throw in.damaged("layer count");
  for (uint32_t i = 0; i < nl; ++i) p.layers.push_back(in.get<int32_t>());
  p.threshold = in.get<double>();
  p.info = in.str();
  p.dim = in.get<int32_t>();
  if (p.dim <= 0 || p.dim > 65536) throw in.damaged("dimension");
  const size_t d = p.dim;
  in.need((d + d * (d + 1) / 2) * sizeof(double));
  for (size_t i = 0; i < d; ++i) p.mean.push_back(in.get<double>());
  p.whiten.assign(d * d, 0.0);
  for (size_t i = 0; i < d; ++i)
    for (size_t j = 0; j <= i; ++j) p.whiten[i * d + j] = in.get<double>();
  if (in.version() >= 2) {
    p.pooled_ref = in.get<double>();
    p.token_ref = in.get<double>();
    p.count_ref = in.get<double>();
    if (!(p.pooled_ref > 0) || !(p.token_ref > 0) || !(p.count_ref > 0)) throw in.damaged("calibration");
    get_token_model(in, p.token);
  }
  if (in.version() >= 3) {
    p.user_ref = in.get<double>();
    p.user_topk = in.get<int32_t>();
    if (!(p.user_ref > 0) || p.user_topk < 1 || p.user_topk > TokenTap::kTop) throw in.damaged("user-content calibration");
    get_token_model(in, p.user);
    p.marker_weight = in.get<double>();
    if (!(p.marker_weight >= 0) || p.marker_weight > 1e6) throw in.damaged("marker weight");
    if (p.user.dim % static_cast<int>(p.layers.size()) != 0) throw in.damaged("user-content dimension");
  }
  in.expect_end();
  return p;
}

std::string sibling_profile_path(const std::string& model_path) {
  return sibling_model_file(model_path, ".kvprofile.bin");
}

}  // namespace kvscope::signals
