// UTF-8 helpers: validation, lenient decoding, the GPT-2 byte mapping, and StreamDecoder.
#include <algorithm>
#include <array>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace kvscope::tok {
namespace uni {

uint16_t cp_flags(uint32_t cp) {
  if (cp >= 0x110000) return kUndefined;
  // Last range whose start <= cp.
  const CpRange* end = kCpRanges + kCpRangesCount;
  const CpRange* it = std::upper_bound(kCpRanges, end, cp,
                                       [](uint32_t v, const CpRange& r) { return v < r.start; });
  return (it - 1)->flags;
}

std::vector<uint32_t> decode_lenient(const std::string& s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  auto cont = [&](size_t k) { return i + k < n && (p[i + k] & 0xC0) == 0x80; };
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      out.push_back(c);
      i += 1;
    } else if ((c & 0xE0) == 0xC0 && (c & 0x40) && cont(1)) {
      out.push_back(((c & 0x1Fu) << 6) | (p[i + 1] & 0x3Fu));
      i += 2;
    } else if ((c & 0xF0) == 0xE0 && cont(1) && cont(2)) {
      out.push_back(((c & 0x0Fu) << 12) | ((p[i + 1] & 0x3Fu) << 6) | (p[i + 2] & 0x3Fu));
      i += 3;
    } else if ((c & 0xF8) == 0xF0 && cont(1) && cont(2) && cont(3)) {
      out.push_back(((c & 0x07u) << 18) | ((p[i + 1] & 0x3Fu) << 12) | ((p[i + 2] & 0x3Fu) << 6) |
                    (p[i + 3] & 0x3Fu));
      i += 4;
    } else {
      out.push_back(0xFFFD);
      i += 1;
    }
  }
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | ((cp >> 18) & 0x07));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

namespace {
struct ByteMap {
  std::array<std::string, 256> to_uni;
  std::array<int, 512> from_uni;  // stand-ins are all < U+0144
  ByteMap() {
    from_uni.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      const uint32_t cp = printable ? static_cast<uint32_t>(b) : static_cast<uint32_t>(256 + n++);
      append_utf8(to_uni[b], cp);
      from_uni[cp] = b;
    }
  }
};
const ByteMap& byte_map() {
  static const ByteMap m;
  return m;
}
}  // namespace

const std::string& byte_to_unicode(uint8_t b) { return byte_map().to_uni[b]; }
int unicode_to_byte(uint32_t cp) { return cp < 512 ? byte_map().from_uni[cp] : -1; }

}  // namespace uni

namespace {
// Length of the valid UTF-8 sequence at s[i], 0 if invalid, -1 if a valid prefix is cut off by the
// end of the string.
int valid_seq_len(const std::string& s, size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  const unsigned char c = p[i];
  if (c < 0x80) return 1;
  int len;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;       // overlong
    else if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;       // overlong
    else if (c == 0xF4) hi = 0x8F;  // > U+10FFFF
  } else {
    return 0;
  }
  for (int k = 1; k < len; ++k) {
    if (i + k >= n) return -1;
    const unsigned char b = p[i + k];
    if (k == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) return 0;
  }
  return len;
}
}  // namespace

bool is_valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const int len = valid_seq_len(s, i);
    if (len <= 0) return false;
    i += static_cast<size_t>(len);
  }
  return true;
}

std::string StreamDecoder::push(TokenId id) {
  pending_ += tok_.token_to_piece(id);
  first_ = false;
  std::string out;
  size_t i = 0;
  while (i < pending_.size()) {
    const int len = valid_seq_len(pending_, i);
    if (len < 0) break;  // incomplete tail: wait for more bytes
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // invalid byte: U+FFFD, keeps the output valid UTF-8
      i += 1;
    } else {
      out.append(pending_, i, static_cast<size_t>(len));
      i += static_cast<size_t>(len);
    }
  }
  pending_.erase(0, i);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out;
  if (!pending_.empty()) out = "\xEF\xBF\xBD";  // a truncated sequence is one replacement
  pending_.clear();
  return out;
}

}  // namespace kvscope::tok
