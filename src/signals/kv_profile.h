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
// about 1 for normal prompts. The default threshold is a high quantile of held-out normal
// prompts' scores (kv-profile's calibration share), stored in the file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "signals/confidence_probe.h"

namespace kvscope::signals {

struct KVProfile {
  uint64_t model_fingerprint = 0;
  std::vector<int> layers;
  int dim = 0;
  std::vector<double> mean;     // dim
  std::vector<double> whiten;   // dim * dim, row-major lower triangle (upper part zero)
  double threshold = 0;         // default: scores above are anomalous
  std::string info;             // JSON text: data, sizes, calibration quantile

  // The spec of the tap that gives this profile's vectors.
  ProbeSpec spec() const;
  double score(const std::vector<float>& x) const;
};

// Fits mean and whitening from rows (each `dim` long). shrink in [0, 1]. Throws InputError with
// fewer than 2 rows or mismatched lengths.
KVProfile fit_profile(const std::vector<std::vector<float>>& rows, double shrink);

// A prompt's vector: the tap's features without the logit statistics.
inline std::vector<float> prompt_vector(const ProbeFeatures& tap) { return tap.features(LogitStats()); }

// Binary, little-endian: "KVSPROF1", version, fingerprint, layers, threshold, info, dim, mean, whiten.
void save_profile(const std::string& path, const KVProfile& p);
// Throws InputError naming the file: not a profile, damaged, wrong version, or (when
// expect_fingerprint != 0) built for another model.
KVProfile load_profile(const std::string& path, uint64_t expect_fingerprint = 0);
// "<stem>.kvprofile.bin" beside "<stem>.gguf", or "" when absent.
std::string sibling_profile_path(const std::string& model_path);

}  // namespace kvscope::signals
