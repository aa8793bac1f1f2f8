// KV anomaly detection: how far a prompt's pooled KV lies from a reference profile of normal
// traffic.
//
// A prompt's vector is the confidence probe's KV features over the prompt's positions (per
// selected layer: the L2-normalized pooled u_t = [mean_h K_h | mean_h V_h] / norm, mean and max of
// dr and dtheta between consecutive tokens; then log(1 + tokens)). The profile holds the mean mu
// and the lower-triangular whitening W = chol(S)^-1 of their covariance S, shrunk toward its
// diagonal (S = (1 - a) C + a diag(C) + eps I) so that a few hundred prompts give a usable
// inverse. The anomaly score is the whitened (Mahalanobis) distance per dimension,
//   score = sqrt( ||W (x - mu)||^2 / d ),
// about 1 for normal prompts.
//
// A pooled vector hides one odd token (a control marker typed inside a question moves the mean
// of 80 tokens very little), so the profile (version 2) also models single tokens. A token's
// vector is the concatenation over the profile's layers of v_{l,t} = L2norm(mean_h V_h(l,t)) (V,
// not K: V carries no RoPE rotation, so the same token in the same context gives the same vector
// at any position). The token model holds a whitening of those vectors (fitted like the pooled
// one, on a sample of normal prompts' tokens) and k centroids of the whitened vectors (k-means):
// the template's fixed tokens, question words and numbers each sit near centroids of their own.
// Two per-token parts come from it:
//   distance: dist_t = min_c ||W_tok (y_t - mu_tok) - c|| / sqrt(d_tok); the prompt's largest;
//   counts:   each token counts for its nearest centroid; with m_c and s_c^2 the mean and variance
//             of a centroid's count per normal prompt, the prompt's largest (n_c - m_c) /
//             sqrt(s_c^2 + floor) over centroids with m_c >= 0.5. A centroid that holds one
//             template token (one <think> per prompt, always) has s_c = 0, so one more such
//             token scores 1 / sqrt(floor).
// Each part is divided by its own calibration quantile on held-out normal prompts, and the
// anomaly score is the largest:
//   score = max( pooled / pooled_ref, token_max / token_ref, count_max / count_ref ).
// The default threshold is a high quantile of held-out normal prompts' scores (kv-profile's
// calibration share) times a margin, stored in the file. A version-1 profile (pooled only) still
// loads and scores as before.
//
// Version 3 adds a user-content part: the same per-token vectors, but only of the tokens of the
// users' own text (the spans of the user messages inside the rendered chat prompt, known when the
// template renders it: reasoning::user_token_spans), scored against a whitening and centroids
// fitted on user-content tokens alone. The template's own markers never occur in normal user text,
// so a <|im_start|> or </think> typed by a user has no nearby user-content centroid (in the
// all-token model it sits next to the template's marker centroid). Its part is the mean of the
// prompt's user_topk largest user-token distances (1: the largest); a prompt without a user span
// (a raw completion) gets 0 there:
//   score = max( ..., user_part / user_ref ) + marker_weight * markers,
// where markers counts the template's special tokens (control / user-defined vocabulary entries,
// e.g. <|im_start|>, </think>) inside the user spans: a token-level, not a KV, part. A server parses
// special-token spellings in chat messages, so a user typing one gives that token; normal user text
// never holds one, so the calibration and the false-positive rate do not move.
#pragma once
#include <climits>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "signals/confidence_probe.h"
#include "tokenizer/tokenizer.h"

namespace kvscope::signals {

// The per-token part of a profile.
struct TokenModel {
  int dim = 0;                  // layers * head_dim
  std::vector<double> mean;     // dim
  std::vector<double> whiten;   // dim * dim, lower triangle
  int k = 0;                    // centroids
  std::vector<float> centroids; // k * dim, whitened space
  std::vector<float> c_norm2;   // k: ||c||^2
  std::vector<float> count_mean, count_scale;  // k: m_c and 1 / sqrt(s_c^2 + floor)
  bool empty() const { return dim == 0; }
  // dist_t of one token vector (dim floats); *nearest (when given) gets its centroid (-1: none).
  double distance(const float* y, int* nearest = nullptr) const;
  // The same with caller-owned scratch of dim values each (no allocation: the prefill path).
  double distance(const float* y, int* nearest, double* scratch_c, float* scratch_z) const;
  // The count part of a prompt from its tokens' counts per centroid (k values); 0 without counts.
  double count_score(const std::vector<int>& counts) const;
};

struct KVProfile {
  uint64_t model_fingerprint = 0;
  std::vector<int> layers;
  int dim = 0;
  std::vector<double> mean;     // dim
  std::vector<double> whiten;   // dim * dim, row-major lower triangle (upper part zero)
  double threshold = 0;         // default: scores above are anomalous
  std::string info;             // JSON text: data, sizes, calibration quantile
  TokenModel token;             // empty in a version-1 profile (and when built without it)
  TokenModel user;              // the user-content part: empty before version 3
  int user_topk = 1;            // the user part: mean of this many largest user-token distances
  double marker_weight = 0;     // added to the score per special token inside the user spans (0: off)
  double pooled_ref = 1, token_ref = 1, count_ref = 1, user_ref = 1;  // calibration quantiles the parts are divided by

  // The spec of the tap that gives this profile's vectors.
  ProbeSpec spec() const;
  // The pooled part: the whitened distance of a prompt vector.
  double score(const std::vector<float>& x) const;
  // The anomaly score from the pooled distance, the largest token distance, the count part and
  // the user-content part (each ignored without its model; without any per-token model the score
  // is the pooled distance itself, as version 1 scored).
  double combine(double pooled, double token_max, double count_max, double user = 0, int markers = 0) const;
  bool has_parts() const { return !token.empty() || !user.empty(); }
};

// The tap of the per-token part, over positions [begin, end) (or over the given spans: the
// user-content part): each token's vector (the selected layers' v_{l,t}, concatenated) either
// scored against `model` as it is written (keeping the largest distances and a count per
// centroid: no per-token state), or, with model null, kept (to fit a profile).
class TokenTap final : public KVTap {
 public:
  static constexpr int kTop = 8;  // largest distances kept (the user part's top-k mean)
  TokenTap(const HParams& hp, std::vector<int> layers, const TokenModel* model, int begin = 0, int end = INT_MAX);
  // Only the tokens inside the spans [begin, end) (sorted or not; overlaps are fine).
  TokenTap(const HParams& hp, std::vector<int> layers, const TokenModel* model, std::vector<std::pair<int, int>> spans);
  void on_kv(int layer, int pos0, int n, const float* k, const float* v) override;
  int dim() const { return static_cast<int>(layers_.size()) * head_dim_; }
  int n_tokens() const { return n_tokens_; }
  double max_distance() const { return max_; }
  // The mean of the k largest distances (fewer when the tap saw fewer tokens; 0 without tokens).
  double top_mean(int k) const;
  const std::vector<double>& top() const { return top_; }  // the largest distances, largest first
  int argmax() const { return argmax_; }
  const std::vector<int>& counts() const { return counts_; }  // tokens per centroid
  double count_score() const { return model_ ? model_->count_score(counts_) : 0.0; }
  const std::vector<float>& rows() const { return rows_; }  // n_tokens * dim, without a model

 private:
  int head_dim_, n_head_kv_, kv_dim_, begin_, end_;
  std::vector<int> layers_, slot_;
  const TokenModel* model_;
  std::vector<float> chunk_;  // rows of the current step, all layers
  std::vector<double> scratch_c_;
  std::vector<float> scratch_z_;
  int chunk_pos0_ = 0, chunk_n_ = 0, next_pos_ = INT_MIN, n_tokens_ = 0;
  std::vector<std::pair<int, int>> spans_;  // empty: every position of [begin, end)
  std::vector<double> top_;
  double max_ = 0;
  int argmax_ = -1;
  std::vector<int> counts_;
  std::vector<float> rows_;
};

// The special tokens (control or user-defined vocabulary entries) of prompt inside the spans, which
// do not overlap (user_token_spans finds each after the one before).
int special_tokens_in(const tok::Tokenizer& tk, const std::vector<int32_t>& prompt, const std::vector<std::pair<int, int>>& spans);

// A token vector from stored V, in double precision (what the tests compare the tap with): v[l]
// is the kv_dim row of layer layers[l] at the token.
std::vector<double> token_vector_reference(int head_dim, int n_head_kv, const std::vector<std::vector<float>>& v);

// Fits the token model: whitening of rows (n * dim floats) with shrinkage, then k-means with k
// centroids (seeded; iterations Lloyd steps) in the whitened space.
TokenModel fit_token_model(const std::vector<float>& rows, int dim, double shrink, int k, int iterations, uint64_t seed);
// Sets the count statistics from normal prompts' counts per centroid (one vector of k per prompt).
void fit_token_counts(TokenModel& t, const std::vector<std::vector<int>>& counts, double floor);

// Fits mean and whitening from rows (each `dim` long). shrink in [0, 1]. Throws InputError with
// fewer than 2 rows or mismatched lengths.
KVProfile fit_profile(const std::vector<std::vector<float>>& rows, double shrink);

// A prompt's vector: the tap's features without the logit statistics.
inline std::vector<float> prompt_vector(const ProbeFeatures& tap) { return tap.features(LogitStats()); }

// Binary, little-endian: "KVSPROF1", version, fingerprint, layers, threshold, info, dim, mean, whiten;
// version 2 adds pooled_ref, token_ref, count_ref and the token model (dim, mean, whiten, k,
// centroids, count means and scales); version 3 adds user_ref, user_topk and the user-content
// token model (the same layout as the token model), then marker_weight.
void save_profile(const std::string& path, const KVProfile& p);
// Reads versions 1, 2 and 3. Throws InputError naming the file: not a profile, damaged, another version, or (when
// expect_fingerprint != 0) built for another model.
KVProfile load_profile(const std::string& path, uint64_t expect_fingerprint = 0);
// "<stem>.kvprofile.bin" beside "<stem>.gguf", or "" when absent.
std::string sibling_profile_path(const std::string& model_path);

}  // namespace kvscope::signals
