#include "sampling/json_schema.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "util/error.h"

namespace kvscope {

namespace {

using ojson = nlohmann::ordered_json;
using Kind = JsonSchema::Kind;

constexpr int kMaxSchemaDepth = 32;
constexpr size_t kMaxAlternatives = 64;  // LitSet keeps its live alternatives in a 64-bit mask

const std::set<std::string> kServed = {"type", "properties", "required", "items", "minItems", "maxItems", "enum",
                                       "const", "anyOf", "oneOf", "$ref", "$defs", "definitions"};
const std::set<std::string> kAnnotations = {"title", "description", "default", "examples", "$schema", "$id", "$comment",
                                            "additionalProperties", "deprecated", "readOnly", "writeOnly"};

[[noreturn]] void refuse(const std::string& where, const std::string& why) {
  throw InputError("JSON schema at " + where + ": " + why);
}

std::vector<bool> first_of_kind(Kind k) {
  std::vector<bool> f(256, false);
  auto digits = [&] {
    f['-'] = true;
    for (int c = '0'; c <= '9'; ++c) f[static_cast<size_t>(c)] = true;
  };
  switch (k) {
    case Kind::Str: f['"'] = true; break;
    case Kind::Int:
    case Kind::Num: digits(); break;
    case Kind::AnyObj: f['{'] = true; break;
    case Kind::Arr: f['['] = true; break;
    case Kind::Any:
      digits();
      for (char c : {'{', '[', '"', 't', 'f', 'n'}) f[static_cast<unsigned char>(c)] = true;
      break;
    default: break;
  }
  return f;
}

}  // namespace

JsonSchema::JsonSchema(const nlohmann::ordered_json& schema) { root_ = compile(schema, schema, "#", 0); }

int JsonSchema::add(Node n) {
  if (nodes_.size() >= 4096) throw InputError("JSON schema: more than 4096 parts");
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size()) - 1;
}

int JsonSchema::lit(const std::string& text) {
  Node n;
  n.kind = Kind::Lit;
  n.text = text;
  n.first.assign(256, false);
  n.first[static_cast<unsigned char>(text[0])] = true;
  return add(std::move(n));
}

int JsonSchema::compile(const ojson& s, const ojson& doc, const std::string& where, int depth) {
  if (depth > kMaxSchemaDepth) refuse(where, "nested deeper than " + std::to_string(kMaxSchemaDepth) + " (a recursive $ref?)");
  if (s.is_boolean()) {
    if (!s.get<bool>()) refuse(where, "'false' accepts nothing");
    Node n;
    n.kind = Kind::Any;
    n.first = first_of_kind(Kind::Any);
    return add(std::move(n));
  }
  if (!s.is_object()) refuse(where, "a schema must be an object");
  for (const auto& [k, v] : s.items())
    if (!kServed.count(k) && !kAnnotations.count(k)) refuse(where, "keyword '" + k + "' is not supported");
  auto sub = [&](const ojson& x, const std::string& at) { return compile(x, doc, at, depth + 1); };

  if (s.contains("$ref")) {
    const ojson& r = s["$ref"];
    if (!r.is_string()) refuse(where, "$ref must be a string");
    const std::string ref = r.get<std::string>();
    for (const char* base : {"#/$defs/", "#/definitions/"}) {
      const std::string b = base;
      if (ref.rfind(b, 0) != 0) continue;
      const std::string name = ref.substr(b.size());
      const ojson& defs = doc.value(b.substr(2, b.size() - 3), ojson::object());
      if (!defs.is_object() || !defs.contains(name)) refuse(where, "$ref '" + ref + "' names nothing in the document");
      return sub(defs[name], ref);
    }
    refuse(where, "$ref '" + ref + "': only references into the document's $defs or definitions are supported");
  }
  // A set of fixed texts (enum, const, boolean): one LitSet.
  auto lit_set = [&](const std::vector<std::string>& texts) {
    if (texts.empty()) refuse(where, "enum is empty");
    if (texts.size() > kMaxAlternatives) refuse(where, "enum has more than 64 values");
    Node n;
    n.kind = Kind::LitSet;
    n.first.assign(256, false);
    for (const auto& t : texts) {
      n.children.push_back(lit(t));
      n.first[static_cast<unsigned char>(t[0])] = true;
    }
    return add(std::move(n));
  };
  if (s.contains("const")) return lit(s["const"].dump());
  if (s.contains("enum")) {
    const ojson& e = s["enum"];
    if (!e.is_array()) refuse(where, "enum must be an array");
    std::vector<std::string> texts;
    for (const auto& v : e) texts.push_back(v.dump());
    std::sort(texts.begin(), texts.end());
    texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
    return lit_set(texts);
  }
  // Alternatives: chosen by their first byte, so they must not share one; fixed texts merge into one set.
  auto alternatives = [&](const std::vector<int>& kids) {
    bool all_fixed = true;
    std::vector<std::string> texts;
    for (int k : kids) {
      const Node& n = nodes_[static_cast<size_t>(k)];
      if (n.kind == Kind::Lit) texts.push_back(n.text);
      else if (n.kind == Kind::LitSet)
        for (int c : n.children) texts.push_back(nodes_[static_cast<size_t>(c)].text);
      else all_fixed = false;
    }
    if (all_fixed) {
      std::sort(texts.begin(), texts.end());
      texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
      return lit_set(texts);
    }
    Node n;
    n.kind = Kind::Alt;
    n.first.assign(256, false);
    for (size_t i = 0; i < kids.size(); ++i) {
      const auto& f = nodes_[static_cast<size_t>(kids[i])].first;
      for (int c = 0; c < 256; ++c) {
        if (!f[static_cast<size_t>(c)]) continue;
        if (n.first[static_cast<size_t>(c)])
          refuse(where, "alternatives " + std::to_string(i) + " and an earlier one can both start with '" +
                            std::string(1, static_cast<char>(c)) +
                            "': kvscope tells alternatives apart by their first byte (a string or null, an object or an array ...)");
        n.first[static_cast<size_t>(c)] = true;
      }
    }
    n.children = kids;
    return add(std::move(n));
  };
  for (const char* k : {"anyOf", "oneOf"}) {
    if (!s.contains(k)) continue;
    const ojson& a = s[k];
    if (!a.is_array() || a.empty()) refuse(where, std::string(k) + " must be a non-empty array");
    std::vector<int> kids;
    for (size_t i = 0; i < a.size(); ++i) kids.push_back(sub(a[i], where + "/" + k + "/" + std::to_string(i)));
    return alternatives(kids);
  }

  // One type (or each of a list of types, as alternatives).
  auto of_type = [&](const std::string& t) -> int {
    Node n;
    if (t == "string") {
      n.kind = Kind::Str;
    } else if (t == "integer") {
      n.kind = Kind::Int;
    } else if (t == "number") {
      n.kind = Kind::Num;
    } else if (t == "boolean") {
      return lit_set({"false", "true"});
    } else if (t == "null") {
      return lit("null");
    } else if (t == "array") {
      n.kind = Kind::Arr;
      n.children.push_back(s.contains("items") ? sub(s["items"], where + "/items") : sub(ojson(true), where + "/items"));
      auto count = [&](const char* k, int dflt) {
        if (!s.contains(k)) return dflt;
        // Built schemas hold signed integers, parsed ones unsigned: both count.
        if (!s[k].is_number_integer() || s[k].get<int64_t>() < 0 || s[k].get<int64_t>() > 4096)
          refuse(where, std::string(k) + " must be 0 to 4096");
        return static_cast<int>(s[k].get<int64_t>());
      };
      n.min_items = count("minItems", 0);
      n.max_items = count("maxItems", -1);
      if (n.max_items >= 0 && n.max_items < n.min_items) refuse(where, "maxItems is below minItems");
    } else if (t == "object") {
      if (!s.contains("properties") || s["properties"].empty()) {
        n.kind = Kind::AnyObj;
      } else {
        const ojson& props = s["properties"];
        if (!props.is_object()) refuse(where, "properties must be an object");
        if (s.contains("required")) {
          if (!s["required"].is_array()) refuse(where, "required must be an array");
          for (const auto& r : s["required"])
            if (!r.is_string() || !props.contains(r.get<std::string>()))
              refuse(where, "required names '" + r.dump() + "', which is not among the properties");
        }
        n.kind = Kind::Seq;
        n.children.push_back(lit("{"));
        bool first = true;
        for (const auto& [name, ps] : props.items()) {
          n.children.push_back(lit((first ? "" : ",") + ojson(name).dump() + ":"));
          n.children.push_back(sub(ps, where + "/properties/" + name));
          first = false;
        }
        n.children.push_back(lit("}"));
        n.first.assign(256, false);
        n.first['{'] = true;
        return add(std::move(n));
      }
    } else {
      refuse(where, "unknown type '" + t + "'");
    }
    n.first = first_of_kind(n.kind);
    return add(std::move(n));
  };
  if (s.contains("type")) {
    const ojson& t = s["type"];
    if (t.is_string()) return of_type(t.get<std::string>());
    if (!t.is_array() || t.empty()) refuse(where, "type must be a string or a non-empty array of strings");
    std::vector<int> kids;
    for (const auto& x : t) {
      if (!x.is_string()) refuse(where, "type must be a string or a non-empty array of strings");
      kids.push_back(of_type(x.get<std::string>()));
    }
    return kids.size() == 1 ? kids[0] : alternatives(kids);
  }
  if (s.contains("properties")) return of_type("object");
  if (s.contains("items")) return of_type("array");
  Node any;  // no type: any value
  any.kind = Kind::Any;
  any.first = first_of_kind(Kind::Any);
  return add(std::move(any));
}

// ---- the cursor ----

SchemaCursor::SchemaCursor(const JsonSchema& s) : schema_(&s) { enter(s.root()); }

bool SchemaCursor::enter(int node) {
  if (depth_ >= kMaxFrames) return false;
  Frame& f = frames_[depth_++];
  f = Frame{};
  f.node = static_cast<int16_t>(node);
  const auto& n = schema_->node(node);
  switch (n.kind) {
    case JsonSchema::Kind::LitSet:
      f.alive = n.children.size() >= 64 ? ~uint64_t{0} : (uint64_t{1} << n.children.size()) - 1;
      break;
    case JsonSchema::Kind::Str:
    case JsonSchema::Kind::Int:
    case JsonSchema::Kind::Num:
    case JsonSchema::Kind::Any:
    case JsonSchema::Kind::AnyObj:
      leaf_ = JsonPrefix(n.kind == JsonSchema::Kind::AnyObj, 16);
      break;
    default: break;
  }
  return true;
}

void SchemaCursor::settle() {
  while (depth_ > 0) {
    const Frame& f = frames_[depth_ - 1];
    const auto& n = schema_->node(f.node);
    if (n.kind != JsonSchema::Kind::Seq || f.pos < static_cast<int>(n.children.size())) return;
    --depth_;
  }
}

bool SchemaCursor::push(unsigned char c) {
  using K = JsonSchema::Kind;
  // Each pass either consumes c or moves down/up one frame; bounded for safety.
  for (int pass = 0; pass < 4 * kMaxFrames + 8; ++pass) {
    if (depth_ == 0) return false;  // the value is whole: nothing may follow
    Frame& f = frames_[depth_ - 1];
    const auto& n = schema_->node(f.node);
    switch (n.kind) {
      case K::Lit:
        if (c != static_cast<unsigned char>(n.text[static_cast<size_t>(f.pos)])) return false;
        if (++f.pos == static_cast<int>(n.text.size())) {
          --depth_;
          settle();
        }
        return true;
      case K::Seq:
        if (f.pos >= static_cast<int>(n.children.size())) {
          --depth_;
          continue;
        }
        if (!enter(n.children[static_cast<size_t>(f.pos++)])) return false;
        continue;
      case K::Alt: {
        int pick = -1;
        for (int k : n.children)
          if (schema_->node(k).first[c]) pick = k;
        if (pick < 0) return false;
        --depth_;
        if (!enter(pick)) return false;
        continue;
      }
      case K::LitSet: {
        uint64_t next = 0;
        bool whole = false;
        for (size_t i = 0; i < n.children.size(); ++i) {
          if (!((f.alive >> i) & 1)) continue;
          const std::string& t = schema_->node(n.children[i]).text;
          if (static_cast<size_t>(f.pos) < t.size() && static_cast<unsigned char>(t[static_cast<size_t>(f.pos)]) == c)
            next |= uint64_t{1} << i;
          if (static_cast<size_t>(f.pos) == t.size()) whole = true;
        }
        if (next) {
          f.alive = next;
          ++f.pos;
          // One text left and read whole: nothing can extend it.
          if ((next & (next - 1)) == 0) {
            size_t i = 0;
            while (!((next >> i) & 1)) ++i;
            if (schema_->node(n.children[i]).text.size() == static_cast<size_t>(f.pos)) {
              --depth_;
              settle();
            }
          }
          return true;
        }
        if (whole) {  // a text ended here (as "1" may, where "12" is also allowed): c follows it
          --depth_;
          continue;
        }
        return false;
      }
      case K::Str:
      case K::Int:
      case K::Num:
      case K::Any:
      case K::AnyObj: {
        const bool fresh = f.pos == 0;
        // Compact output: no whitespace around the value (inside an Any value's brackets it is free).
        const bool outer_ws = (c == ' ' || c == '\t' || c == '\n' || c == '\r') && leaf_.depth() == 0 && !leaf_.in_string();
        const bool extends = (!fresh || n.first[c]) && !outer_ws && !(n.kind == K::Int && (c == '.' || c == 'e' || c == 'E'));
        JsonPrefix t = leaf_;
        if (extends && t.push(c)) {
          leaf_ = t;
          f.pos = 1;
          if (leaf_.ended()) {
            --depth_;
            settle();
          }
          return true;
        }
        if (!fresh && leaf_.complete()) {  // a number ended: c follows it
          --depth_;
          continue;
        }
        return false;
      }
      case K::Arr:
        switch (f.pos) {
          case 0:
            if (c != '[') return false;
            f.pos = 1;
            return true;
          case 1:
            if (c == ']' && n.min_items == 0) {
              --depth_;
              settle();
              return true;
            }
            if (n.max_items == 0) return false;
            f.count = 1;
            f.pos = 2;
            if (!enter(n.children[0])) return false;
            continue;
          case 2:
            if (c == ',' && (n.max_items < 0 || f.count < n.max_items)) {
              f.pos = 3;
              return true;
            }
            if (c == ']' && f.count >= n.min_items) {
              --depth_;
              settle();
              return true;
            }
            return false;
          default:
            ++f.count;
            f.pos = 2;
            if (!enter(n.children[0])) return false;
            continue;
        }
    }
  }
  return false;
}

}  // namespace kvscope
