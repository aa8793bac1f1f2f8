// A regular-expression subset compiled to a DFA over UTF-8 bytes, for JSON Schema's `pattern` and
// `format` on strings (the text is the decoded string, ECMA-262 semantics: unanchored unless ^ / $).
//
// Served: literals (any UTF-8 character), escapes \d \w \s \D \W \S \. \- \/ \\ \n \t \r \uXXXX ...,
// classes [a-z0-9_] and [^...] (ASCII members), '.', groups (...) (?:...) (?<name>...), alternation,
// quantifiers * + ? {n} {n,} {n,m} (lazy forms too: they match the same strings), ^ at the start and $
// at the end. Refused by name: lookaround, backreferences, \b, \p{...}, anchors inside the pattern,
// non-ASCII class members, and patterns whose automaton would pass the size limits.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kvscope {

class RegexDfa {
 public:
  // Throws InputError("pattern '...': <what> is not supported") naming the construct.
  explicit RegexDfa(const std::string& pattern);
  // Strings accepted by both (format and pattern given together).
  static RegexDfa intersect(const RegexDfa& a, const RegexDfa& b);

  static constexpr int kDead = -1;
  int start() const { return 0; }
  int next(int state, unsigned char byte) const {
    return state < 0 ? kDead : trans_[static_cast<size_t>(state) * 256 + byte];
  }
  bool accepting(int state) const { return state >= 0 && accept_[static_cast<size_t>(state)]; }
  // Fewest characters (UTF-8 lead bytes) that lead from `state` to acceptance; -1: none.
  int min_chars(int state) const { return state < 0 ? -1 : min_chars_[static_cast<size_t>(state)]; }
  int states() const { return static_cast<int>(accept_.size()); }

 private:
  RegexDfa() = default;
  void finish();  // min_chars_ from trans_ and accept_
  std::vector<int32_t> trans_;  // (state, byte) -> state or kDead
  std::vector<uint8_t> accept_;
  std::vector<int32_t> min_chars_;
};

}  // namespace kvscope
