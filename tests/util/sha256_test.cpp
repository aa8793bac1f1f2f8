// SHA-256 and HMAC-SHA256 against published vectors (FIPS 180-4 examples, RFC 4231) and values
// from Python's hashlib/hmac for inputs that cross block boundaries and keys longer than a block.
#include "util/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace sha256_test {

using namespace kvscope::util;

namespace {
std::string hex_of(const std::string& s) { return to_hex(sha256(s.data(), s.size())); }
std::string hmac_hex(const std::string& k, const std::string& m) { return to_hex(hmac_sha256(k, m.data(), m.size())); }
}  // namespace

TEST(Sha256, KnownDigests) {
  EXPECT_EQ(hex_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex_of(std::string(1000, 'a')), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  const std::string m(777, 'q');
  Sha256 s;
  for (size_t i = 0; i < m.size(); i += 13) s.update(m.data() + i, std::min<size_t>(13, m.size() - i));
  EXPECT_EQ(to_hex(s.finish()), hex_of(m));
}

TEST(Sha256, HmacVectors) {
  // RFC 4231 test case 2.
  EXPECT_EQ(hmac_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // A key longer than the block size is hashed first.
  EXPECT_EQ(hmac_hex(std::string(100, 'k'), std::string(200, 'x')),
            "e326f00ce14194bb85e2683fe9b1a78851753f77479303f94c2c3cd1998bdda3");
  const auto a = hmac_sha256("key", "m", 1), b = hmac_sha256("kez", "m", 1);
  EXPECT_TRUE(digest_equal(a.data(), a.data(), a.size()));
  EXPECT_FALSE(digest_equal(a.data(), b.data(), a.size()));
}

}  // namespace sha256_test
