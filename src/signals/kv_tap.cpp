#include "signals/kv_tap.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "util/error.h"

namespace kvscope::signals {

namespace {

int parse_index(const std::string& s, const std::string& spec) {
  if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw InputError("bad layer selection '" + spec + "' (mid, all, a-b, or a,b,c)");
  return std::stoi(s);
}

}  // namespace

std::vector<int> parse_layers(const std::string& spec, int n_layer) {
  if (n_layer <= 0) throw InputError("layer selection: the model has no layers");
  std::vector<int> out;
  if (spec.empty() || spec == "mid") {
    const int a = n_layer / 3, b = std::max(a + 1, 2 * n_layer / 3);
    for (int l = a; l < b; ++l) out.push_back(l);
    return out;
  }
  if (spec == "all") {
    for (int l = 0; l < n_layer; ++l) out.push_back(l);
    return out;
  }
  size_t i = 0;
  while (i <= spec.size()) {
    size_t j = spec.find(',', i);
    if (j == std::string::npos) j = spec.size();
    const std::string item = spec.substr(i, j - i);
    const size_t dash = item.find('-');
    int a, b;
    if (dash == std::string::npos) {
      a = b = parse_index(item, spec);
    } else {
      a = parse_index(item.substr(0, dash), spec);
      b = parse_index(item.substr(dash + 1), spec);
    }
    if (a > b) throw InputError("bad layer range '" + item + "' (start after end)");
    if (b >= n_layer)
      throw InputError("layer " + std::to_string(b) + " out of range (the model has " + std::to_string(n_layer) +
                       " layers, 0.." + std::to_string(n_layer - 1) + ")");
    for (int l = a; l <= b; ++l) out.push_back(l);
    i = j + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

FeatureTap::FeatureTap(const HParams& hp, TapOptions o)
    : n_layer_(hp.n_layer), kv_dim_(hp.n_kv_dim()), head_dim_(hp.head_dim), n_head_kv_(hp.n_head_kv),
      n_embd_(hp.n_embd), layers_(o.layers.empty() ? parse_layers("mid", hp.n_layer) : o.layers),
      trace_on_(o.trace), steps_on_(o.trace || o.steps) {
  pre_rope = o.pre_rope;
  hidden = o.hidden;
  std::sort(layers_.begin(), layers_.end());  // a repeated layer would skew the mean
  layers_.erase(std::unique(layers_.begin(), layers_.end()), layers_.end());
  selected_.assign(n_layer_, 0);
  for (int l : layers_) {
    if (l < 0 || l >= n_layer_) throw InputError("tap: layer " + std::to_string(l) + " out of range");
    selected_[l] = 1;
  }
  first_layer_ = *std::min_element(layers_.begin(), layers_.end());
  last_layer_ = *std::max_element(layers_.begin(), layers_.end());
  reset(o.begin, o.end);
}

void FeatureTap::reset(int begin, int end) {
  if (begin < 0 || end < begin) throw InputError("tap: bad position range");
  begin_ = begin;
  end_ = end;
  next_pos_ = hidden_next_ = hidden_step_next_ = INT_MIN;
  n_ = 0;
  first_e_.clear();
  prev_e_.clear();
  u_sum_.assign(2 * head_dim_, 0.0);
  last_u_.clear();
  sum_dr_ = sum_dtheta_ = 0;
  n_steps_ = 0;
  steps_.clear();
  trace_.clear();
  hidden_sum_.assign(hidden ? static_cast<size_t>(n_layer_ + 1) * n_embd_ : 0, 0.0);
  hidden_n_ = 0;
}

void FeatureTap::on_kv(int layer, int pos0, int n, const float* k, const float* v) {
  if (layer < 0 || layer >= n_layer_ || !selected_[layer]) return;
  // Only rows in the observed range that were not seen before (e.g. a response tap skips the
  // prompt); every layer of a step computes the same rows, next_pos_ moving only after the last.
  const int lo = std::max(0, std::max(begin_, next_pos_) - pos0), hi = std::min(n, end_ - pos0);
  if (lo >= hi) return;
  const size_t row = 2 * static_cast<size_t>(kv_dim_);
  const int m = hi - lo;
  // With one selected layer a step's rows are complete within this call, so the step buffer is a
  // per-thread scratch instead of per-sequence state (a batch interleaves sequences layer by layer,
  // so with several layers each sequence keeps its own).
  static thread_local std::vector<float> single_layer_scratch;
  const bool single = first_layer_ == last_layer_;
  std::vector<float>& buf = single ? single_layer_scratch : pending_;
  if (layer == first_layer_) {
    pending_pos0_ = pos0 + lo;
    pending_n_ = m;
    buf.assign(static_cast<size_t>(m) * row, 0.0f);
  }
  if (pos0 + lo != pending_pos0_ || m != pending_n_) throw InputError("tap: layers of one step disagree on its tokens");
  for (int t = 0; t < m; ++t) {
    float* dst = buf.data() + t * row;
    kernels::add_inplace(dst, k + static_cast<size_t>(lo + t) * kv_dim_, kv_dim_);
    kernels::add_inplace(dst + kv_dim_, v + static_cast<size_t>(lo + t) * kv_dim_, kv_dim_);
  }
  if (layer != last_layer_) return;
  const float inv = 1.0f / static_cast<float>(layers_.size());
  for (int t = 0; t < m; ++t) {
    float* e = buf.data() + t * row;
    for (size_t i = 0; i < row; ++i) e[i] *= inv;
    finalize(pending_pos0_ + t, e);
  }
  // A prefill chunk's buffer is transient: keep only a decode-sized one between steps.
  if (m > 16) std::vector<float>().swap(buf);
}

void FeatureTap::finalize(int pos, const float* e) {
  next_pos_ = pos + 1;
  const int fd = 2 * kv_dim_, hd = head_dim_;
  // Embedding: per head [K_h | V_h], mean over heads, L2-normalized.
  // last_u_ is u_t itself: only the latest one is kept.
  last_u_.assign(2 * hd, 0.0f);
  for (int h = 0; h < n_head_kv_; ++h) {
    kernels::add_inplace(last_u_.data(), e + h * hd, hd);
    kernels::add_inplace(last_u_.data() + hd, e + kv_dim_ + h * hd, hd);
  }
  double nn = 0;
  for (float x : last_u_) nn += double(x) * x;
  const float s = nn > 0 ? static_cast<float>(1.0 / std::sqrt(nn)) : 0.0f;
  for (int i = 0; i < 2 * hd; ++i) {
    last_u_[i] *= s;
    u_sum_[i] += last_u_[i];
  }
  // Trajectory: float steps summed in double, as scores_from_steps does with a trace.
  if (prev_e_.empty()) {
    first_e_.assign(e, e + fd);
  } else {
    const TrajectoryStep st{static_cast<float>(l2_distance(e, prev_e_.data(), fd)),
                            static_cast<float>(angle_between(prev_e_.data(), e, fd))};
    sum_dr_ += st.dr;
    sum_dtheta_ += st.dtheta;
    ++n_steps_;
    if (steps_on_) steps_.push_back(st);
  }
  prev_e_.assign(e, e + fd);
  if (trace_on_) trace_.insert(trace_.end(), e, e + fd);
  ++n_;
}

void FeatureTap::on_hidden(int layer, int pos0, int n, const float* x) {
  if (!hidden || layer < -1 || layer >= n_layer_) return;
  const size_t slot = static_cast<size_t>(layer + 1) * n_embd_;
  int counted = 0;
  for (int t = 0; t < n; ++t) {
    const int pos = pos0 + t;
    if (pos < hidden_next_ || pos < begin_ || pos >= end_) continue;
    const float* r = x + static_cast<size_t>(t) * n_embd_;
    double* dst = hidden_sum_.data() + slot;
    for (int i = 0; i < n_embd_; ++i) dst[i] += r[i];
    ++counted;
    hidden_step_next_ = pos + 1;
  }
  // The watermark moves after the last layer, so every layer of this step counts the same rows.
  if (layer == n_layer_ - 1) {
    hidden_n_ += counted;
    if (counted) hidden_next_ = hidden_step_next_;
  }
}

std::vector<float> FeatureTap::pooled_mean() const {
  if (n_ == 0) return {};
  std::vector<float> out(u_sum_.size());
  double nn = 0;
  for (double x : u_sum_) nn += x * x;
  const double s = nn > 0 ? 1.0 / std::sqrt(nn) : 0.0;
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(u_sum_[i] * s);
  return out;
}

CoEScores FeatureTap::scores() const {
  if (n_ < 2) {
    CoEScores c;
    c.n_points = n_;
    return c;
  }
  const int fd = 2 * kv_dim_;
  return scores_from_sums(sum_dr_, sum_dtheta_, n_steps_, l2_distance(prev_e_.data(), first_e_.data(), fd),
                          angle_between(first_e_.data(), prev_e_.data(), fd));
}

std::vector<std::vector<float>> FeatureTap::hidden_means() const {
  std::vector<std::vector<float>> out;
  if (!hidden || hidden_n_ == 0) return out;
  for (int l = 0; l <= n_layer_; ++l) {
    std::vector<float> h(n_embd_);
    for (int i = 0; i < n_embd_; ++i) h[i] = static_cast<float>(hidden_sum_[static_cast<size_t>(l) * n_embd_ + i] / hidden_n_);
    out.push_back(std::move(h));
  }
  return out;
}

CoEScores FeatureTap::hidden_scores() const { return score_trajectory(hidden_means()); }

size_t FeatureTap::state_bytes() const {
  // Per-token growth (trace / steps mode only) plus the fixed vectors and the step buffer.
  return steps_.capacity() * sizeof(TrajectoryStep) + trace_.capacity() * sizeof(float) +
         (first_e_.capacity() + prev_e_.capacity() + last_u_.capacity() + pending_.capacity()) *
             sizeof(float) +
         (u_sum_.capacity() + hidden_sum_.capacity()) * sizeof(double) + selected_.capacity();
}

void replay_from_cache(const PagedKVCache& kv, const BlockTable& table, int pos0, int n, KVTap& tap) {
  if (tap.pre_rope) throw InputError("the cache stores K after RoPE; a pre-RoPE tap cannot be replayed from it");
  const int bs = kv.block_size(), kd = kv.kv_dim();
  if (pos0 < 0 || n < 0 || pos0 + n > table.capacity(bs)) throw InputError("replay: positions outside the table");
  std::vector<float> k(static_cast<size_t>(n) * kd), v(k.size());
  for (int l = 0; l < kv.n_layer(); ++l) {
    for (int t = 0; t < n; ++t) {
      const int pos = pos0 + t;
      const BlockId b = table.block_of(pos, bs);
      kv.read_k(l, b, pos % bs, k.data() + static_cast<size_t>(t) * kd);
      kv.read_v(l, b, pos % bs, v.data() + static_cast<size_t>(t) * kd);
    }
    tap.on_kv(l, pos0, n, k.data(), v.data());
  }
}

TapFanout::TapFanout(std::vector<KVTap*> taps, const Model* model) : taps_(std::move(taps)) {
  if (taps_.empty()) throw InputError("tap fanout: no taps");
  pre_rope = taps_[0]->pre_rope;
  for (KVTap* t : taps_) {
    mixed_ = mixed_ || t->pre_rope != pre_rope;
    hidden = hidden || t->hidden;
  }
  if (mixed_) {
    if (!model) throw InputError("tap fanout: taps disagree on pre-RoPE K and no model to rotate with");
    pre_rope = true;
    // phi3's long/short factors: the ones its training context picks (the tap does not know the
    // context it runs in).
    const float* ff = model->rope_freqs_for(model->hparams().n_ctx_train);
    rope_ = std::make_unique<Rope>(model->hparams(), ff);
    rope_swa_ = std::make_unique<Rope>(model->hparams(), ff, true);
    hp_ = &model->hparams();
    n_head_kv_ = model->hparams().n_head_kv;
    kv_dim_ = model->hparams().n_kv_dim();
  }
}

TapFanout::~TapFanout() = default;

void TapFanout::on_kv(int layer, int pos0, int n, const float* k, const float* v) {
  if (mixed_) {
    rotated_.assign(k, k + static_cast<size_t>(n) * kv_dim_);
    const Rope& rope = hp_->is_swa(layer) ? *rope_swa_ : *rope_;
    for (int t = 0; t < n; ++t) rope.apply(nullptr, 0, rotated_.data() + static_cast<size_t>(t) * kv_dim_, n_head_kv_, pos0 + t);
  }
  for (KVTap* t : taps_) t->on_kv(layer, pos0, n, mixed_ && !t->pre_rope ? rotated_.data() : k, v);
}

void TapFanout::on_hidden(int layer, int pos0, int n, const float* x) {
  for (KVTap* t : taps_)
    if (t->hidden) t->on_hidden(layer, pos0, n, x);
}

}  // namespace kvscope::signals
