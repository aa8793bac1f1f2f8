// Byte-level BPE pre-tokenizers, written by hand over code points (no std::regex). Each splitter
// refines a list of pieces, as llama.cpp applies its regex list one after another; the GPT-2,
// Llama 3 and Qwen2 splitters reproduce llama.cpp's hand-written matchers exactly, including
// their treatment of "\s+(?!\S)" at the end of a piece.
#include <functional>

#include "tokenizer/internal.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace kvscope::tok::detail {
namespace {

using uni::kLetter;
using uni::kNumber;
using uni::kPunct;
using uni::kWhitespace;

constexpr uint32_t kOut = 0xFFFFFFFF;  // "code point" outside the current piece

struct Text {
  std::vector<uint32_t> cp;
  std::vector<uint16_t> fl;
};

struct Piece {
  size_t ini, end;
};

// Walks one piece; cpt()/flags() return kOut / 0 outside it, like llama.cpp's _get_cpt/_get_flags.
struct Cursor {
  const Text& t;
  size_t ini, end;
  std::vector<Piece>& out;
  size_t prev_end;
  uint32_t cpt(size_t p) const { return p >= ini && p < end ? t.cp[p] : kOut; }
  uint16_t flags(size_t p) const { return p >= ini && p < end ? t.fl[p] : 0; }
  size_t add(size_t e) {
    const size_t len = e - prev_end;
    if (len > 0) out.push_back({prev_end, e});
    prev_end = e;
    return len;
  }
};

uint32_t ascii_lower(uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

// 's|'t|'re|'ve|'m|'ll|'d (case-insensitive when `ci`). Returns true when it consumed.
bool contraction(Cursor& c, size_t& pos, bool ci) {
  if (c.cpt(pos) != '\'' || pos + 1 >= c.end) return false;
  auto lc = [&](size_t p) { return ci ? ascii_lower(c.cpt(p)) : c.cpt(p); };
  const uint32_t n1 = lc(pos + 1);
  if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') {
    pos += c.add(pos + 2);
    return true;
  }
  if (pos + 2 < c.end) {
    const uint32_t n2 = lc(pos + 2);
    if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l')) {
      pos += c.add(pos + 3);
      return true;
    }
  }
  return false;
}

// The alternatives both GPT-2's and Llama 3's patterns end with, at pos with nws whitespace code
// points ahead: \s+(?!\S) (the run but its last), then \s+, else one code point alone.
void whitespace_tail(Cursor& c, size_t& pos, size_t nws) {
  if (nws > 1 && c.cpt(pos + nws) != kOut) pos += nws - 1;
  else if (nws > 0) pos += nws;
  else ++pos;
  c.add(pos);
}

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
void split_gpt2(Cursor& c) {
  for (size_t pos = c.ini; pos < c.end;) {
    const uint32_t cpt = c.cpt(pos);
    if (contraction(c, pos, false)) continue;
    uint16_t f2 = cpt == ' ' ? c.flags(pos + 1) : c.flags(pos);
    if (f2 & kLetter) {
      pos += (cpt == ' ');
      while (f2 & kLetter) f2 = c.flags(++pos);
      c.add(pos);
      continue;
    }
    if (f2 & kNumber) {
      pos += (cpt == ' ');
      while (f2 & kNumber) f2 = c.flags(++pos);
      c.add(pos);
      continue;
    }
    if (!(f2 & (kWhitespace | kLetter | kNumber)) && f2) {
      pos += (cpt == ' ');
      while (!(f2 & (kWhitespace | kLetter | kNumber)) && f2) f2 = c.flags(++pos);
      c.add(pos);
      continue;
    }
    size_t nws = 0;
    while (c.flags(pos + nws) & kWhitespace) nws++;
    whitespace_tail(c, pos, nws);
  }
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}| ?[^\s\p{L}\p{N}]+[\r\n]*|
// \s*[\r\n]+|\s+(?!\S)|\s+      (Llama 3: max_digits 3; Qwen2: 1)
void split_llama3(Cursor& c, size_t max_digits) {
  for (size_t pos = c.ini; pos < c.end;) {
    const uint32_t cpt = c.cpt(pos);
    const uint16_t flags = c.flags(pos);
    if (contraction(c, pos, true)) continue;
    if (!(cpt == '\r' || cpt == '\n' || (flags & kNumber))) {
      if ((flags & kLetter) || (c.flags(pos + 1) & kLetter)) {
        pos++;
        while (c.flags(pos) & kLetter) pos++;
        c.add(pos);
        continue;
      }
    }
    if (flags & kNumber) {
      size_t ini = pos;
      while (c.flags(pos) & kNumber) {
        if (++pos - ini >= max_digits) {
          c.add(pos);
          ini = pos;
        }
      }
      c.add(pos);
      continue;
    }
    uint16_t f2 = cpt == ' ' ? c.flags(pos + 1) : flags;
    if (!(f2 & (kWhitespace | kLetter | kNumber)) && flags) {
      pos += (cpt == ' ');
      while (!(f2 & (kWhitespace | kLetter | kNumber)) && f2) f2 = c.flags(++pos);
      uint32_t c2 = c.cpt(pos);
      while (c2 == '\r' || c2 == '\n') c2 = c.cpt(++pos);
      c.add(pos);
      continue;
    }
    size_t nws = 0, last_rn = 0;
    while (c.flags(pos + nws) & kWhitespace) {
      const uint32_t c2 = c.cpt(pos + nws);
      if (c2 == '\r' || c2 == '\n') last_rn = pos + nws + 1;
      nws++;
    }
    if (last_rn > 0) {  // \s*[\r\n]+
      pos = last_rn;
      c.add(pos);
      continue;
    }
    whitespace_tail(c, pos, nws);
  }
}

// A regex that isolates its matches: matched runs and the text between them become pieces.
// `match(pos)` returns the match length at pos (0 = none), scanning left to right.
void split_matches(Cursor& c, const std::function<size_t(size_t)>& match) {
  for (size_t pos = c.ini; pos < c.end;) {
    const size_t m = match(pos);
    if (m == 0) {
      ++pos;
      continue;
    }
    c.add(pos);
    pos += m;
    c.add(pos);
  }
  c.add(c.end);
}

void split_runs(Cursor& c, const std::function<bool(size_t)>& pred) {
  split_matches(c, [&](size_t p) {
    size_t q = p;
    while (q < c.end && pred(q)) ++q;
    return q - p;
  });
}

using Splitter = std::function<void(Cursor&)>;

std::vector<Splitter> splitters(PreType type) {
  const Splitter gpt2 = split_gpt2;
  switch (type) {
    case PreType::Gpt2:
      return {gpt2};
    case PreType::Llama3:
      return {[](Cursor& c) { split_llama3(c, 3); }};
    case PreType::Qwen2:
      return {[](Cursor& c) { split_llama3(c, 1); }};
    case PreType::Starcoder:  // \p{N}, then GPT-2
      return {[](Cursor& c) { split_matches(c, [&](size_t p) -> size_t { return (c.flags(p) & kNumber) ? 1 : 0; }); },
              gpt2};
    case PreType::Default:  // [\p{P}\$\+<=>\^~\|]+, GPT-2, \p{N}+, [0-9][0-9][0-9]
      return {[](Cursor& c) {
                split_runs(c, [&](size_t p) {
                  const uint32_t x = c.cpt(p);
                  return (c.flags(p) & kPunct) || x == '$' || x == '+' || x == '<' || x == '=' || x == '>' ||
                         x == '^' || x == '~' || x == '|';
                });
              },
              gpt2, [](Cursor& c) { split_runs(c, [&](size_t p) { return (c.flags(p) & kNumber) != 0; }); },
              [](Cursor& c) {
                auto dig = [&](size_t p) { const uint32_t x = c.cpt(p); return x >= '0' && x <= '9'; };
                split_matches(c, [&](size_t p) -> size_t { return dig(p) && dig(p + 1) && dig(p + 2) ? 3 : 0; });
              }};
  }
  return {gpt2};
}

}  // namespace

PreType pre_type_from_name(const std::string& pre, bool* ignore_merges) {
  *ignore_merges = false;
  auto any = [&](std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (pre == n) return true;
    return false;
  };
  if (pre.empty() || pre == "default") return PreType::Default;
  if (any({"llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral"})) {
    *ignore_merges = true;
    return PreType::Llama3;
  }
  if (any({"dbrx", "smaug-bpe"})) return PreType::Llama3;
  if (any({"qwen2", "deepseek-r1-qwen", "stablelm2", "hunyuan"})) return PreType::Qwen2;
  if (any({"gpt-2", "phi-2", "mpt", "olmo", "jina-es", "jina-de", "jina-v2-es", "jina-v2-de", "jais"}))
    return PreType::Gpt2;
  if (any({"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva"}))
    return PreType::Starcoder;
  throw FormatError("unsupported tokenizer pre-tokenizer type tokenizer.ggml.pre = '" + pre + "'");
}

std::vector<std::string> pre_tokenize(PreType type, const std::string& text) {
  Text t;
  t.cp = uni::decode_lenient(text);
  t.fl.resize(t.cp.size());
  for (size_t i = 0; i < t.cp.size(); ++i) t.fl[i] = uni::cp_flags(t.cp[i]);

  std::vector<Piece> pieces{{0, t.cp.size()}}, next;
  for (const Splitter& split : splitters(type)) {
    next.clear();
    next.reserve(pieces.size() * 2);
    for (const Piece& p : pieces) {
      Cursor c{t, p.ini, p.end, next, p.ini};
      split(c);
    }
    pieces.swap(next);
  }
  std::vector<std::string> words;
  words.reserve(pieces.size());
  for (const Piece& p : pieces) {
    std::string w;
    for (size_t i = p.ini; i < p.end; ++i) uni::append_utf8(w, t.cp[i]);
    words.push_back(std::move(w));
  }
  return words;
}

}  // namespace kvscope::tok::detail
