// JSON as a prefix language (sampling/json_prefix.h) and the token constraint built on it, checked
// against nlohmann::json's own parser on valid, broken and random texts.
#include "sampling/json_prefix.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sampling/constraint.h"
#include "sampling/json_schema.h"
#include "util/error.h"

namespace json_prefix_test {

using namespace kvscope;

namespace {

// Bytes accepted before the first refusal (s.size(): all of them).
size_t accepted(const std::string& s, bool object_only = false) {
  JsonPrefix p(object_only);
  for (size_t i = 0; i < s.size(); ++i)
    if (!p.push(static_cast<unsigned char>(s[i]))) return i;
  return s.size();
}
bool whole(const std::string& s, bool object_only = false) {
  JsonPrefix p(object_only);
  return p.push(s) && p.complete();
}

nlohmann::json random_value(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 4 ? 4 : 6);
  switch (kind(rng)) {
    case 0: return nullptr;
    case 1: return rng() % 2 == 0;
    case 2: return static_cast<int64_t>(rng() % 2000) - 1000;
    case 3: return std::ldexp(static_cast<double>(rng() % 100000) - 50000, -static_cast<int>(rng() % 30));
    case 4: {
      std::string s;
      const char* pool[] = {"a", "Z", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "}", "["};
      for (int i = static_cast<int>(rng() % 6); i > 0; --i) s += pool[rng() % 14];
      return s;
    }
    case 5: {
      nlohmann::json a = nlohmann::json::array();
      for (int i = static_cast<int>(rng() % 4); i > 0; --i) a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      nlohmann::json o = nlohmann::json::object();
      for (int i = static_cast<int>(rng() % 4); i > 0; --i) o["k" + std::to_string(rng() % 9)] = random_value(rng, depth + 1);
      return o;
    }
  }
}

}  // namespace

TEST(JsonPrefix, AcceptsJsonTexts) {
  for (const std::string s : {"{}", "[]", " { \"a\" : [1, -0, 2.5e-3, 0E+1, true, false, null] } ", "\"\"", "-12.25",
                              "{\"k\":{\"n\":[[],[{}]]}}", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\"",
                              "\"\\ud83d\\ude00 and \xF0\x9F\x98\x80 and \xE2\x82\xAC\"", "[\n\t1\r\n]"})
    EXPECT_TRUE(whole(s)) << s;
  EXPECT_TRUE(whole("{\"a\": 1}", true));
}

TEST(JsonPrefix, RefusesTheFirstByteThatCannotContinue) {
  const std::pair<std::string, size_t> cases[] = {
      {"{,}", 1},        {"[1,]", 3},          {"01", 1},           {"tru ", 3},           {"\"\x01\"", 1},
      {"]", 0},          {"{\"a\" 1}", 5},     {"[1}", 2},          {"{\"a\":1]", 6},      {"1.}", 2},
      {"-x", 1},         {"1e", 2},            {"\"\\x\"", 2},      {"\"\\ud800x\"", 7},   {"\"\\udc00\"", 4},
      {"\"\\ud800\\u0041\"", 9}, {"\"\xC0\x80\"", 1}, {"\"\xE0\x80\x80\"", 2}, {"\"\xED\xA0\x80\"", 2}, {"{} x", 3},
  };
  for (const auto& [s, at] : cases) EXPECT_EQ(accepted(s), at) << s;
  EXPECT_EQ(accepted("[1]", true), 0u);  // object_only
  EXPECT_EQ(accepted("\"a\"", true), 0u);
  // Nesting deeper than kMaxDepth is refused at the first bracket too many.
  EXPECT_EQ(accepted(std::string(JsonPrefix::kMaxDepth + 1, '[')), static_cast<size_t>(JsonPrefix::kMaxDepth));
  // A whitespace cap, when asked for.
  JsonPrefix capped(true, 3);
  EXPECT_TRUE(capped.push("   {"));
  EXPECT_FALSE(capped.push("    "));
}

TEST(JsonPrefix, AgreesWithNlohmannOnRandomAndMutatedTexts) {
  std::mt19937 rng(7);
  const std::string alphabet = "{}[]\":,0123456789.-+eE tfnrulas\\u\x01\xC3\xA9";
  int n_valid = 0;
  for (int it = 0; it < 20000; ++it) {
    std::string s;
    if (it % 2 == 0) {
      for (int i = static_cast<int>(rng() % 10); i > 0; --i) s += alphabet[rng() % alphabet.size()];
    } else {
      s = random_value(rng, 0).dump(rng() % 3 == 0 ? 1 : -1);
      if (it % 4 == 1 && !s.empty()) {  // one byte changed, dropped or added
        const size_t at = rng() % s.size();
        const int op = static_cast<int>(rng() % 3);
        const char c = alphabet[rng() % alphabet.size()];
        if (op == 0) s[at] = c;
        else if (op == 1) s.erase(at, 1);
        else s.insert(at, 1, c);
      }
    }
    bool ok = nlohmann::json::accept(s);
    if (!ok) {
      try {
        const nlohmann::json parsed = nlohmann::json::parse(s);
        ok = !parsed.is_discarded();
      } catch (const nlohmann::json::out_of_range&) {
        continue;  // well-formed, but a number beyond double's range: nlohmann's limit, not the grammar's
      } catch (const nlohmann::json::exception&) {
      }
    }
    n_valid += ok;
    ASSERT_EQ(whole(s), ok) << "text: " << nlohmann::json(s).dump(-1, ' ', true);
    if (ok) {
      const size_t first = s.find_first_not_of(" \t\r\n");
      ASSERT_EQ(whole(s, true), first != std::string::npos && s[first] == '{') << s;
    }
  }
  EXPECT_GT(n_valid, 5000);
}

TEST(JsonConstraint, MasksTokensThatWouldBreakTheTextAndEndsWhenWhole) {
  auto tp = std::make_shared<const TokenPieces>(
      std::vector<std::string>{"{", "}", "\"", "a", ":", "1", " ", "", ",", "[", "]", "\"a\":", "}}", "x"});
  const auto* pieces = &tp->pieces;
  const int nv = static_cast<int>(pieces->size());
  auto allowed = [&](JsonConstraint& c) {
    std::vector<float> l(static_cast<size_t>(nv), 0.0f);
    c.mask(l.data(), nv);
    std::string ids;
    for (int i = 0; i < nv; ++i)
      if (std::isfinite(l[static_cast<size_t>(i)])) ids += std::to_string(i) + " ";
    return ids;
  };
  JsonConstraint c(tp, true);
  EXPECT_EQ(allowed(c), "0 6 ");  // only '{' or whitespace opens an object; the empty piece never
  c.accept(0);
  EXPECT_EQ(allowed(c), "1 2 6 11 ");  // '}', a key's quote, whitespace, '"a":'; not '}}' (nothing follows the close)
  c.accept(11);
  EXPECT_FALSE(c.done());
  c.accept(5);
  c.accept(1);
  EXPECT_TRUE(c.done());

  // Random walks: every text stays a JSON prefix; the ones that end parse as objects.
  std::mt19937 rng(3);
  int ended = 0;
  for (int walk = 0; walk < 200; ++walk) {
    JsonConstraint w(tp, true);
    std::string text;
    for (int step = 0; step < 200 && !w.done(); ++step) {
      std::vector<float> l(static_cast<size_t>(nv));
      for (auto& x : l) x = std::uniform_real_distribution<float>(0, 1)(rng);
      ASSERT_TRUE(w.mask(l.data(), nv)) << text;
      int best = 0;
      for (int i = 1; i < nv; ++i)
        if (l[static_cast<size_t>(i)] > l[static_cast<size_t>(best)]) best = i;
      w.accept(best);
      text += (*pieces)[static_cast<size_t>(best)];
      ASSERT_EQ(accepted(text, true), text.size()) << text;
    }
    if (w.done()) {
      ++ended;
      EXPECT_TRUE(nlohmann::json::parse(text).is_object()) << text;
    }
  }
  EXPECT_GT(ended, 50);
}

// ---- JSON schema ----

namespace {

nlohmann::ordered_json person_schema() {
  return nlohmann::ordered_json::parse(R"({
    "type": "object", "title": "Person",
    "properties": {
      "name": {"type": "string"}, "age": {"type": "integer"}, "mood": {"enum": ["happy", "sad", 12, 1]},
      "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}, "ok": {"type": "boolean"},
      "spouse": {"type": ["string", "null"]}, "score": {"type": "number"}, "pet": {"$ref": "#/$defs/Pet"}
    },
    "required": ["name", "age"],
    "$defs": {"Pet": {"type": "object", "properties": {"kind": {"const": "cat"}, "any": {}}}}
  })");
}

size_t schema_accepted(const JsonSchema& s, const std::string& text) {
  SchemaCursor c(s);
  for (size_t i = 0; i < text.size(); ++i)
    if (!c.push(static_cast<unsigned char>(text[i]))) return i;
  return text.size();
}
bool schema_whole(const JsonSchema& s, const std::string& text) {
  SchemaCursor c(s);
  return c.push(text) && c.ended();
}

// What the test schema asks, checked on the parsed value and its text (independent of the cursor).
bool is_person(const nlohmann::json& v, const std::string& text) {
  // An integer beyond int64 parses as a double: its text decides (no fraction, no exponent).
  const size_t a = text.find("\"age\":") + 6, b = text.find(",\"mood\":");
  if (a < 6 || b == std::string::npos || text.substr(a, b - a).find_first_of(".eE") != std::string::npos) return false;
  const std::vector<std::string> keys = {"name", "age", "mood", "tags", "ok", "spouse", "score", "pet"};
  if (!v.is_object() || v.size() != keys.size()) return false;
  for (const auto& k : keys)
    if (!v.contains(k)) return false;
  const auto& m = v["mood"];
  const auto& p = v["pet"];
  return v["name"].is_string() && v["age"].is_number() &&
         (m == "happy" || m == "sad" || m == 12 || m == 1) && v["tags"].is_array() && v["tags"].size() <= 2 &&
         std::all_of(v["tags"].begin(), v["tags"].end(), [](const auto& t) { return t.is_string(); }) && v["ok"].is_boolean() &&
         (v["spouse"].is_string() || v["spouse"].is_null()) && v["score"].is_number() && p.is_object() && p.size() == 2 &&
         p["kind"] == "cat" && p.contains("any");
}

}  // namespace

TEST(JsonSchema, AcceptsWhatTheSchemaDescribesInItsOrder) {
  const JsonSchema s(person_schema());
  const std::string good =
      R"({"name":"Al \"x\" \u00e9","age":-30,"mood":"happy","tags":["a","b"],"ok":true,"spouse":null,"score":1.5e3,)"
      R"("pet":{"kind":"cat","any":[1,{"z":null}]}})";
  EXPECT_TRUE(schema_whole(s, good));
  EXPECT_TRUE(is_person(nlohmann::json::parse(good), good));
  // An enum value that is a prefix of another (1 and 12) ends where the next byte cannot extend it.
  const std::string happy = R"("happy")";
  std::string one = good;
  one.replace(one.find(happy), happy.size(), "1");
  EXPECT_TRUE(schema_whole(s, one)) << one;
  std::string twelve = good;
  twelve.replace(twelve.find(happy), happy.size(), "12");
  EXPECT_TRUE(schema_whole(s, twelve)) << twelve;
}

TEST(JsonSchema, RefusesTheFirstByteThatBreaksIt) {
  const JsonSchema s(person_schema());
  const std::string head = R"({"name":"A","age":)";
  const std::string tags = head + R"(3,"mood":"sad","tags":)";
  const std::pair<std::string, size_t> cases[] = {
      {R"({"age":1)", 2},                                     // properties come in the schema's order
      {head + "3.5", head.size() + 1},                        // an integer has no fraction
      {head + R"(3,"mood":"angry")", head.size() + 10},       // not in the enum: refused at its first wrong byte
      {head + R"(3,"mood":13)", head.size() + 10},
      {tags + R"(["a","b",)", tags.size() + 8},               // maxItems 2
      {tags + "[1", tags.size() + 1},
      {tags + R"([],"ok":1)", tags.size() + 8},
      {tags + R"([],"ok":false,"spouse":5)", tags.size() + 23},
      {head + " 3", head.size()},                             // compact: no whitespace between tokens
      {head + "3 ", head.size() + 1},
      {R"({"name":"A"})", 11},                                // every property is written
  };
  for (const auto& [text, at] : cases) EXPECT_EQ(schema_accepted(s, text), at) << text;
}

TEST(JsonSchema, CompilesOrNamesWhatItCannotServe) {
  auto refused = [](const char* schema, const char* needle) {
    try {
      JsonSchema s(nlohmann::ordered_json::parse(schema));
      ADD_FAILURE() << "accepted: " << schema;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  refused(R"({"type":"string","format":"hostname"})", "format 'hostname' is not supported");
  refused(R"({"type":"integer","multipleOf":3})", "keyword 'multipleOf'");
  refused(R"({"anyOf":[{"type":"string"},{"type":"object","properties":{"a":{"type":"string"}}},{"type":"string"}]})", "alternatives");
  refused(R"({"$ref":"#/$defs/A","$defs":{"A":{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}}}}})", "recursive");
  refused(R"({"$ref":"https://example.com/s.json"})", "only references into the document");
  refused(R"({"type":"object","properties":{"a":{}},"required":["b"]})", "not among the properties");
  refused(R"({"type":"thing"})", "unknown type");
  refused(R"({"enum":[]})", "empty");
  // Fixed alternatives merge into one set even when they share a first byte.
  const JsonSchema merged(nlohmann::ordered_json::parse(R"({"anyOf":[{"const":"a"},{"const":"b"},{"type":"null"}]})"));
  EXPECT_TRUE(schema_whole(merged, R"("b")"));
  EXPECT_TRUE(schema_whole(merged, "null"));
  EXPECT_EQ(schema_accepted(merged, R"("c")"), 1u);
}

TEST(SchemaConstraint, RandomWalksWriteOnlyWhatTheSchemaAccepts) {
  std::vector<std::string> pieces = {"{", "}", "\"", ":", ",", "[", "]", "1", "2", ".", "-", "true", "false", "null", "tr", "ue",
                                     " ", "", "\"name\":", "\"age\":", "\"mood\":\"", "happy", "sad", "\",\"", "cat", "kind",
                                     "\\", "12", "}}", "\"}"};
  for (char c = 'a'; c <= 'z'; ++c) pieces.emplace_back(1, c);
  auto tp = std::make_shared<const TokenPieces>(pieces);
  auto schema = std::make_shared<const JsonSchema>(person_schema());
  std::mt19937 rng(5);
  int ended = 0;
  for (int walk = 0; walk < 300; ++walk) {
    SchemaConstraint w(tp, schema);
    std::string text;
    const int nv = static_cast<int>(tp->pieces.size());
    for (int step = 0; step < 400 && !w.done(); ++step) {
      std::vector<float> l(static_cast<size_t>(nv));
      for (auto& x : l) x = std::uniform_real_distribution<float>(0, 1)(rng);
      ASSERT_TRUE(w.mask(l.data(), nv)) << "no token may follow " << text;
      int best = 0;
      for (int i = 1; i < nv; ++i)
        if (l[static_cast<size_t>(i)] > l[static_cast<size_t>(best)]) best = i;
      ASSERT_TRUE(std::isfinite(l[static_cast<size_t>(best)])) << text;
      w.accept(best);
      text += tp->pieces[static_cast<size_t>(best)];
      ASSERT_EQ(schema_accepted(*schema, text), text.size()) << text;
    }
    if (w.done()) {
      ++ended;
      nlohmann::json v;
      try {
        v = nlohmann::json::parse(text);
      } catch (const nlohmann::json::out_of_range&) {
        continue;  // a well-formed number beyond double's range ("1e999"): nlohmann's limit
      }
      EXPECT_TRUE(is_person(v, text)) << text;
    }
  }
  EXPECT_GT(ended, 30);
}

}  // namespace json_prefix_test
