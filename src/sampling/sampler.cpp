// Sampling chain, in llama.cpp's order: logit bias -> penalties -> top-k -> top-p -> min-p -> temperature -> draw.
#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

#include "util/error.h"

namespace kvscope {

void SamplingParams::validate() const {
  auto bad = [](const std::string& what) { throw InputError("invalid sampling parameter: " + what); };
  if (!std::isfinite(temperature) || temperature < 0) bad("temperature must be >= 0");
  if (!std::isfinite(top_p) || top_p <= 0 || top_p > 1) bad("top_p must be in (0, 1]");
  if (!std::isfinite(min_p) || min_p < 0 || min_p > 1) bad("min_p must be in [0, 1]");
  if (top_k < 0) bad("top_k must be >= 0");
  if (!std::isfinite(repeat_penalty) || repeat_penalty <= 0) bad("repeat_penalty must be > 0");
  if (!std::isfinite(presence_penalty) || presence_penalty < -2 || presence_penalty > 2) bad("presence_penalty must be in [-2, 2]");
  if (!std::isfinite(frequency_penalty) || frequency_penalty < -2 || frequency_penalty > 2) bad("frequency_penalty must be in [-2, 2]");
  if (penalty_last_n < -1) bad("penalty_last_n must be >= -1");
  for (const auto& [id, b] : logit_bias) {
    if (id < 0) bad("logit_bias token id " + std::to_string(id) + " is negative");
    if (std::isnan(b) || b == std::numeric_limits<float>::infinity())
      bad("logit_bias for token " + std::to_string(id) + " must be a number or -infinity");
  }
}

void SamplingParams::validate_vocab(int n_vocab) const {
  for (const auto& [id, b] : logit_bias)
    if (id < 0 || id >= n_vocab)
      throw InputError("invalid sampling parameter: logit_bias token id " + std::to_string(id) +
                       " is not in the vocabulary (0.." + std::to_string(n_vocab - 1) + ")");
}

void keep_only(float* logits, int n_vocab, const std::vector<uint8_t>& allowed) {
  if (allowed.empty()) return;
  for (int i = 0; i < n_vocab && i < static_cast<int>(allowed.size()); ++i)
    if (!allowed[static_cast<size_t>(i)]) logits[i] = -std::numeric_limits<float>::infinity();
}

int32_t argmax(const float* logits, int n) {
  int32_t best = 0;
  for (int i = 1; i < n; ++i)
    if (logits[i] > logits[best]) best = i;
  return best;
}

Sampler::Sampler(SamplingParams p) : p_(p), rng_(p.seed) { p_.validate(); }

int32_t Sampler::sample(const float* logits, int n_vocab, const std::vector<int32_t>& history) {
  if (!p_.logit_bias.empty() && static_cast<int>(bias_.size()) != n_vocab) {
    p_.validate_vocab(n_vocab);
    bias_.assign(static_cast<size_t>(n_vocab), 0.0f);
    for (const auto& [id, b] : p_.logit_bias) bias_[static_cast<size_t>(id)] += b;  // a repeated id adds up
  }
  const bool penalize = p_.repeat_penalty != 1.0f || p_.presence_penalty != 0.0f || p_.frequency_penalty != 0.0f;
  std::unordered_map<int32_t, int> counts;
  if (penalize) {
    size_t n = history.size();
    size_t start = p_.penalty_last_n < 0 ? 0 : n - std::min<size_t>(n, static_cast<size_t>(p_.penalty_last_n));
    for (size_t i = start; i < n; ++i) counts[history[i]]++;
  }
  auto penalized = [&](int32_t id) {
    float l = bias_.empty() ? logits[id] : logits[id] + bias_[static_cast<size_t>(id)];
    if (!penalize) return l;
    auto it = counts.find(id);
    if (it == counts.end()) return l;
    l = l > 0 ? l / p_.repeat_penalty : l * p_.repeat_penalty;
    return l - p_.presence_penalty - p_.frequency_penalty * static_cast<float>(it->second);
  };
  if (p_.temperature <= 0.0f) {
    int32_t best = 0;
    float bv = penalized(0);
    for (int i = 1; i < n_vocab; ++i) {
      float v = penalized(i);
      if (v > bv) bv = v, best = i;
    }
    return best;
  }
  if ((p_.top_k <= 0 || p_.top_k >= n_vocab) && p_.top_p >= 1.0f && p_.min_p <= 0.0f) {
    // Nothing is truncated (OpenAI's defaults): draw from the whole distribution in id order,
    // without sorting the vocabulary.
    std::vector<float>& l = scratch_;
    l.resize(static_cast<size_t>(n_vocab));
    float mx = -std::numeric_limits<float>::infinity();
    int32_t best = 0;
    for (int i = 0; i < n_vocab; ++i) {
      l[static_cast<size_t>(i)] = penalized(i);
      if (l[static_cast<size_t>(i)] > mx) mx = l[static_cast<size_t>(i)], best = i;
    }
    if (mx == -std::numeric_limits<float>::infinity()) return best;  // a logit_bias banned every token
    const float inv_t = 1.0f / p_.temperature;
    double total = 0;
    for (float& x : l) total += x = std::exp((x - mx) * inv_t);  // now the weights
    double r = static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0) * total;
    int32_t last = best;
    for (int i = 0; i < n_vocab; ++i) {
      const float w = l[static_cast<size_t>(i)];
      if (w <= 0) continue;
      last = i;
      r -= w;
      if (r < 0) return i;
    }
    return last;  // rounding left a sliver: the last token with weight
  }
  cand_.resize(n_vocab);
  for (int i = 0; i < n_vocab; ++i) cand_[i] = {penalized(i), i};
  auto desc = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
  size_t n = cand_.size();
  if (p_.top_k > 0 && static_cast<size_t>(p_.top_k) < n) {
    std::partial_sort(cand_.begin(), cand_.begin() + p_.top_k, cand_.end(), desc);
    n = static_cast<size_t>(p_.top_k);
  } else {
    std::sort(cand_.begin(), cand_.end(), desc);
  }
  // Softmax over the survivors (before temperature, as llama.cpp's top-p/min-p see it).
  const float mx = cand_[0].first;
  if (mx == -std::numeric_limits<float>::infinity()) return cand_[0].second;  // a logit_bias banned every token
  std::vector<float> prob(n);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += prob[i] = std::exp(cand_[i].first - mx);
  for (auto& x : prob) x = static_cast<float>(x / sum);
  if (p_.top_p < 1.0f) {
    double cum = 0;
    size_t keep = n;
    for (size_t i = 0; i < n; ++i) {
      cum += prob[i];
      if (cum >= p_.top_p) {
        keep = i + 1;
        break;
      }
    }
    n = keep;
  }
  if (p_.min_p > 0.0f) {
    const float cut = prob[0] * p_.min_p;
    size_t keep = 1;
    while (keep < n && prob[keep] >= cut) ++keep;
    n = keep;
  }
  std::vector<double> w(n);
  const double inv_t = 1.0 / p_.temperature;
  for (size_t i = 0; i < n; ++i) w[i] = std::exp((cand_[i].first - mx) * inv_t);
  double total = 0;
  for (double x : w) total += x;
  // Our own draw from the 64-bit engine (std distributions differ between standard libraries).
  double r = static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0) * total;
  for (size_t i = 0; i < n; ++i) {
    r -= w[i];
    if (r < 0) return cand_[i].second;
  }
  return cand_[n - 1].second;
}

}  // namespace kvscope
