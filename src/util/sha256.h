// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104): the tag that signs session files with a server
// secret, so a file edited outside the server is refused even when its FNV checksum was redone.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvscope::util {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  Sha256Digest finish();  // the digest; the object is spent afterwards

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t fill_ = 0;
  uint64_t total_ = 0;  // bytes
};

Sha256Digest sha256(const void* data, size_t n);
Sha256Digest hmac_sha256(std::string_view key, const void* data, size_t n);
std::string to_hex(const Sha256Digest& d);
// Compares without an early exit, so timing does not reveal how much of a tag matched.
bool digest_equal(const uint8_t* a, const uint8_t* b, size_t n);

}  // namespace kvscope::util
