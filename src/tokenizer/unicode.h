// Internal Unicode helpers for the tokenizers: code point categories (generated table), UTF-8
// conversion matching llama.cpp's lenient decoder, and GPT-2's byte-to-unicode mapping.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kvscope::tok::uni {

enum CpFlag : uint16_t {
  kUndefined = 0x001, kNumber = 0x002, kLetter = 0x004, kSeparator = 0x008, kMark = 0x010,
  kPunct = 0x020, kSymbol = 0x040, kControl = 0x080, kWhitespace = 0x100,
};

struct CpRange {
  uint32_t start;
  uint16_t flags;
};
extern const CpRange kCpRanges[];
extern const size_t kCpRangesCount;
extern const char* const kUnicodeVersion;

// Category flags of a code point (kUndefined for unassigned or > U+10FFFF).
uint16_t cp_flags(uint32_t cp);

// Decodes UTF-8 like llama.cpp: a byte that does not start a complete sequence becomes U+FFFD
// and decoding resumes at the next byte (overlongs and surrogates are not rejected).
std::vector<uint32_t> decode_lenient(const std::string& s);
// Length in bytes of the sequence `lead` begins (1 for continuation/invalid bytes).
inline size_t utf8_len(unsigned char lead) {
  static const uint8_t lut[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return lut[lead >> 4];
}
void append_utf8(std::string& out, uint32_t cp);

// GPT-2 byte-level mapping: byte -> UTF-8 of its stand-in code point, and back (-1 if none).
const std::string& byte_to_unicode(uint8_t b);
int unicode_to_byte(uint32_t cp);

}  // namespace kvscope::tok::uni
