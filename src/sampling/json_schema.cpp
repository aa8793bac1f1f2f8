#include "sampling/json_schema.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>
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
                                       "const", "anyOf", "oneOf", "$ref", "$defs", "definitions", "nullable",
                                       "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
                                       "maxLength", "pattern", "format"};
const std::set<std::string> kAnnotations = {"title", "description", "default", "examples", "$schema", "$id", "$comment",
                                            "additionalProperties", "deprecated", "readOnly", "writeOnly", "discriminator"};

// The formats served, as patterns over the decoded string: RFC 3339 dates (the days each month has;
// February 29 is left out rather than checking leap years) and times (seconds and an offset
// required), RFC 4122 UUIDs, and e-mail addresses in the common dot-atom form. Each accepts only
// valid values; a few valid ones (February 29, leap seconds, quoted local parts) are never written.
#define KVSCOPE_DATE "\\d{4}-((0[13578]|1[02])-(0[1-9]|[12]\\d|3[01])|(0[469]|11)-(0[1-9]|[12]\\d|30)|02-(0[1-9]|1\\d|2[0-8]))"
#define KVSCOPE_TIME "([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,9})?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)"
const char* format_pattern(const std::string& f) {
  if (f == "date-time") return "^" KVSCOPE_DATE "T" KVSCOPE_TIME "$";
  if (f == "date") return "^" KVSCOPE_DATE "$";
  if (f == "time") return "^" KVSCOPE_TIME "$";
  if (f == "uuid") return R"(^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$)";
  if (f == "email")
    return R"(^[A-Za-z0-9_+-]+(\.[A-Za-z0-9_+-]+)*@[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,24}$)";
  return nullptr;
}
#undef KVSCOPE_DATE
#undef KVSCOPE_TIME

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
    case Kind::Str:
    case Kind::CStr: f['"'] = true; break;
    case Kind::Int:
    case Kind::Num:
    case Kind::BInt:
    case Kind::BNum: digits(); break;
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

// A set of fixed texts (enum, const, boolean): one LitSet.
int JsonSchema::lit_set(const std::vector<std::string>& texts, const std::string& where) {
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
}

// An object's bytes: '{', then each property's key (with its comma) and value, then '}'.
int JsonSchema::object(const std::vector<std::string>& keys, const std::vector<int>& values) {
  Node n;
  n.kind = Kind::Seq;
  n.keys = keys;
  n.children.push_back(lit("{"));
  for (size_t i = 0; i < keys.size(); ++i) {
    std::string key = i ? "," : "";
    key += ojson(keys[i]).dump();
    key += ':';
    n.children.push_back(lit(key));
    n.children.push_back(values[i]);
  }
  n.children.push_back(lit("}"));
  n.first.assign(256, false);
  n.first['{'] = true;
  return add(std::move(n));
}

// Objects told apart by a property every one of them fixes to a different constant (a tagged union,
// as zod's discriminatedUnion and Pydantic's discriminator write them, and the forced tool call's
// name): that property is written first, and the rest of the object follows from its value.
int JsonSchema::tagged_union(const std::vector<int>& objects) {
  for (const std::string& key : nodes_[static_cast<size_t>(objects[0])].keys) {
    std::vector<std::string> texts;
    std::vector<int> conts;
    bool ok = true;
    for (int o : objects) {
      const Node obj = nodes_[static_cast<size_t>(o)];  // a copy: add() below may move the nodes
      const auto it = std::find(obj.keys.begin(), obj.keys.end(), key);
      if (obj.kind != Kind::Seq || it == obj.keys.end()) {
        ok = false;
        break;
      }
      const size_t k = static_cast<size_t>(it - obj.keys.begin());
      const Node& v = nodes_[static_cast<size_t>(obj.children[2 * k + 2])];
      std::string text;
      if (v.kind == Kind::Lit) text = v.text;
      else if (v.kind == Kind::LitSet && v.children.size() == 1) text = nodes_[static_cast<size_t>(v.children[0])].text;
      else {
        ok = false;
        break;
      }
      // The rest: the other properties in their order, each after a comma (the tag comes first).
      Node rest;
      rest.kind = Kind::Seq;
      for (size_t i = 0; i < obj.keys.size(); ++i) {
        if (i == k) continue;
        std::string text = ",";
        text += ojson(obj.keys[i]).dump();
        text += ':';
        rest.children.push_back(lit(text));
        rest.children.push_back(obj.children[2 * i + 2]);
      }
      rest.children.push_back(lit("}"));
      rest.first.assign(256, false);
      rest.first[static_cast<unsigned char>(nodes_[static_cast<size_t>(rest.children[0])].text[0])] = true;
      texts.push_back(text);
      conts.push_back(add(std::move(rest)));
    }
    if (!ok) continue;
    // Prefix-free texts (no value is the start of another): the tag is known when its text is whole.
    for (size_t i = 0; i < texts.size() && ok; ++i)
      for (size_t j = 0; j < texts.size() && ok; ++j)
        if (i != j && texts[j].rfind(texts[i], 0) == 0) ok = false;
    if (!ok || texts.size() > kMaxAlternatives) continue;
    Node sw;
    sw.kind = Kind::Switch;
    sw.first.assign(256, false);
    for (size_t i = 0; i < texts.size(); ++i) {
      sw.children.push_back(lit(texts[i]));
      sw.first[static_cast<unsigned char>(texts[i][0])] = true;
    }
    sw.conts = conts;
    const int swi = add(std::move(sw));
    Node head;
    head.kind = Kind::Seq;
    std::string open = "{";
    open += ojson(key).dump();
    open += ':';
    head.children = {lit(open), swi};
    head.first.assign(256, false);
    head.first['{'] = true;
    return add(std::move(head));
  }
  return -1;
}

// Alternatives: chosen by their first byte, so they must not share one; fixed texts merge into one set,
// and objects into a tagged union.
int JsonSchema::alternatives(std::vector<int> kids, const std::string& where) {
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
    return lit_set(texts, where);
  }
  std::vector<int> objects;
  for (int k : kids)
    if (nodes_[static_cast<size_t>(k)].kind == Kind::Seq && !nodes_[static_cast<size_t>(k)].keys.empty()) objects.push_back(k);
  if (objects.size() > 1) {
    const int u = tagged_union(objects);
    if (u >= 0) {
      std::vector<int> rest = {u};
      for (int k : kids)
        if (std::find(objects.begin(), objects.end(), k) == objects.end()) rest.push_back(k);
      if (rest.size() == 1) return u;
      kids = rest;
    }
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
                          "': kvscope tells alternatives apart by their first byte (a string or null, an object or an array "
                          "...) or, for objects, by a property fixed to a different const in each");
      n.first[static_cast<size_t>(c)] = true;
    }
  }
  n.children = kids;
  return add(std::move(n));
}

int JsonSchema::number_node(const ojson& s, const std::string& where, bool integer) {
  Node n;
  auto read = [&](const char* k, long double* v) {
    if (!s.contains(k)) return false;
    if (!s[k].is_number()) refuse(where, std::string(k) + " must be a number");
    if (s[k].is_number_unsigned()) *v = static_cast<long double>(s[k].get<uint64_t>());
    else if (s[k].is_number_integer()) *v = static_cast<long double>(s[k].get<int64_t>());
    else *v = static_cast<long double>(s[k].get<double>());
    return true;
  };
  long double lo = 0, hi = 0, xlo = 0, xhi = 0;
  bool has_lo = read("minimum", &lo), has_hi = read("maximum", &hi);
  bool lo_x = false, hi_x = false;
  // Draft 4 (and OpenAPI 3.0) write exclusiveMinimum as a boolean beside minimum.
  for (const char* k : {"exclusiveMinimum", "exclusiveMaximum"}) {
    if (!s.contains(k) || !s[k].is_boolean()) continue;
    const bool is_min = std::string_view(k) == "exclusiveMinimum";
    if (s[k].get<bool>()) (is_min ? lo_x : hi_x) = true;
  }
  if ((!s.contains("exclusiveMinimum") || !s["exclusiveMinimum"].is_boolean()) && read("exclusiveMinimum", &xlo) &&
      (!has_lo || xlo >= lo)) {
    lo = xlo;
    has_lo = lo_x = true;
  }
  if ((!s.contains("exclusiveMaximum") || !s["exclusiveMaximum"].is_boolean()) && read("exclusiveMaximum", &xhi) &&
      (!has_hi || xhi <= hi)) {
    hi = xhi;
    has_hi = hi_x = true;
  }
  if (!has_lo && !has_hi) {
    n.kind = integer ? Kind::Int : Kind::Num;
    n.first = first_of_kind(n.kind);
    return add(std::move(n));
  }
  if (integer) {  // inclusive integer bounds
    if (has_lo) lo = lo_x ? std::floor(lo) + 1 : std::ceil(lo);
    if (has_hi) hi = hi_x ? std::ceil(hi) - 1 : std::floor(hi);
    lo_x = hi_x = false;
    if (has_lo && has_hi && lo > hi) refuse(where, "no integer lies between the minimum and the maximum");
  } else if (has_lo && has_hi && (lo > hi || (lo == hi && (lo_x || hi_x)))) {
    refuse(where, "no number lies between the minimum and the maximum");
  }
  n.kind = integer ? Kind::BInt : Kind::BNum;
  n.has_min = has_lo;
  n.has_max = has_hi;
  n.min = lo;
  n.max = hi;
  n.min_excl = lo_x;
  n.max_excl = hi_x;
  n.first = first_of_kind(n.kind);
  if (has_lo && lo >= 0) n.first['-'] = false;
  return add(std::move(n));
}

int JsonSchema::string_node(const ojson& s, const std::string& where) {
  Node n;
  auto count = [&](const char* k, int dflt) {
    if (!s.contains(k)) return dflt;
    if (!s[k].is_number_integer() || s[k].get<int64_t>() < 0 || s[k].get<int64_t>() > 1000000)
      refuse(where, std::string(k) + " must be 0 to 1000000");
    return static_cast<int>(s[k].get<int64_t>());
  };
  n.min_len = count("minLength", 0);
  n.max_len = count("maxLength", -1);
  if (n.max_len >= 0 && n.max_len < n.min_len) refuse(where, "maxLength is below minLength");
  std::vector<RegexDfa> parts;
  if (s.contains("format")) {
    if (!s["format"].is_string()) refuse(where, "format must be a string");
    const std::string f = s["format"].get<std::string>();
    const char* p = format_pattern(f);
    if (!p) refuse(where, "format '" + f + "' is not supported (served: date-time, date, time, uuid, email)");
    parts.emplace_back(p);
  }
  if (s.contains("pattern")) {
    if (!s["pattern"].is_string()) refuse(where, "pattern must be a string");
    try {
      parts.emplace_back(s["pattern"].get<std::string>());
    } catch (const InputError& e) {
      refuse(where, e.what());
    }
  }
  if (parts.empty() && n.min_len == 0 && n.max_len < 0) {
    n.kind = Kind::Str;
    n.first = first_of_kind(n.kind);
    return add(std::move(n));
  }
  if (!parts.empty()) {
    RegexDfa d = parts.size() == 2 ? RegexDfa::intersect(parts[0], parts[1]) : parts[0];
    if (d.min_chars(d.start()) < 0) refuse(where, "the pattern and format accept no string together");
    if (n.max_len >= 0 && d.min_chars(d.start()) > n.max_len)
      refuse(where, "the pattern needs more characters than maxLength allows");
    dfas_.push_back(std::move(d));
    n.dfa = static_cast<int>(dfas_.size()) - 1;
  }
  n.kind = Kind::CStr;
  n.first = first_of_kind(n.kind);
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

  // OpenAPI's nullable: the schema, or null.
  if (s.contains("nullable")) {
    if (!s["nullable"].is_boolean()) refuse(where, "nullable must be a boolean");
    ojson rest = s;
    rest.erase("nullable");
    const int k = compile(rest, doc, where, depth);
    if (!s["nullable"].get<bool>() || nodes_[static_cast<size_t>(k)].first['n']) return k;
    return alternatives({k, lit("null")}, where);
  }

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
  if (s.contains("const")) return lit(s["const"].dump());
  if (s.contains("enum")) {
    const ojson& e = s["enum"];
    if (!e.is_array()) refuse(where, "enum must be an array");
    std::vector<std::string> texts;
    for (const auto& v : e) texts.push_back(v.dump());
    std::sort(texts.begin(), texts.end());
    texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
    return lit_set(texts, where);
  }
  for (const char* k : {"anyOf", "oneOf"}) {
    if (!s.contains(k)) continue;
    const ojson& a = s[k];
    if (!a.is_array() || a.empty()) refuse(where, std::string(k) + " must be a non-empty array");
    std::vector<int> kids;
    for (size_t i = 0; i < a.size(); ++i) kids.push_back(sub(a[i], where + "/" + k + "/" + std::to_string(i)));
    return alternatives(kids, where);
  }

  // One type (or each of a list of types, as alternatives).
  auto of_type = [&](const std::string& t) -> int {
    Node n;
    if (t == "string") {
      return string_node(s, where);
    } else if (t == "integer" || t == "number") {
      return number_node(s, where, t == "integer");
    } else if (t == "boolean") {
      return lit_set({"false", "true"}, where);
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
        std::vector<std::string> keys;
        std::vector<int> values;
        for (const auto& [name, ps] : props.items()) {
          keys.push_back(name);
          values.push_back(sub(ps, where + "/properties/" + name));
        }
        return object(keys, values);
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
    return kids.size() == 1 ? kids[0] : alternatives(kids, where);
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
    case JsonSchema::Kind::Switch:
      f.alive = n.children.size() >= 64 ? ~uint64_t{0} : (uint64_t{1} << n.children.size()) - 1;
      break;
    case JsonSchema::Kind::BInt:
    case JsonSchema::Kind::BNum:
    case JsonSchema::Kind::CStr:
      b_ = Bounded{};
      if (n.dfa >= 0) b_.state = schema_->dfa(n.dfa).start();
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
      case K::Switch: {
        uint64_t next = 0;
        for (size_t i = 0; i < n.children.size(); ++i) {
          if (!((f.alive >> i) & 1)) continue;
          const std::string& t = schema_->node(n.children[i]).text;
          if (static_cast<size_t>(f.pos) < t.size() && static_cast<unsigned char>(t[static_cast<size_t>(f.pos)]) == c)
            next |= uint64_t{1} << i;
        }
        if (!next) return false;
        f.alive = next;
        ++f.pos;
        if ((next & (next - 1)) == 0) {  // one text left: read whole, its rest follows (the texts are prefix-free)
          size_t i = 0;
          while (!((next >> i) & 1)) ++i;
          if (schema_->node(n.children[i]).text.size() == static_cast<size_t>(f.pos)) {
            --depth_;
            if (!enter(n.conts[i])) return false;
          }
        }
        return true;
      }
      case K::BInt:
      case K::BNum:
      case K::CStr: {
        const bool fresh = f.pos == 0;
        const Bounded before = b_;
        if (bounded_push(n, c)) {
          f.pos = 1;
          if (bounded_ended(n)) {
            --depth_;
            settle();
          }
          return true;
        }
        b_ = before;
        if (!fresh && n.kind != K::CStr && bounded_complete(n)) {  // a number ended: c follows it
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

// ---- bounded numbers and constrained strings ----

namespace {

constexpr long double kInf = std::numeric_limits<long double>::infinity();

// An interval of values, each end open or closed.
struct Iv {
  long double lo, hi;
  bool lo_in, hi_in;
};

bool meets(const Iv& r, const JsonSchema::Node& n) {
  const long double alo = n.has_min ? n.min : -kInf, ahi = n.has_max ? n.max : kInf;
  const bool alo_in = n.has_min && !n.min_excl, ahi_in = n.has_max && !n.max_excl;
  const long double lo = std::max(r.lo, alo), hi = std::min(r.hi, ahi);
  const bool lo_in = r.lo > alo ? r.lo_in : r.lo < alo ? alo_in : (r.lo_in && alo_in);
  const bool hi_in = r.hi < ahi ? r.hi_in : r.hi > ahi ? ahi_in : (r.hi_in && ahi_in);
  return lo < hi || (lo == hi && lo_in && hi_in);
}

Iv signed_iv(bool neg, long double a, long double b, bool a_in, bool b_in) {
  return neg ? Iv{-b, -a, b_in, a_in} : Iv{a, b, a_in, b_in};
}

// Whether some number beginning with `t` (a valid prefix: -?(0|[1-9]\d*)(\.\d*)?) lies within n's bounds.
bool number_viable(std::string_view t, const JsonSchema::Node& n, bool integer) {
  const bool neg = !t.empty() && t[0] == '-';
  const std::string_view body = t.substr(neg ? 1 : 0);
  if (body.empty()) return meets(signed_iv(neg, 0, kInf, true, false), n);
  const size_t dot = body.find('.');
  const std::string_view ip = body.substr(0, dot);
  long double iv = 0;
  for (char c : ip) iv = iv * 10 + (c - '0');
  if (dot != std::string_view::npos) {
    long double f = 0, scale = 1;
    for (char c : body.substr(dot + 1)) {
      f = f * 10 + (c - '0');
      scale *= 10;
    }
    const long double a = iv + f / scale;
    return meets(signed_iv(neg, a, a + 1 / scale, true, false), n);
  }
  if (ip == "0") return integer ? meets(Iv{0, 0, true, true}, n) : meets(signed_iv(neg, 0, 1, true, false), n);
  long double p = 1;
  for (int k = 0; k <= 40; ++k, p *= 10) {
    const long double a = iv * p;
    const Iv r = integer ? signed_iv(neg, a, a + p - 1, true, true) : signed_iv(neg, a, (iv + 1) * p, true, false);
    if (meets(r, n)) return true;
  }
  return false;
}

bool number_complete(std::string_view t, const JsonSchema::Node& n) {
  if (t.empty() || t.back() == '-' || t.back() == '.') return false;
  const long double v = std::strtold(std::string(t).c_str(), nullptr);
  return meets(Iv{v, v, true, true}, n);
}

// Whether byte c may follow the number text t (syntax only).
bool number_syntax(std::string_view t, unsigned char c, bool integer) {
  const bool digit = c >= '0' && c <= '9';
  if (t.size() >= 38) return false;
  if (t.empty()) return digit || c == '-';
  const bool neg = t[0] == '-';
  const std::string_view body = t.substr(neg ? 1 : 0);
  if (body.empty()) return digit;
  if (body.find('.') != std::string_view::npos) return digit;
  if (c == '.') return !integer;
  return digit && body != "0";
}

}  // namespace

bool SchemaCursor::bounded_push(const JsonSchema::Node& n, unsigned char c) {
  if (n.kind != JsonSchema::Kind::CStr) {
    const bool integer = n.kind == JsonSchema::Kind::BInt;
    const std::string_view t(b_.text, b_.len);
    if (!number_syntax(t, c, integer)) return false;
    b_.text[b_.len++] = static_cast<char>(c);
    return number_viable(std::string_view(b_.text, b_.len), n, integer);
  }
  auto content = [&](unsigned char byte) {
    // UTF-8 well-formedness, as JsonPrefix checks it.
    if (b_.utf8_need > 0) {
      if (byte < b_.utf8_lo || byte > b_.utf8_hi) return false;
      --b_.utf8_need;
      b_.utf8_lo = 0x80;
      b_.utf8_hi = 0xBF;
    } else if (byte >= 0x80) {
      if (byte >= 0xC2 && byte <= 0xDF) b_.utf8_need = 1;
      else if (byte >= 0xE0 && byte <= 0xEF) {
        b_.utf8_need = 2;
        if (byte == 0xE0) b_.utf8_lo = 0xA0;
        if (byte == 0xED) b_.utf8_hi = 0x9F;
      } else if (byte >= 0xF0 && byte <= 0xF4) {
        b_.utf8_need = 3;
        if (byte == 0xF0) b_.utf8_lo = 0x90;
        if (byte == 0xF4) b_.utf8_hi = 0x8F;
      } else {
        return false;
      }
    }
    if ((byte & 0xC0) != 0x80 && ++b_.chars > n.max_len && n.max_len >= 0) return false;
    if (n.dfa >= 0) {
      const RegexDfa& d = schema_->dfa(n.dfa);
      b_.state = d.next(b_.state, byte);
      const int more = d.min_chars(b_.state);
      if (more < 0 || (n.max_len >= 0 && b_.chars + more > n.max_len)) return false;
    }
    return true;
  };
  switch (b_.phase) {
    case 0:
      if (c != '"') return false;
      b_.phase = 1;
      return true;
    case 1:
      if (c == '"') {
        if (b_.utf8_need || b_.chars < n.min_len || (n.dfa >= 0 && !schema_->dfa(n.dfa).accepting(b_.state))) return false;
        b_.phase = 3;
        return true;
      }
      if (c == '\\') {
        if (b_.utf8_need) return false;
        // Only when some escaped character may come next (a pattern may allow none).
        const Bounded before = b_;
        bool any = false;
        for (char e : std::string_view("\"\\/bfnrt")) {
          b_ = before;
          b_.phase = 2;
          if (bounded_push(n, static_cast<unsigned char>(e))) {
            any = true;
            break;
          }
        }
        b_ = before;
        if (!any) return false;
        b_.phase = 2;
        return true;
      }
      if (c < 0x20) return false;
      return content(c);
    case 2: {
      // \uXXXX is not read in constrained strings: the character itself can be written instead.
      unsigned char d = 0;
      switch (c) {
        case '"': d = '"'; break;
        case '\\': d = '\\'; break;
        case '/': d = '/'; break;
        case 'b': d = '\b'; break;
        case 'f': d = '\f'; break;
        case 'n': d = '\n'; break;
        case 'r': d = '\r'; break;
        case 't': d = '\t'; break;
        default: return false;
      }
      b_.phase = 1;
      return content(d);
    }
    default: return false;
  }
}

bool SchemaCursor::bounded_complete(const JsonSchema::Node& n) const {
  if (n.kind == JsonSchema::Kind::CStr) return b_.phase == 3;
  return number_complete(std::string_view(b_.text, b_.len), n);
}

bool SchemaCursor::bounded_ended(const JsonSchema::Node& n) const {
  if (n.kind == JsonSchema::Kind::CStr) return b_.phase == 3;
  if (!bounded_complete(n)) return false;
  // Complete, and no digit (or '.') can extend it within the bounds.
  const bool integer = n.kind == JsonSchema::Kind::BInt;
  std::string t(b_.text, b_.len);
  for (char c : std::string_view("0123456789.")) {
    if (!number_syntax(t, static_cast<unsigned char>(c), integer)) continue;
    if (number_viable(t + c, n, integer)) return false;
  }
  return true;
}

}  // namespace kvscope
