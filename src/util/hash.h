// FNV-1a (64-bit), the one hash behind prefix-cache block keys, session-file checksums, model
// fingerprints, decision-cache keys, tenant salts and tinygsm's split assignment. Those values are
// stored (session files, difficulty files, Redis keys) or fix data splits, so this must never change.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kvscope::util {

inline constexpr uint64_t kFnvOffset = 14695981039346656037ull;
inline constexpr uint64_t kFnvPrime = 1099511628211ull;

// Continues hash h over n bytes.
inline uint64_t fnv1a(const void* data, size_t n, uint64_t h = kFnvOffset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= kFnvPrime;
  }
  return h;
}

inline uint64_t fnv1a(std::string_view s, uint64_t h = kFnvOffset) { return fnv1a(s.data(), s.size(), h); }

// Feeds the low `bytes` bytes of v, least significant first whatever the host's byte order, so
// hashes of integers are the same on every machine.
inline void fnv1a_int(uint64_t& h, uint64_t v, int bytes = 8) {
  for (int i = 0; i < bytes; ++i) {
    h ^= (v >> (8 * i)) & 0xff;
    h *= kFnvPrime;
  }
}

}  // namespace kvscope::util
