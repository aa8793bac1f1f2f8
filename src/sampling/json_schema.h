// JSON schema as a prefix language, for structured output (OpenAI's response_format json_schema).
// A schema is compiled into a small graph of nodes; a SchemaCursor walks it byte by byte and refuses
// the first byte after which no continuation could be a JSON text the schema accepts.
//
// What is generated: compact JSON (no whitespace between tokens); an object's properties in the
// schema's order, every one of them (optional ones too, which the schema allows), and no others
// (so additionalProperties: false always holds).
// Supported keywords: type (one or a list), nullable (OpenAPI's), properties, required, items,
// minItems, maxItems, enum, const, anyOf / oneOf (alternatives must start with different bytes: a
// string and a number, an object and null ..., or be objects told apart by a const first property, as
// tagged unions are), $ref into the document's $defs / definitions (not recursive); on integers and
// numbers minimum, maximum, exclusiveMinimum, exclusiveMaximum (a bounded number is written without
// an exponent); on strings minLength, maxLength (in characters), pattern (the subset of regex.h) and
// format date-time, date, time, uuid, email (a constrained string is written without \u escapes);
// and the annotations title, description, default, examples, $schema, $id, $comment,
// additionalProperties, deprecated, readOnly, writeOnly, discriminator. Any other keyword (format
// uri, multipleOf, patternProperties ...) is refused by name, so no constraint is silently dropped.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sampling/json_prefix.h"
#include "sampling/regex.h"

namespace kvscope {

class JsonSchema {
 public:
  // Throws InputError naming the keyword or the place in the schema it cannot serve. Ordered: an
  // object's properties are generated in the order the schema gives them.
  explicit JsonSchema(const nlohmann::ordered_json& schema);

  enum class Kind : uint8_t {
    Lit,     // fixed bytes (punctuation, a property's name)
    Seq,     // children in order (an object)
    Alt,     // one child, chosen by its first byte
    LitSet,  // one of several fixed texts (enum, boolean)
    Str,     // any JSON string
    Int,     // a JSON number without fraction or exponent
    Num,     // any JSON number
    Any,     // any JSON value
    AnyObj,  // any JSON object
    Arr,     // '[' items ']' with min/max counts
    BInt,    // an integer within bounds
    BNum,    // a number within bounds, without exponent
    CStr,    // a string with a length range and/or a pattern
    Switch,  // one of several fixed texts (children), each followed by its own rest (conts)
  };
  struct Node {
    Kind kind = Kind::Any;
    std::string text;                  // Lit
    std::vector<int> children;         // Seq, Alt, LitSet (Lit nodes), Arr (the item)
    int min_items = 0, max_items = -1;  // Arr; -1: no maximum
    std::vector<bool> first;           // bytes a value of this node may start with (256)
    // BInt, BNum: the bounds (has_*: given; *_excl: exclusive).
    bool has_min = false, has_max = false, min_excl = false, max_excl = false;
    long double min = 0, max = 0;
    int min_len = 0, max_len = -1;  // CStr, in characters; -1: no maximum
    int dfa = -1;                   // CStr: the pattern's automaton (dfa(i)); -1: none
    std::vector<int> conts;         // Switch: the rest after each text
    std::vector<std::string> keys;  // Seq made from an object: its property names (children: "{", then key, value pairs)
  };
  const Node& node(int i) const { return nodes_[static_cast<size_t>(i)]; }
  int root() const { return root_; }
  const RegexDfa& dfa(int i) const { return dfas_[static_cast<size_t>(i)]; }

 private:
  int compile(const nlohmann::ordered_json& s, const nlohmann::ordered_json& doc, const std::string& where, int depth);
  int add(Node n);
  int lit(const std::string& text);
  int lit_set(const std::vector<std::string>& texts, const std::string& where);
  int alternatives(std::vector<int> kids, const std::string& where);
  int object(const std::vector<std::string>& keys, const std::vector<int>& values);
  int tagged_union(const std::vector<int>& objects);  // -1: they are not told apart by a const property
  int string_node(const nlohmann::ordered_json& s, const std::string& where);
  int number_node(const nlohmann::ordered_json& s, const std::string& where, bool integer);
  std::vector<Node> nodes_;
  std::vector<RegexDfa> dfas_;
  int root_ = -1;
};

// A position in a compiled schema: a stack of nodes being read, and the JSON syntax state of the
// value being read at the top (strings, numbers, free values). Trivially copyable (under 1 KB), so
// masks try tokens on copies.
class SchemaCursor {
 public:
  static constexpr int kMaxFrames = 48;
  SchemaCursor() = default;
  explicit SchemaCursor(const JsonSchema& s);
  bool push(unsigned char c);
  bool push(std::string_view s) {
    for (unsigned char c : s)
      if (!push(c)) return false;
    return true;
  }
  bool ended() const { return depth_ == 0; }

 private:
  struct Frame {
    int16_t node = 0;
    int16_t pos = 0;    // Lit/LitSet: bytes read; Seq: next child; Arr: phase; leaves: bytes read
    int16_t count = 0;  // Arr: items begun
    uint64_t alive = 0;  // LitSet: alternatives still possible
  };
  bool enter(int node);
  void settle();  // pops the frames that are complete and cannot grow
  // BInt / BNum / CStr at the top: push a byte, whether the value may end here, whether it must.
  bool bounded_push(const JsonSchema::Node& n, unsigned char c);
  bool bounded_complete(const JsonSchema::Node& n) const;
  bool bounded_ended(const JsonSchema::Node& n) const;
  const JsonSchema* schema_ = nullptr;
  Frame frames_[kMaxFrames];
  int depth_ = 0;
  JsonPrefix leaf_;  // the Str / Int / Num / Any / AnyObj value at the top
  // The BInt / BNum / CStr value at the top.
  struct Bounded {
    char text[40] = {};  // numbers: the text so far
    uint8_t len = 0;
    uint8_t phase = 0;  // strings: 0 before the quote, 1 inside, 2 after '\', 3 closed
    uint8_t utf8_need = 0, utf8_lo = 0x80, utf8_hi = 0xBF;
    int32_t state = 0;  // the pattern automaton's state
    int32_t chars = 0;  // characters read
  } b_;
};

}  // namespace kvscope
