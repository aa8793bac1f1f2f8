// JSON schema as a prefix language, for structured output (OpenAI's response_format json_schema).
// A schema is compiled into a small graph of nodes; a SchemaCursor walks it byte by byte and refuses
// the first byte after which no continuation could be a JSON text the schema accepts.
//
// What is generated: compact JSON (no whitespace between tokens); an object's properties in the
// schema's order, every one of them (optional ones too, which the schema allows), and no others.
// Supported keywords: type (one or a list), properties, required, items, minItems, maxItems, enum,
// const, anyOf / oneOf (alternatives must start with different bytes: a string and a number, an
// object and null ...), $ref into the document's $defs / definitions (not recursive), and the
// annotations title, description, default, examples, $schema, $id, $comment, additionalProperties,
// deprecated, readOnly, writeOnly. Any other keyword (pattern, format, minimum ...) is refused by
// name, so no constraint is silently dropped.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sampling/json_prefix.h"

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
  };
  struct Node {
    Kind kind = Kind::Any;
    std::string text;                  // Lit
    std::vector<int> children;         // Seq, Alt, LitSet (Lit nodes), Arr (the item)
    int min_items = 0, max_items = -1;  // Arr; -1: no maximum
    std::vector<bool> first;           // bytes a value of this node may start with (256)
  };
  const Node& node(int i) const { return nodes_[static_cast<size_t>(i)]; }
  int root() const { return root_; }

 private:
  int compile(const nlohmann::ordered_json& s, const nlohmann::ordered_json& doc, const std::string& where, int depth);
  int add(Node n);
  int lit(const std::string& text);
  std::vector<Node> nodes_;
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
  const JsonSchema* schema_ = nullptr;
  Frame frames_[kMaxFrames];
  int depth_ = 0;
  JsonPrefix leaf_;  // the Str / Int / Num / Any / AnyObj value at the top
};

}  // namespace kvscope
