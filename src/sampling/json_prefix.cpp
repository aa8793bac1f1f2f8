#include "sampling/json_prefix.h"

namespace kvscope {

namespace {

constexpr std::string_view kLiterals[] = {"true", "false", "null"};

bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
int hex_value(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool JsonPrefix::whitespace(unsigned char c) {
  if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  return max_ws_ <= 0 || ++ws_run_ <= max_ws_;
}

bool JsonPrefix::open(bool object) {
  if (depth_ >= kMaxDepth) return false;
  if (object)
    objects_ |= uint64_t{1} << depth_;
  else
    objects_ &= ~(uint64_t{1} << depth_);
  ++depth_;
  st_ = object ? St::FirstKeyOrEnd : St::FirstValueOrEnd;
  return true;
}

bool JsonPrefix::close(bool object) {
  if (depth_ == 0 || (((objects_ >> (depth_ - 1)) & 1) != 0) != object) return false;
  --depth_;
  st_ = St::AfterValue;
  return true;
}

bool JsonPrefix::value_start(unsigned char c) {
  if (object_only_ && depth_ == 0) return c == '{' && open(true);
  switch (c) {
    case '{': return open(true);
    case '[': return open(false);
    case '"': key_ = false; st_ = St::Str; return true;
    case '-': st_ = St::NumMinus; return true;
    case '0': st_ = St::NumZero; return true;
    case 't': lit_ = 0; lit_pos_ = 1; st_ = St::Lit; return true;
    case 'f': lit_ = 1; lit_pos_ = 1; st_ = St::Lit; return true;
    case 'n': lit_ = 2; lit_pos_ = 1; st_ = St::Lit; return true;
    default:
      if (c >= '1' && c <= '9') {
        st_ = St::NumInt;
        return true;
      }
      return false;
  }
}

bool JsonPrefix::after_value(unsigned char c) {
  if (whitespace(c)) return true;
  if (depth_ == 0) return false;  // the text is complete: nothing but whitespace may follow
  const bool in_object = (objects_ >> (depth_ - 1)) & 1;
  if (c == ',') {
    st_ = in_object ? St::Key : St::Value;
    return true;
  }
  if (c == '}' || c == ']') return close(c == '}');
  return false;
}

// A number ends at the first byte that cannot extend it; that byte is read as what follows a value.
bool JsonPrefix::end_number(unsigned char c) {
  st_ = St::AfterValue;
  return after_value(c);
}

bool JsonPrefix::push(unsigned char c) {
  const bool in_text = st_ == St::Str || st_ == St::StrEsc || st_ == St::StrHex || st_ == St::LowBackslash || st_ == St::LowU;
  if (!in_text && c != ' ' && c != '\t' && c != '\n' && c != '\r') ws_run_ = 0;
  switch (st_) {
    case St::Value:
      return whitespace(c) || value_start(c);
    case St::FirstValueOrEnd:
      if (whitespace(c)) return true;
      if (c == ']') return close(false);
      return value_start(c);
    case St::FirstKeyOrEnd:
      if (whitespace(c)) return true;
      if (c == '}') return close(true);
      [[fallthrough]];
    case St::Key:
      if (whitespace(c)) return true;
      if (c != '"') return false;
      key_ = true;
      st_ = St::Str;
      return true;
    case St::Colon:
      if (whitespace(c)) return true;
      if (c != ':') return false;
      st_ = St::Value;
      return true;
    case St::AfterValue:
      return after_value(c);
    case St::Str:
      if (utf8_need_ > 0) {
        if (c < utf8_lo_ || c > utf8_hi_) return false;
        --utf8_need_;
        utf8_lo_ = 0x80, utf8_hi_ = 0xBF;
        return true;
      }
      if (c == '"') {
        st_ = key_ ? St::Colon : St::AfterValue;
        return true;
      }
      if (c == '\\') {
        st_ = St::StrEsc;
        return true;
      }
      if (c < 0x20) return false;  // control characters must be escaped
      if (c < 0x80) return true;
      // UTF-8 lead bytes, with the ranges that rule out overlong forms and surrogates.
      if (c >= 0xC2 && c <= 0xDF) {
        utf8_need_ = 1;
      } else if (c >= 0xE0 && c <= 0xEF) {
        utf8_need_ = 2;
        if (c == 0xE0) utf8_lo_ = 0xA0;
        if (c == 0xED) utf8_hi_ = 0x9F;
      } else if (c >= 0xF0 && c <= 0xF4) {
        utf8_need_ = 3;
        if (c == 0xF0) utf8_lo_ = 0x90;
        if (c == 0xF4) utf8_hi_ = 0x8F;
      } else {
        return false;
      }
      return true;
    case St::StrEsc:
      if (c == 'u') {
        st_ = St::StrHex;
        hex_ = 0;
        low_ = false;
        return true;
      }
      if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') {
        st_ = St::Str;
        return true;
      }
      return false;
    case St::StrHex: {
      const int v = hex_value(c);
      if (v < 0) return false;
      if (hex_ == 0) {
        if (low_ && v != 0xD) return false;
        hi_ = static_cast<uint8_t>(v);
      } else if (hex_ == 1 && hi_ == 0xD) {
        // D8-DB: a high surrogate (a low half must follow); DC-DF: a low half, only right after one.
        if (low_ != (v >= 0xC)) return false;
        if (!low_ && v >= 0x8) hi_ = 0x10;  // remember: high surrogate
      } else if (hex_ == 1 && low_) {
        return false;
      }
      if (++hex_ < 4) return true;
      if (hi_ == 0x10) {
        st_ = St::LowBackslash;
        return true;
      }
      st_ = St::Str;
      return true;
    }
    case St::LowBackslash:
      if (c != '\\') return false;
      st_ = St::LowU;
      return true;
    case St::LowU:
      if (c != 'u') return false;
      st_ = St::StrHex;
      hex_ = 0;
      low_ = true;
      return true;
    case St::NumMinus:
      if (c == '0') {
        st_ = St::NumZero;
        return true;
      }
      if (c >= '1' && c <= '9') {
        st_ = St::NumInt;
        return true;
      }
      return false;
    case St::NumZero:
    case St::NumInt:
      if (is_digit(c)) return st_ == St::NumInt;  // no leading zeros
      if (c == '.') {
        st_ = St::NumDot;
        return true;
      }
      if (c == 'e' || c == 'E') {
        st_ = St::NumE;
        return true;
      }
      return end_number(c);
    case St::NumDot:
      if (!is_digit(c)) return false;
      st_ = St::NumFrac;
      return true;
    case St::NumFrac:
      if (is_digit(c)) return true;
      if (c == 'e' || c == 'E') {
        st_ = St::NumE;
        return true;
      }
      return end_number(c);
    case St::NumE:
      if (c == '+' || c == '-') {
        st_ = St::NumESign;
        return true;
      }
      [[fallthrough]];
    case St::NumESign:
      if (!is_digit(c)) return false;
      st_ = St::NumExp;
      return true;
    case St::NumExp:
      if (is_digit(c)) return true;
      return end_number(c);
    case St::Lit: {
      const std::string_view lit = kLiterals[lit_];
      if (c != static_cast<unsigned char>(lit[lit_pos_])) return false;
      if (++lit_pos_ == lit.size()) st_ = St::AfterValue;
      return true;
    }
  }
  return false;
}

bool JsonPrefix::complete() const {
  if (depth_ != 0) return false;
  return st_ == St::AfterValue || st_ == St::NumZero || st_ == St::NumInt || st_ == St::NumFrac || st_ == St::NumExp;
}

}  // namespace kvscope
