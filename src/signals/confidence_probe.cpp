#include "signals/confidence_probe.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "kernels/kernels.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/model_file.h"
#include "util/rng.h"

namespace kvscope::signals {

int ProbeSpec::dim(int head_dim) const {
  return (kv ? static_cast<int>(layers.size()) * per_layer(head_dim) : 0) + (logits ? kProbeLogitFeatures : 0) +
         (numbers ? kProbeNumberFeatures : 0) + (prior ? kProbePriorFeatures : 0) + 1;
}

int PromptPrior::window_end(int n) const {
  if (n <= 0) return 0;
  return std::clamp(static_cast<int>(std::ceil(prompt_fraction * n - 1e-9)), 1, n);
}

void PromptPrior::validate(int n_layer, int kv_dim) const {
  if (layers.empty()) throw InputError("prompt prior: no layers");
  for (int l : layers)
    if (l < 0 || l >= n_layer)
      throw InputError("prompt prior: layer " + std::to_string(l) + " out of range (the model has " + std::to_string(n_layer) +
                       " layers)");
  for (size_t i = 0; i < layers.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (layers[i] == layers[j]) throw InputError("prompt prior: layer " + std::to_string(layers[i]) + " selected twice");
  if (!(prompt_fraction > 0 && prompt_fraction <= 1)) throw InputError("prompt prior: bad prompt fraction");
  if (mlp.input_dim() != static_cast<int>(layers.size()) * 2 * kv_dim)
    throw InputError("prompt prior: the estimator reads " + std::to_string(mlp.input_dim()) + " features, this model gives " +
                     std::to_string(layers.size() * 2 * kv_dim));
}

uint64_t PromptPrior::id() const {
  uint64_t h = util::kFnvOffset;
  for (int l : layers) util::fnv1a_int(h, static_cast<uint32_t>(l), 4);
  h = util::fnv1a(&prompt_fraction, sizeof prompt_fraction, h);
  util::fnv1a_int(h, static_cast<uint32_t>(mlp.input_dim()), 4);
  util::fnv1a_int(h, static_cast<uint32_t>(mlp.hidden()), 4);
  const std::vector<float> w = mlp.pack();
  return util::fnv1a(w.data(), w.size() * sizeof(float), h);
}

namespace {
// The prior's features: log class probabilities, floored so a confident estimate stays finite.
std::vector<float> prior_logs(const std::array<double, 3>& p) {
  std::vector<float> f;
  for (double q : p) f.push_back(static_cast<float>(std::log(std::max(q, 1e-6))));
  return f;
}
}  // namespace

uint8_t classify_piece(const std::string& piece) {
  uint8_t c = 0;
  for (const char ch : piece) {
    if (ch >= '0' && ch <= '9') c |= kTokDigit;
    else if (ch == '=') c |= kTokEquals;
    else if (ch == '+' || ch == '-' || ch == '*' || ch == '/' || ch == 'x') c |= kTokOperator;
    else if (ch == '\n') c |= kTokNewline;
  }
  // Letters spell words: an 'x' inside one is not a times sign.
  if (c & kTokOperator) {
    int letters = 0;
    for (const char ch : piece) letters += (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
    if (letters > 1) c &= static_cast<uint8_t>(~kTokOperator);
  }
  return c;
}

void NumberStats::Agg::add(double p, double margin, double entropy) {
  ++n;
  min_p = std::min(min_p, p);
  sum_logp += std::log(std::max(p, 1e-30));
  min_margin = std::min(min_margin, margin);
  max_entropy = std::max(max_entropy, entropy);
}

void NumberStats::add(double p, double margin, double entropy, uint8_t cls) {
  if (cls & kTokEquals) after_eq = true;
  if (cls & kTokDigit) {
    if (!in_number) {
      in_number = true;
      in_result = after_eq;
      ++numbers;
      last = Agg();
      last_first_p = p;
    }
    digits.add(p, margin, entropy);
    last.add(p, margin, entropy);
    if (in_result) result.add(p, margin, entropy);
  } else {
    if (in_number && in_result) after_eq = (cls & kTokEquals) != 0;
    in_number = in_result = false;
    if (cls & kTokOperator) ops.add(p, margin, entropy);
  }
  if (cls & kTokNewline) after_eq = false;
}

void NumberStats::append(std::vector<float>& f) const {
  auto mean_logp = [](const Agg& a) { return a.n ? static_cast<float>(a.sum_logp / a.n) : 0.0f; };
  f.push_back(static_cast<float>(result.min_p));
  f.push_back(mean_logp(result));
  f.push_back(static_cast<float>(result.min_margin));
  f.push_back(static_cast<float>(result.max_entropy));
  f.push_back(static_cast<float>(digits.min_p));
  f.push_back(mean_logp(digits));
  f.push_back(static_cast<float>(digits.min_margin));
  f.push_back(static_cast<float>(ops.min_p));
  f.push_back(static_cast<float>(ops.min_margin));
  f.push_back(static_cast<float>(last_first_p));
  f.push_back(static_cast<float>(last.min_p));
  f.push_back(static_cast<float>(last.min_margin));
  f.push_back(static_cast<float>(std::log1p(static_cast<double>(result.n))));
  f.push_back(static_cast<float>(std::log1p(static_cast<double>(numbers))));
}

std::vector<double> number_features_reference(const std::vector<std::string>& pieces, const std::vector<double>& p,
                                              const std::vector<double>& margin, const std::vector<double>& entropy) {
  // Whole-response view: split the text into tokens' classes, find the numbers (maximal runs of
  // digit tokens), which of them follow an "=" on their line, and the last one.
  const size_t n = pieces.size();
  std::vector<uint8_t> cls(n);
  for (size_t i = 0; i < n; ++i) cls[i] = classify_piece(pieces[i]);
  std::vector<std::pair<size_t, size_t>> runs;  // [begin, end) of each number
  for (size_t i = 0; i < n;) {
    if (!(cls[i] & kTokDigit)) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < n && (cls[j] & kTokDigit)) ++j;
    runs.push_back({i, j});
    i = j;
  }
  // A number is a result when an "=" precedes it with neither a newline nor another number's
  // start between them (each "=" opens one result).
  std::vector<bool> res(n, false);
  for (size_t r = 0; r < runs.size(); ++r) {
    const size_t b = runs[r].first;
    size_t t = b;
    while (t > 0 && !(cls[t - 1] & kTokEquals)) --t;
    if (t == 0) continue;  // no "=" before
    --t;                   // the "=" token
    bool open = true;
    for (size_t u = t; u < b; ++u) open = open && !(cls[u] & kTokNewline);
    if (r > 0 && runs[r - 1].first > t) open = false;
    if (open)
      for (size_t u = b; u < runs[r].second; ++u) res[u] = true;
  }
  double rmin = 1, rsum = 0, rmarg = 1, rent = 0, dmin = 1, dsum = 0, dmarg = 1, omin = 1, omarg = 1;
  int rn = 0, dn = 0;
  for (size_t i = 0; i < n; ++i) {
    if (cls[i] & kTokDigit) {
      dmin = std::min(dmin, p[i]), dsum += std::log(p[i]), dmarg = std::min(dmarg, margin[i]), ++dn;
      if (res[i]) rmin = std::min(rmin, p[i]), rsum += std::log(p[i]), rmarg = std::min(rmarg, margin[i]), rent = std::max(rent, entropy[i]), ++rn;
    } else if (cls[i] & kTokOperator) {
      omin = std::min(omin, p[i]), omarg = std::min(omarg, margin[i]);
    }
  }
  double lfirst = 1, lmin = 1, lmarg = 1;
  if (!runs.empty()) {
    const auto [b, e] = runs.back();
    lfirst = p[b];
    for (size_t t = b; t < e; ++t) lmin = std::min(lmin, p[t]), lmarg = std::min(lmarg, margin[t]);
  }
  return {rmin, rn ? rsum / rn : 0.0, rmarg, rent, dmin, dn ? dsum / dn : 0.0, dmarg, omin, omarg,
          lfirst, lmin, lmarg, std::log1p(double(rn)), std::log1p(double(runs.size()))};
}

ProbeFeatures::ProbeFeatures(const HParams& hp, ProbeSpec spec, int begin, int end)
    : head_dim_(hp.head_dim), n_head_kv_(hp.n_head_kv), kv_dim_(hp.n_kv_dim()), begin_(begin), spec_(std::move(spec)) {
  if (!spec_.kv) spec_.layers.clear();
  std::sort(spec_.layers.begin(), spec_.layers.end());
  spec_.layers.erase(std::unique(spec_.layers.begin(), spec_.layers.end()), spec_.layers.end());
  if (spec_.kv && spec_.layers.empty()) throw InputError("confidence probe: no KV layers selected");
  slot_.assign(hp.n_layer, -1);
  for (size_t i = 0; i < spec_.layers.size(); ++i) {
    const int l = spec_.layers[i];
    if (l < 0 || l >= hp.n_layer)
      throw InputError("confidence probe: layer " + std::to_string(l) + " out of range (the model has " +
                       std::to_string(hp.n_layer) + " layers)");
    slot_[l] = static_cast<int>(i);
  }
  last_layer_ = spec_.layers.empty() ? -1 : spec_.layers.back();
  if (spec_.prior) {
    spec_.prior->validate(hp.n_layer, kv_dim_);
    prior_slot_.assign(hp.n_layer, -1);
    for (size_t i = 0; i < spec_.prior->layers.size(); ++i) prior_slot_[spec_.prior->layers[i]] = static_cast<int>(i);
  }
  reset(begin, end);
}

void ProbeFeatures::reset(int begin, int end) {
  if (begin < 0 || end < begin) throw InputError("confidence probe: bad position range");
  begin_ = begin;
  end_ = end;
  const size_t L = spec_.layers.size(), e = 2 * static_cast<size_t>(head_dim_);
  st_.sum.assign(L * e, 0.0f);
  st_.prev.assign(L * e, 0.0f);
  st_.prompt_sum.assign(spec_.prompt ? L * e : 0, 0.0f);
  st_.stats.assign(L * 4, 0.0f);
  st_.n.assign(L, 0);
  st_.next_pos = INT_MIN;
  st_.n_tokens = 0;
  st_.numbers = NumberStats();
  const size_t pl = spec_.prior ? spec_.prior->layers.size() : 0;
  st_.prior_sum.assign(pl * 2 * kv_dim_, 0.0);
  st_.prior_count.assign(pl, 0);
  st_.prior_next.assign(pl, 0);
  st_.prior.clear();
  prior_end_ = spec_.prior ? spec_.prior->window_end(begin) : 0;
}

std::vector<float> ProbeFeatures::prior_now() const {
  const size_t pl = spec_.prior->layers.size(), w = 2 * static_cast<size_t>(kv_dim_);
  std::vector<float> x(pl * w, 0.0f);
  if (st_.prior_sum.size() == x.size())
    for (size_t s = 0; s < pl; ++s)
      if (st_.prior_count[s] > 0)
        for (size_t i = 0; i < w; ++i) x[s * w + i] = static_cast<float>(st_.prior_sum[s * w + i] / st_.prior_count[s]);
  return prior_logs(spec_.prior->probs(x.data()));
}

void ProbeFeatures::finish_prior() {
  // Once per request: the estimate is kept and the sums freed, so decoding pays nothing for it.
  st_.prior = prior_now();
  std::vector<double>().swap(st_.prior_sum);
}

std::vector<float> ProbeFeatures::prior_features() const {
  if (!spec_.prior) return {};
  return st_.prior.empty() ? prior_now() : st_.prior;
}

void ProbeFeatures::on_token(const LogitStats& ls, const std::string& piece) {
  if (spec_.numbers) st_.numbers.add(ls.last_p(), ls.last_margin(), ls.last_entropy(), classify_piece(piece));
}

void ProbeFeatures::on_kv(int layer, int pos0, int n, const float* k, const float* v) {
  if (layer < 0 || layer >= static_cast<int>(slot_.size())) return;
  if (spec_.prior && st_.prior.empty() && prior_slot_[layer] >= 0) {
    // The prompt prior: the window's K and V rows pooled per prior layer (each position once,
    // whatever the batching); final once every prior layer has the window, or at the first row of
    // the response (a prompt row missed by then never comes: the prior uses what was seen).
    const int s = prior_slot_[layer];
    const size_t w = 2 * static_cast<size_t>(kv_dim_);
    const int a = std::max(pos0, st_.prior_next[s]), b = std::min(pos0 + n, prior_end_);
    double* sum = st_.prior_sum.data() + s * w;
    for (int t = a; t < b; ++t) {
      const float* kr = k + static_cast<size_t>(t - pos0) * kv_dim_;
      const float* vr = v + static_cast<size_t>(t - pos0) * kv_dim_;
      for (int i = 0; i < kv_dim_; ++i) sum[i] += kr[i], sum[kv_dim_ + i] += vr[i];
    }
    if (b > a) st_.prior_count[s] += b - a, st_.prior_next[s] = b;
    bool done = pos0 + n > begin_;
    if (!done) {
      done = true;
      for (int nx : st_.prior_next) done = done && nx >= prior_end_;
    }
    if (done) finish_prior();
  }
  if (slot_[layer] < 0) return;
  const int s = slot_[layer];
  const int hd = head_dim_, e = 2 * hd;
  // The prompt's rows (before begin), when asked for: their pooled u only. Rows at or past
  // next_pos were not seen before (a prompt row is never delivered twice by one pass).
  if (spec_.prompt && pos0 < begin_) {
    const int plo = std::max(0, st_.next_pos - pos0), phi = std::min(n, begin_ - pos0);
    float* ps = st_.prompt_sum.data() + static_cast<size_t>(s) * e;
    std::vector<float> pu(e);
    for (int t = plo; t < phi; ++t) {
      std::fill(pu.begin(), pu.end(), 0.0f);
      for (int h = 0; h < n_head_kv_; ++h) {
        kernels::add_inplace(pu.data(), k + static_cast<size_t>(t) * kv_dim_ + h * hd, hd);
        kernels::add_inplace(pu.data() + hd, v + static_cast<size_t>(t) * kv_dim_ + h * hd, hd);
      }
      const float nn = kernels::dot_f32(pu.data(), pu.data(), e);
      const float sc = nn > 0 ? 1.0f / std::sqrt(nn) : 0.0f;
      for (int i = 0; i < e; ++i) ps[i] += pu[i] * sc;
    }
    if (layer == last_layer_ && phi > plo) st_.next_pos = std::max(st_.next_pos, pos0 + phi);
  }
  const int lo = std::max(0, std::max(begin_, st_.next_pos) - pos0);
  n = std::min(n, end_ - pos0);
  if (lo >= n) return;
  float* sum = st_.sum.data() + static_cast<size_t>(s) * e;
  float* prev = st_.prev.data() + static_cast<size_t>(s) * e;
  float* stats = st_.stats.data() + static_cast<size_t>(s) * 4;
  float u[1024];
  std::vector<float> big;
  float* up = u;
  if (e > 1024) {
    big.resize(e);
    up = big.data();
  }
  for (int t = lo; t < n; ++t) {
    const float* kr = k + static_cast<size_t>(t) * kv_dim_;
    const float* vr = v + static_cast<size_t>(t) * kv_dim_;
    std::memset(up, 0, sizeof(float) * e);
    for (int h = 0; h < n_head_kv_; ++h) {
      kernels::add_inplace(up, kr + h * hd, hd);
      kernels::add_inplace(up + hd, vr + h * hd, hd);
    }
    const float nn = kernels::dot_f32(up, up, e);
    const float sc = nn > 0 ? 1.0f / std::sqrt(nn) : 0.0f;
    for (int i = 0; i < e; ++i) up[i] *= sc;
    if (st_.n[s] > 0) {
      const float dr = static_cast<float>(l2_distance(up, prev, e));
      const float dt = static_cast<float>(angle_between(prev, up, e));
      stats[0] += dr;
      stats[1] += dt;
      stats[2] = std::max(stats[2], dr);
      stats[3] = std::max(stats[3], dt);
    }
    kernels::add_inplace(sum, up, e);
    std::memcpy(prev, up, sizeof(float) * e);
    ++st_.n[s];
  }
  // Every selected layer of a step sees the same rows; the watermark moves after the last one.
  if (layer == last_layer_) {
    st_.n_tokens += n - lo;
    st_.next_pos = pos0 + n;
  }
}

std::vector<float> ProbeFeatures::features(const LogitStats& ls) const {
  std::vector<float> f;
  f.reserve(dim());
  const int e = 2 * head_dim_;
  for (size_t s = 0; s < spec_.layers.size(); ++s) {
    const float* sum = st_.sum.data() + s * e;
    double nn = 0;
    for (int i = 0; i < e; ++i) nn += double(sum[i]) * sum[i];
    const double sc = nn > 0 ? 1.0 / std::sqrt(nn) : 0.0;
    for (int i = 0; i < e; ++i) f.push_back(static_cast<float>(sum[i] * sc));
    const int pairs = std::max(0, st_.n[s] - 1);
    const float* stt = st_.stats.data() + s * 4;
    f.push_back(pairs ? stt[0] / pairs : 0.0f);
    f.push_back(pairs ? stt[1] / pairs : 0.0f);
    f.push_back(stt[2]);
    f.push_back(stt[3]);
    if (spec_.prompt) {
      const float* ps = st_.prompt_sum.data() + s * e;
      double pn = 0;
      for (int i = 0; i < e; ++i) pn += double(ps[i]) * ps[i];
      const double psc = pn > 0 ? 1.0 / std::sqrt(pn) : 0.0;
      for (int i = 0; i < e; ++i) f.push_back(static_cast<float>(ps[i] * psc));
    }
    if (spec_.last) f.insert(f.end(), st_.prev.begin() + s * e, st_.prev.begin() + (s + 1) * e);
  }
  if (spec_.logits) {
    f.push_back(static_cast<float>(ls.max_prob()));
    f.push_back(static_cast<float>(ls.min_max_prob()));
    f.push_back(static_cast<float>(ls.entropy()));
    f.push_back(static_cast<float>(ls.max_entropy()));
    f.push_back(static_cast<float>(ls.mean_logp()));
    f.push_back(static_cast<float>(ls.min_logp()));
    f.push_back(static_cast<float>(ls.share_max_prob_below(0.9)));
    f.push_back(static_cast<float>(ls.share_max_prob_below(0.5)));
  }
  if (spec_.numbers) st_.numbers.append(f);
  if (spec_.prior) {
    const auto pf = prior_features();
    f.insert(f.end(), pf.begin(), pf.end());
  }
  // Token count: from the KV tap, or from the logits when the probe reads no KV.
  const int n = spec_.kv ? st_.n_tokens : ls.n();
  f.push_back(static_cast<float>(std::log1p(static_cast<double>(n))));
  return f;
}

size_t ProbeFeatures::state_bytes() const {
  return (st_.sum.size() + st_.prev.size() + st_.prompt_sum.size() + st_.stats.size()) * sizeof(float) + st_.n.size() * sizeof(int) +
         2 * sizeof(int) + (spec_.numbers ? sizeof(NumberStats) : 0) + st_.prior_sum.size() * sizeof(double) +
         (st_.prior_count.size() + st_.prior_next.size()) * sizeof(int) + st_.prior.size() * sizeof(float);
}

std::vector<double> probe_kv_features_reference(const ProbeSpec& spec, int head_dim, int n_head_kv,
                                                const std::vector<std::vector<std::vector<float>>>& k,
                                                const std::vector<std::vector<std::vector<float>>>& v) {
  std::vector<double> out;
  const int e = 2 * head_dim;
  for (size_t s = 0; s < spec.layers.size(); ++s) {
    std::vector<std::vector<double>> us;
    for (size_t t = 0; t < k[s].size(); ++t) {
      std::vector<double> u(e, 0.0);
      for (int h = 0; h < n_head_kv; ++h)
        for (int i = 0; i < head_dim; ++i) {
          u[i] += k[s][t][h * head_dim + i];
          u[head_dim + i] += v[s][t][h * head_dim + i];
        }
      double nn = 0;
      for (double x : u) nn += x * x;
      for (double& x : u) x = nn > 0 ? x / std::sqrt(nn) : 0.0;
      us.push_back(u);
    }
    std::vector<double> sum(e, 0.0);
    for (const auto& u : us)
      for (int i = 0; i < e; ++i) sum[i] += u[i];
    double nn = 0;
    for (double x : sum) nn += x * x;
    for (double x : sum) out.push_back(nn > 0 ? x / std::sqrt(nn) : 0.0);
    double sdr = 0, sdt = 0, mdr = 0, mdt = 0;
    for (size_t t = 1; t < us.size(); ++t) {
      double d = 0, dot = 0, na = 0, nb = 0;
      for (int i = 0; i < e; ++i) {
        d += (us[t][i] - us[t - 1][i]) * (us[t][i] - us[t - 1][i]);
        dot += us[t][i] * us[t - 1][i];
        na += us[t - 1][i] * us[t - 1][i];
        nb += us[t][i] * us[t][i];
      }
      const double dr = std::sqrt(d);
      const double dt = na > 0 && nb > 0 ? std::acos(std::clamp(dot / std::sqrt(na * nb), -1.0, 1.0)) : 0.0;
      sdr += dr;
      sdt += dt;
      mdr = std::max(mdr, dr);
      mdt = std::max(mdt, dt);
    }
    const double pairs = us.size() > 1 ? static_cast<double>(us.size() - 1) : 0.0;
    out.push_back(pairs ? sdr / pairs : 0.0);
    out.push_back(pairs ? sdt / pairs : 0.0);
    out.push_back(mdr);
    out.push_back(mdt);
    if (spec.last)
      for (int i = 0; i < e; ++i) out.push_back(us.empty() ? 0.0 : us.back()[i]);
  }
  return out;
}

std::vector<double> prior_features_reference(const PromptPrior& p, const std::vector<std::vector<std::vector<float>>>& k,
                                             const std::vector<std::vector<std::vector<float>>>& v) {
  std::vector<float> x;
  for (size_t s = 0; s < p.layers.size(); ++s) {
    const size_t kd = k[s].empty() ? 0 : k[s][0].size(), n = k[s].size();
    std::vector<double> mk(kd, 0.0), mv(kd, 0.0);
    for (size_t t = 0; t < n; ++t)
      for (size_t i = 0; i < kd; ++i) mk[i] += k[s][t][i], mv[i] += v[s][t][i];
    for (double m : mk) x.push_back(static_cast<float>(n ? m / n : 0.0));
    for (double m : mv) x.push_back(static_cast<float>(n ? m / n : 0.0));
  }
  // The estimator's forward in double precision, written out apart from DifficultyMLP::probs.
  const size_t in = p.mlp.input_dim(), h = p.mlp.hidden();
  const std::vector<float> weights = p.mlp.pack();
  const float* mean = weights.data();
  const float* inv = mean + in;
  const float* w1 = inv + in;
  const float* b1 = w1 + h * in;
  const float* w2 = b1 + h;
  const float* b2 = w2 + h * h;
  const float* w3 = b2 + h;
  const float* b3 = w3 + 3 * h;
  std::vector<double> xs(in), h1(h), h2(h), z(3);
  for (size_t i = 0; i < in; ++i) xs[i] = (double(x[i]) - mean[i]) * inv[i];
  for (size_t o = 0; o < h; ++o) {
    double a = b1[o];
    for (size_t i = 0; i < in; ++i) a += double(w1[o * in + i]) * xs[i];
    h1[o] = std::max(a, 0.0);
  }
  for (size_t o = 0; o < h; ++o) {
    double a = b2[o];
    for (size_t i = 0; i < h; ++i) a += double(w2[o * h + i]) * h1[i];
    h2[o] = std::max(a, 0.0);
  }
  for (size_t o = 0; o < 3; ++o) {
    z[o] = b3[o];
    for (size_t i = 0; i < h; ++i) z[o] += double(w3[o * h + i]) * h2[i];
  }
  const double m = std::max({z[0], z[1], z[2]}), den = std::exp(z[0] - m) + std::exp(z[1] - m) + std::exp(z[2] - m);
  std::vector<double> out;
  for (double zz : z) out.push_back(std::log(std::max(std::exp(zz - m) / den, 1e-6)));
  return out;
}

// ---- the MLP ----

size_t ProbeMLP::packed_size(int in, int hid) {
  const size_t i = in, h = hid;
  return 2 * i + h * i + h + h * h + h + h + 1;
}

ProbeMLP::ProbeMLP(int input_dim, int hidden, uint64_t seed) : in_(input_dim), hid_(hidden) {
  if (input_dim <= 0 || hidden <= 0) throw InputError("confidence probe: dimensions must be positive");
  flat_.assign(packed_size(in_, hid_), 0.0f);
  util::SplitMix64 r{seed};
  float* p = flat_.data();
  std::fill(p + in_, p + 2 * in_, 1.0f);  // inv_std
  p += 2 * in_;
  auto init = [&](float* w, int out, int in) {
    const double sd = std::sqrt(2.0 / in);  // He init for ReLU layers
    for (size_t j = 0; j < static_cast<size_t>(out) * in; ++j) w[j] = static_cast<float>(r.normal() * sd);
  };
  init(p, hid_, in_);
  p += static_cast<size_t>(hid_) * in_ + hid_;
  init(p, hid_, hid_);
  p += static_cast<size_t>(hid_) * hid_ + hid_;
  init(p, 1, hid_);
}

size_t ProbeMLP::n_params() const { return in_ ? flat_.size() - 2 * static_cast<size_t>(in_) : 0; }

double ProbeMLP::logit(const float* x) const {
  const float* mean = flat_.data();
  const float* inv = mean + in_;
  const float* w1 = inv + in_;
  const float* b1 = w1 + static_cast<size_t>(hid_) * in_;
  const float* w2 = b1 + hid_;
  const float* b2 = w2 + static_cast<size_t>(hid_) * hid_;
  const float* w3 = b2 + hid_;
  const float* b3 = w3 + hid_;
  std::vector<float> xs(in_), h1(hid_), h2(hid_);
  for (int i = 0; i < in_; ++i) xs[i] = (x[i] - mean[i]) * inv[i];
  for (int o = 0; o < hid_; ++o) h1[o] = std::max(0.0f, b1[o] + kernels::dot_f32(w1 + static_cast<size_t>(o) * in_, xs.data(), in_));
  for (int o = 0; o < hid_; ++o) h2[o] = std::max(0.0f, b2[o] + kernels::dot_f32(w2 + static_cast<size_t>(o) * hid_, h1.data(), hid_));
  return b3[0] + kernels::dot_f32(w3, h2.data(), hid_);
}

double ProbeMLP::score(const std::vector<float>& x) const {
  if (in_ == 0) throw InputError("confidence probe: not trained or loaded");
  if (static_cast<int>(x.size()) != in_)
    throw InputError("confidence probe: got " + std::to_string(x.size()) + " features, expects " + std::to_string(in_));
  return 1.0 / (1.0 + std::exp(-logit(x.data())));
}

std::vector<float> ProbeMLP::pack() const { return flat_; }

void ProbeMLP::unpack(int input_dim, int hidden, const std::vector<float>& flat) {
  if (input_dim <= 0 || hidden <= 0 || flat.size() != packed_size(input_dim, hidden))
    throw InputError("confidence probe: weight vector of the wrong size");
  in_ = input_dim;
  hid_ = hidden;
  flat_ = flat;
}

// ---- the file ----

namespace {
constexpr char kMagic[8] = {'K', 'V', 'S', 'P', 'R', 'O', 'B', '1'};
constexpr uint32_t kVersion = 3;  // 2: the numbers flag (bit 3); 3: the prompt prior (bit 4 and its block)
}  // namespace

void save_probe(const std::string& path, const ProbeFile& f) {
  // A probe without number statistics stays a version-1 file, readable by older builds.
  ModelFileWriter o(kMagic, f.spec.prior ? 3 : f.spec.numbers ? 2 : 1, f.model_fingerprint);
  o.put<uint32_t>(static_cast<uint32_t>(f.spec.layers.size()));
  for (int l : f.spec.layers) o.put<int32_t>(l);
  o.put<uint8_t>(f.spec.kv);
  o.put<uint8_t>(f.spec.logits | (f.spec.prompt ? 2 : 0) | (f.spec.last ? 4 : 0) | (f.spec.numbers ? 8 : 0) |
                 (f.spec.prior ? 16 : 0));
  o.put<double>(f.cut_below);
  o.str(f.info);
  if (const auto& p = f.spec.prior) {
    o.put<uint32_t>(static_cast<uint32_t>(p->layers.size()));
    for (int l : p->layers) o.put<int32_t>(l);
    o.put<double>(p->prompt_fraction);
    o.str(p->source);
    o.put<int32_t>(p->mlp.input_dim());
    o.put<int32_t>(p->mlp.hidden());
    o.floats(p->mlp.pack());
  }
  o.put<int32_t>(f.mlp.input_dim());
  o.put<int32_t>(f.mlp.hidden());
  o.floats(f.mlp.pack());
  o.save(path, "confidence file");
}

ProbeFile load_probe(const std::string& path, uint64_t expect_fingerprint) {
  ModelFileReader in(path, kMagic, kVersion, "confidence file", expect_fingerprint,
                     "train one for this model with kvscope train-confidence", 1);
  ProbeFile f;
  f.model_fingerprint = in.fingerprint();
  const uint32_t nl = in.get<uint32_t>();
  if (nl > 4096) throw in.damaged("layer count");
  for (uint32_t i = 0; i < nl; ++i) f.spec.layers.push_back(in.get<int32_t>());
  f.spec.kv = in.get<uint8_t>() != 0;
  const uint8_t flags = in.get<uint8_t>();
  f.spec.logits = flags & 1;
  f.spec.prompt = flags & 2;
  f.spec.last = flags & 4;
  f.spec.numbers = flags & 8;
  const bool prior = flags & 16;
  if (in.version() < 2 && f.spec.numbers) throw in.damaged("flags");
  if (in.version() < 3 && prior) throw in.damaged("flags");
  if (flags & ~31) throw in.damaged("flags");
  f.cut_below = in.get<double>();
  f.info = in.str();
  if (prior) {
    auto p = std::make_shared<PromptPrior>();
    const uint32_t pl = in.get<uint32_t>();
    if (pl == 0 || pl > 4096) throw in.damaged("prior layer count");
    for (uint32_t i = 0; i < pl; ++i) p->layers.push_back(in.get<int32_t>());
    p->prompt_fraction = in.get<double>();
    if (!(p->prompt_fraction > 0 && p->prompt_fraction <= 1)) throw in.damaged("prior prompt fraction");
    p->source = in.str();
    const int32_t pin = in.get<int32_t>(), phid = in.get<int32_t>();
    if (pin <= 0 || phid <= 0 || pin > (1 << 24) || phid > (1 << 14)) throw in.damaged("prior dimensions");
    const std::vector<float> pw = in.floats(uint64_t{1} << 28);
    try {
      p->mlp.unpack(pin, phid, pw);
    } catch (const InputError&) {
      throw in.damaged("prior weights do not match its dimensions");
    }
    f.spec.prior = std::move(p);
  }
  const int32_t din = in.get<int32_t>(), hid = in.get<int32_t>();
  if (din <= 0 || hid <= 0 || din > (1 << 20) || hid > (1 << 14)) throw in.damaged("dimensions");
  const std::vector<float> w = in.floats(uint64_t{1} << 26);
  try {
    f.mlp.unpack(din, hid, w);
  } catch (const InputError&) {
    throw in.damaged("weights do not match its dimensions");
  }
  in.expect_end();
  return f;
}

std::string sibling_probe_path(const std::string& model_path) {
  return sibling_model_file(model_path, ".confidence.bin");
}

}  // namespace kvscope::signals
