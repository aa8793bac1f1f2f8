// Small binary files tied to one model (the difficulty estimator, the confidence probe, the KV
// profile): an 8-byte magic, a u32 version and the u64 fingerprint of the model they were made for,
// then each file's own fields. Reading checks all three and names the file and the problem.
#pragma once
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "util/error.h"

namespace kvscope {

class ModelFileWriter {
 public:
  ModelFileWriter(const char (&magic)[8], uint32_t version, uint64_t fingerprint) : b_(magic, sizeof magic) {
    put<uint32_t>(version);
    put<uint64_t>(fingerprint);
  }
  template <class T>
  void put(T v) {
    b_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {  // u32 length, then the bytes
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    b_ += s;
  }
  void floats(const std::vector<float>& v) {  // u64 count, then the values
    put<uint64_t>(v.size());
    b_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  }
  // `what` names the kind of file in the error ("difficulty file").
  void save(const std::string& path, const std::string& what) const {
    std::ofstream out(path, std::ios::binary);
    if (!out || !out.write(b_.data(), static_cast<std::streamsize>(b_.size())))
      throw InputError("cannot write " + what + " '" + path + "'");
  }

 private:
  std::string b_;
};

class ModelFileReader {
 public:
  // Reads the file and checks its magic, version and (when expect_fingerprint is not 0) that it was
  // made for this model; `remedy` ends that error ("retrain it with kvscope train-difficulty").
  // min_version (0: the same as version): older versions this build still reads (version()).
  ModelFileReader(const std::string& path, const char (&magic)[8], uint32_t version, std::string what,
                  uint64_t expect_fingerprint, const std::string& remedy, uint32_t min_version = 0)
      : path_(path), what_(std::move(what)) {
    std::ifstream fin(path, std::ios::binary);
    if (!fin) throw InputError("cannot open " + what_ + " '" + path + "'");
    b_.assign(std::istreambuf_iterator<char>(fin), std::istreambuf_iterator<char>());
    if (b_.size() < sizeof magic || std::memcmp(b_.data(), magic, sizeof magic) != 0)
      throw InputError("'" + path + "' is not a kvscope " + what_ + " (bad magic)");
    off_ = sizeof magic;
    const uint32_t ver = get<uint32_t>();
    if (min_version == 0) min_version = version;
    if (ver < min_version || ver > version)
      throw InputError(what_ + " '" + path + "' has version " + std::to_string(ver) + ", this build reads " +
                       (min_version == version ? std::to_string(version)
                                               : std::to_string(min_version) + " to " + std::to_string(version)));
    version_ = ver;
    fingerprint_ = get<uint64_t>();
    if (expect_fingerprint && fingerprint_ != expect_fingerprint)
      throw InputError(what_ + " '" + path + "' was made for another model (its model fingerprint does not match); " +
                       remedy);
  }

  uint64_t fingerprint() const { return fingerprint_; }
  uint32_t version() const { return version_; }
  void need(size_t n) const {
    if (b_.size() - off_ < n) throw InputError(what_ + " '" + path_ + "' is truncated or damaged");
  }
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, b_.data() + off_, sizeof v);
    off_ += sizeof v;
    return v;
  }
  std::string str() {
    const uint32_t n = get<uint32_t>();
    need(n);
    std::string s = b_.substr(off_, n);
    off_ += n;
    return s;
  }
  // A u64 count (at most max_count, else damaged) and that many floats.
  std::vector<float> floats(uint64_t max_count) {
    const uint64_t n = get<uint64_t>();
    if (n > max_count) throw damaged("dimensions");
    need(n * sizeof(float));
    std::vector<float> v(n);
    std::memcpy(v.data(), b_.data() + off_, n * sizeof(float));
    off_ += n * sizeof(float);
    return v;
  }
  // The error for a field that does not make sense: "<what> '<path>' is damaged (<field>)".
  InputError damaged(const std::string& field) const { return InputError(what_ + " '" + path_ + "' is damaged (" + field + ")"); }
  void expect_end() const {
    if (off_ != b_.size()) throw InputError(what_ + " '" + path_ + "' has trailing bytes (damaged)");
  }

 private:
  std::string path_, what_, b_;
  size_t off_ = 0;
  uint64_t fingerprint_ = 0;
  uint32_t version_ = 0;
};

// "<model path without .gguf><suffix>" when that file exists, else "".
inline std::string sibling_model_file(const std::string& model_path, const std::string& suffix) {
  std::string stem = model_path;
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".gguf") == 0) stem.resize(stem.size() - 5);
  const std::string cand = stem + suffix;
  return std::ifstream(cand, std::ios::binary) ? cand : std::string();
}

}  // namespace kvscope
