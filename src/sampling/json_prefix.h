// JSON as a prefix language: reads a text byte by byte and refuses the first byte after which no
// continuation could make it a JSON text (RFC 8259: objects, arrays, strings with escapes and
// UTF-8 checked, numbers, true/false/null). The state is a few bytes (nesting is a bit stack), so a
// copy per candidate token is cheap: JsonConstraint tries every token of the vocabulary on a copy.
#pragma once
#include <cstdint>
#include <string_view>

namespace kvscope {

class JsonPrefix {
 public:
  static constexpr int kMaxDepth = 64;  // deeper nesting is refused (a bound on hostile output)

  // object_only: the text must be an object (OpenAI's json_object mode). max_ws_run > 0 refuses
  // more than that many whitespace bytes in a row (a model must not pad forever); 0: any.
  explicit JsonPrefix(bool object_only = false, int max_ws_run = 0) : object_only_(object_only), max_ws_(max_ws_run) {}

  // False: the byte cannot continue the text here. The state is then unspecified: try on a copy.
  bool push(unsigned char c);
  bool push(std::string_view s) {
    for (unsigned char c : s)
      if (!push(c)) return false;
    return true;
  }
  // A whole value has been read (only whitespace may follow; a top-level number may still grow).
  bool complete() const;
  // Complete and unable to grow: only whitespace may follow.
  bool ended() const { return depth_ == 0 && st_ == St::AfterValue; }
  int depth() const { return depth_; }
  bool in_string() const {
    return st_ == St::Str || st_ == St::StrEsc || st_ == St::StrHex || st_ == St::LowBackslash || st_ == St::LowU;
  }

 private:
  enum class St : uint8_t {
    Value,            // a value must start (whitespace allowed)
    FirstValueOrEnd,  // after '[': a value or ']'
    FirstKeyOrEnd,    // after '{': a key or '}'
    Key,              // after ',' in an object
    Colon,            // after a key
    AfterValue,       // ',' or a closing bracket; at depth 0 only whitespace
    Str,              // inside a string (key_ says which)
    StrEsc,           // after '\'
    StrHex,           // \uXXXX, hex_ digits read
    LowBackslash,     // a high surrogate was read: '\' of its low half must follow
    LowU,             // ... then 'u'
    NumMinus, NumZero, NumInt, NumDot, NumFrac, NumE, NumESign, NumExp,
    Lit,              // inside true / false / null
  };
  bool value_start(unsigned char c);
  bool open(bool object);
  bool close(bool object);
  bool after_value(unsigned char c);
  bool end_number(unsigned char c);
  bool whitespace(unsigned char c);

  St st_ = St::Value;
  bool object_only_ = false;
  bool key_ = false;       // the string being read is an object key
  bool low_ = false;       // the \u escape being read must be a low surrogate
  uint8_t hex_ = 0;        // hex digits read of a \u escape
  uint8_t hi_ = 0;         // its first digit's value (surrogate checks)
  uint8_t utf8_need_ = 0;  // continuation bytes still expected
  uint8_t utf8_lo_ = 0x80, utf8_hi_ = 0xBF;  // range of the next continuation byte
  uint8_t lit_ = 0, lit_pos_ = 0;            // which literal, bytes of it read
  int depth_ = 0;
  uint64_t objects_ = 0;   // bit d set: nesting level d is an object (else an array)
  int max_ws_ = 0, ws_run_ = 0;
};

}  // namespace kvscope
