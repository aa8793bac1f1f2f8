#include "signals/kv_profile.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "util/error.h"
#include "util/model_file.h"

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

KVProfile fit_profile(const std::vector<std::vector<float>>& rows, double shrink) {
  if (rows.size() < 2) throw InputError("KV profile: need at least 2 prompts");
  const int d = static_cast<int>(rows[0].size());
  for (const auto& r : rows)
    if (static_cast<int>(r.size()) != d) throw InputError("KV profile: prompt vectors of different lengths");
  KVProfile p;
  p.dim = d;
  p.mean.assign(d, 0.0);
  for (const auto& r : rows)
    for (int i = 0; i < d; ++i) p.mean[i] += r[i];
  for (double& m : p.mean) m /= static_cast<double>(rows.size());
  std::vector<double> C(static_cast<size_t>(d) * d, 0.0), c(d);
  for (const auto& r : rows) {
    for (int i = 0; i < d; ++i) c[i] = r[i] - p.mean[i];
    for (int i = 0; i < d; ++i) {
      double* row = C.data() + static_cast<size_t>(i) * d;
      for (int j = 0; j <= i; ++j) row[j] += c[i] * c[j];
    }
  }
  const double inv_n = 1.0 / static_cast<double>(rows.size() - 1);
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
  p.whiten.assign(static_cast<size_t>(d) * d, 0.0);
  for (int col = 0; col < d; ++col)
    for (int i = col; i < d; ++i) {
      double s = i == col ? 1.0 : 0.0;
      for (int k = col; k < i; ++k) s -= L[static_cast<size_t>(i) * d + k] * p.whiten[static_cast<size_t>(k) * d + col];
      p.whiten[static_cast<size_t>(i) * d + col] = s / L[static_cast<size_t>(i) * d + i];
    }
  return p;
}

namespace {
constexpr char kMagic[8] = {'K', 'V', 'S', 'P', 'R', 'O', 'F', '1'};
constexpr uint32_t kVersion = 1;
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
  o.save(path, "KV profile");
}

KVProfile load_profile(const std::string& path, uint64_t expect_fingerprint) {
  ModelFileReader in(path, kMagic, kVersion, "KV profile", expect_fingerprint,
                     "build one for this model with kvscope kv-profile");
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
  in.expect_end();
  return p;
}

std::string sibling_profile_path(const std::string& model_path) {
  return sibling_model_file(model_path, ".kvprofile.bin");
}

}  // namespace kvscope::signals
