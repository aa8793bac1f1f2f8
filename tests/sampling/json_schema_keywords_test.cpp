// The JSON Schema keywords real schemas carry, on the schemas real libraries emit (written here
// verbatim): zod 4.x's z.toJSONSchema and the AI SDK 7's zodSchema (draft-07) for one object with
// .int(), .min/.max, .email(), .uuid(), z.iso.*, .nullable(), .regex(); Pydantic 2.13's
// model_json_schema for a model with UUID, datetime, date, time, Field bounds, a pattern, an Optional
// with max_length, a list with min/max length and a discriminated union. Random walks check that every
// finished output validates under an independent checker (std::regex for patterns, parsed dates).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <regex>

#include "sampling/constraint.h"
#include "sampling/json_schema.h"
#include "sampling/regex.h"
#include "util/error.h"

namespace json_schema_keywords_test {

using namespace kvscope;
using ojson = nlohmann::ordered_json;

namespace {

// zod 4: z.toJSONSchema(z.object({name: z.string().min(1).max(20), age: z.number().int().min(0).max(150),
// score: z.number().gt(0).lte(1), count: z.number().int(), email: z.email(), id: z.uuid(),
// created: z.iso.datetime(), day: z.iso.date(), at: z.iso.time(), tags: z.array(z.string().max(8)).min(1).max(3),
// role: z.enum(['admin','user']), nick: z.string().nullable(), code: z.string().regex(/^[A-Z]{3}-\d{2,4}$/)}))
const char* kZod = R"JSON({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 20}, "age": {"type": "integer", "minimum": 0, "maximum": 150}, "score": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}, "count": {"type": "integer", "minimum": -9007199254740991, "maximum": 9007199254740991}, "email": {"type": "string", "format": "email", "pattern": "^(?:[A-Za-z0-9_'+\\-]+\\.)*[A-Za-z0-9_'+\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$"}, "id": {"type": "string", "format": "uuid", "pattern": "^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$"}, "created": {"type": "string", "format": "date-time", "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z))$"}, "day": {"type": "string", "format": "date", "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))$"}, "at": {"type": "string", "pattern": "^(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d+)?)?$"}, "tags": {"minItems": 1, "maxItems": 3, "type": "array", "items": {"type": "string", "maxLength": 8}}, "role": {"type": "string", "enum": ["admin", "user"]}, "nick": {"type": ["string", "null"]}, "code": {"type": "string", "pattern": "^[A-Z]{3}-\\d{2,4}$"}}, "required": ["name", "age", "score", "count", "email", "id", "created", "day", "at", "tags", "role", "nick", "code"], "additionalProperties": false})JSON";

// Pydantic 2.13: Order.model_json_schema() (Cat/Dog tagged by kind; note: Optional[str] max_length 12).
const char* kPydantic = R"JSON({"$defs": {"Cat": {"properties": {"kind": {"const": "cat", "title": "Kind", "type": "string"}, "lives": {"maximum": 9, "minimum": 0, "title": "Lives", "type": "integer"}}, "required": ["kind", "lives"], "title": "Cat", "type": "object"}, "Dog": {"properties": {"kind": {"const": "dog", "title": "Kind", "type": "string"}, "good": {"title": "Good", "type": "boolean"}}, "required": ["kind", "good"], "title": "Dog", "type": "object"}}, "properties": {"id": {"format": "uuid", "title": "Id", "type": "string"}, "when": {"format": "date-time", "title": "When", "type": "string"}, "day": {"format": "date", "title": "Day", "type": "string"}, "at": {"format": "time", "title": "At", "type": "string"}, "qty": {"exclusiveMaximum": 100, "exclusiveMinimum": 0, "title": "Qty", "type": "integer"}, "price": {"maximum": 1000, "minimum": 0.5, "title": "Price", "type": "number"}, "sku": {"pattern": "^[A-Z]{2}\\d{3}$", "title": "Sku", "type": "string"}, "note": {"anyOf": [{"maxLength": 12, "type": "string"}, {"type": "null"}], "default": null, "title": "Note"}, "tags": {"items": {"type": "string"}, "maxItems": 2, "minItems": 1, "title": "Tags", "type": "array"}, "pet": {"discriminator": {"mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}, "propertyName": "kind"}, "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "title": "Pet"}}, "required": ["id", "when", "day", "at", "qty", "price", "sku", "tags", "pet"], "title": "Order", "type": "object"})JSON";

// ---- an independent checker: what the schema asks, read from the parsed value ----

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
bool valid_date(const std::string& s) {
  int y, m, d;
  if (s.size() != 10 || std::sscanf(s.c_str(), "%4d-%2d-%2d", &y, &m, &d) != 3 || s[4] != '-' || s[7] != '-') return false;
  const int days[] = {31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m >= 1 && m <= 12 && d >= 1 && d <= days[m - 1];
}
bool valid_time(const std::string& s) {
  static const std::regex re(R"(^(\d\d):(\d\d):(\d\d)(\.\d+)?(Z|[+-](\d\d):(\d\d))$)");
  std::smatch m;
  if (!std::regex_match(s, m, re)) return false;
  auto n = [&](int i) { return std::stoi(m[i].str()); };
  return n(1) < 24 && n(2) < 60 && n(3) < 60 && (m[6].str().empty() || (n(6) < 24 && n(7) < 60));
}
bool valid_format(const std::string& f, const std::string& s) {
  if (f == "date") return valid_date(s);
  if (f == "time") return valid_time(s);
  if (f == "date-time") return s.size() > 11 && s[10] == 'T' && valid_date(s.substr(0, 10)) && valid_time(s.substr(11));
  if (f == "uuid") {
    if (s.size() != 36) return false;
    for (size_t i = 0; i < 36; ++i)
      if ((i == 8 || i == 13 || i == 18 || i == 23) ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
    return true;
  }
  if (f == "email") {
    const size_t at = s.find('@');
    if (at == 0 || at == std::string::npos || s.find('@', at + 1) != std::string::npos) return false;
    const std::string local = s.substr(0, at), domain = s.substr(at + 1);
    if (local.front() == '.' || local.back() == '.' || local.find("..") != std::string::npos) return false;
    const size_t dot = domain.rfind('.');
    if (dot == std::string::npos || domain.size() - dot - 1 < 2) return false;
    for (char c : domain.substr(dot + 1))
      if (!std::isalpha(static_cast<unsigned char>(c))) return false;
    return domain.front() != '-' && domain.front() != '.' && domain.find("..") == std::string::npos;
  }
  return false;
}

bool check(const nlohmann::json& v, const ojson& s, const ojson& doc, const std::string& text_of_number, std::string* why);

bool check_value(const nlohmann::json& v, const ojson& s, const ojson& doc, std::string* why) {
  return check(v, s, doc, "", why);
}

bool check(const nlohmann::json& v, const ojson& s, const ojson& doc, const std::string&, std::string* why) {
  auto fail = [&](const std::string& w) {
    *why = w + " at " + v.dump();
    return false;
  };
  if (s.contains("$ref")) {
    const std::string r = s["$ref"];
    return check_value(v, doc["$defs"][r.substr(8)], doc, why);
  }
  if (s.contains("const") && nlohmann::json::parse(s["const"].dump()) != v) return fail("const");
  if (s.contains("enum")) {
    bool in = false;
    for (const auto& e : s["enum"]) in = in || nlohmann::json::parse(e.dump()) == v;
    if (!in) return fail("enum");
  }
  for (const char* k : {"anyOf", "oneOf"}) {
    if (!s.contains(k)) continue;
    int n = 0;
    std::string w;
    for (const auto& alt : s[k]) n += check_value(v, alt, doc, &w);
    if (n == 0 || (std::string(k) == "oneOf" && n > 1)) return fail(std::string(k) + " matched " + std::to_string(n));
  }
  if (s.contains("type")) {
    std::vector<std::string> types;
    if (s["type"].is_string()) types.push_back(s["type"]);
    else for (const auto& t : s["type"]) types.push_back(t);
    bool ok = false;
    for (const auto& t : types)
      ok = ok || (t == "string" && v.is_string()) || (t == "integer" && v.is_number_integer()) || (t == "number" && v.is_number()) ||
           (t == "boolean" && v.is_boolean()) || (t == "null" && v.is_null()) || (t == "array" && v.is_array()) ||
           (t == "object" && v.is_object());
    if (!ok) return fail("type");
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    if (s.contains("minimum") && x < s["minimum"].get<double>()) return fail("minimum");
    if (s.contains("maximum") && x > s["maximum"].get<double>()) return fail("maximum");
    if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>()) return fail("exclusiveMinimum");
    if (s.contains("exclusiveMaximum") && x >= s["exclusiveMaximum"].get<double>()) return fail("exclusiveMaximum");
  }
  if (v.is_string()) {
    const std::string str = v.get<std::string>();
    if (s.contains("minLength") && code_points(str) < s["minLength"].get<size_t>()) return fail("minLength");
    if (s.contains("maxLength") && code_points(str) > s["maxLength"].get<size_t>()) return fail("maxLength");
    if (s.contains("pattern") && !std::regex_search(str, std::regex(s["pattern"].get<std::string>(), std::regex::ECMAScript)))
      return fail("pattern");
    if (s.contains("format") && !valid_format(s["format"], str)) return fail("format " + s["format"].get<std::string>());
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) return fail("minItems");
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) return fail("maxItems");
    if (s.contains("items"))
      for (const auto& x : v)
        if (!check_value(x, s["items"], doc, why)) return false;
  }
  if (v.is_object() && s.contains("properties")) {
    for (const auto& [k, x] : v.items()) {
      if (!s["properties"].contains(k)) {
        if (s.value("additionalProperties", true) == false) return fail("additionalProperties " + k);
        continue;
      }
      if (!check_value(x, s["properties"][k], doc, why)) return false;
    }
    if (s.contains("required"))
      for (const auto& r : s["required"])
        if (!v.contains(r.get<std::string>())) return fail("required " + r.get<std::string>());
  }
  return true;
}

size_t accepted(const JsonSchema& s, const std::string& text) {
  SchemaCursor c(s);
  for (size_t i = 0; i < text.size(); ++i)
    if (!c.push(static_cast<unsigned char>(text[i]))) return i;
  return text.size();
}
bool whole(const JsonSchema& s, const std::string& text) {
  SchemaCursor c(s);
  return c.push(text) && c.ended();
}

// Random walks through the constraint; every finished text must pass the checker.
int walks(const char* schema_text, int n, uint32_t seed) {
  std::vector<std::string> pieces = {"\"", "\",\"", "\":", "{\"", "\"}", "}", "]", "[", ",", "true", "false", "null", "2024-",
                                     "-01", ":00", ".5", "\xc3\xa9", "\\n", "\\\"", "\\u00e9", "12", "ab", "@ex", ".com", " "};
  for (int c = 0x21; c < 0x7f; ++c) pieces.emplace_back(1, static_cast<char>(c));
  auto tp = std::make_shared<const TokenPieces>(pieces);
  const ojson doc = ojson::parse(schema_text);
  auto schema = std::make_shared<const JsonSchema>(doc);
  std::mt19937 rng(seed);
  int finished = 0;
  for (int w = 0; w < n; ++w) {
    SchemaConstraint c(tp, schema);
    std::string text;
    const int nv = static_cast<int>(pieces.size());
    for (int step = 0; step < 3000 && !c.done(); ++step) {
      std::vector<float> l(static_cast<size_t>(nv));
      for (int i = 0; i < nv; ++i) {
        const std::string& p = pieces[static_cast<size_t>(i)];
        // Closers a little more likely, so that free strings end.
        l[static_cast<size_t>(i)] = std::uniform_real_distribution<float>(0, 1)(rng) +
                                    (p.find_first_of("\"]}") != std::string::npos ? 0.25f : 0.f);
      }
      if (!c.mask(l.data(), nv)) {
        ADD_FAILURE() << "no token may follow " << text;
        return finished;
      }
      int best = 0;
      for (int i = 1; i < nv; ++i)
        if (l[static_cast<size_t>(i)] > l[static_cast<size_t>(best)]) best = i;
      c.accept(best);
      text += pieces[static_cast<size_t>(best)];
    }
    if (!c.done()) continue;
    ++finished;
    nlohmann::json v;
    try {
      v = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      ADD_FAILURE() << "not JSON: " << text;
      continue;
    }
    std::string why;
    EXPECT_TRUE(check_value(v, doc, doc, &why)) << why << "\n" << text;
  }
  return finished;
}

}  // namespace

TEST(JsonSchemaKeywords, RealSchemasCompileAndRandomWalksValidate) {
  EXPECT_GT(walks(kZod, 60, 1), 30);
  EXPECT_GT(walks(kPydantic, 60, 2), 30);
  // The AI SDK's conversion is zod's with the draft-07 $schema.
  std::string aisdk = kZod;
  aisdk.replace(aisdk.find("https://json-schema.org/draft/2020-12/schema"), 44, "http://json-schema.org/draft-07/schema#");
  EXPECT_GT(walks(aisdk.c_str(), 20, 3), 10);
}

TEST(JsonSchemaKeywords, BoundedNumbers) {
  const JsonSchema zod_int(ojson::parse(R"({"type": "integer", "minimum": -9007199254740991, "maximum": 9007199254740991})"));
  EXPECT_TRUE(whole(zod_int, "9007199254740991"));
  EXPECT_TRUE(whole(zod_int, "-9007199254740991"));
  EXPECT_EQ(accepted(zod_int, "9007199254740992"), 15u);  // the last digit would pass the maximum
  EXPECT_EQ(accepted(zod_int, "90071992547409910"), 16u);
  EXPECT_EQ(accepted(zod_int, "1.5"), 1u);
  const JsonSchema qty(ojson::parse(R"({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 100})"));
  EXPECT_EQ(accepted(qty, "0"), 0u);
  EXPECT_EQ(accepted(qty, "-"), 0u);
  EXPECT_EQ(accepted(qty, "100"), 2u);
  EXPECT_TRUE(whole(qty, "99"));  // no digit may follow: the value is whole without a closing byte
  EXPECT_TRUE(whole(qty, "1") == false);
  const JsonSchema score(ojson::parse(R"({"type": "number", "exclusiveMinimum": 0, "maximum": 1})"));
  EXPECT_EQ(accepted(score, "0.0"), 3u);  // 0.0 is a prefix of 0.01
  EXPECT_EQ(accepted(score, "1.5"), 2u);
  EXPECT_EQ(accepted(score, "1.00"), 4u);
  EXPECT_EQ(accepted(score, "2"), 0u);
  EXPECT_EQ(accepted(score, "1e-3"), 1u);  // bounded numbers have no exponent
  // A number inside an object ends at the byte after it, only when it is within the bounds there.
  const JsonSchema obj(ojson::parse(R"({"type": "object", "properties": {"p": {"type": "number", "minimum": 0.5, "maximum": 1000}}})"));
  EXPECT_TRUE(whole(obj, R"({"p":0.5})"));
  EXPECT_EQ(accepted(obj, R"({"p":0.4})"), 7u);
  EXPECT_EQ(accepted(obj, R"({"p":0.})"), 7u);
  EXPECT_TRUE(whole(obj, R"({"p":1000})"));
  EXPECT_EQ(accepted(obj, R"({"p":1000.1})"), 10u);
  // Draft 4's boolean exclusiveMinimum.
  const JsonSchema d4(
      ojson::parse(R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": 5, "exclusiveMinimum": true}}})"));
  EXPECT_EQ(accepted(d4, R"({"n":5})"), 6u);
  EXPECT_TRUE(whole(d4, R"({"n":6})"));
}

TEST(JsonSchemaKeywords, StringsLengthsPatternsFormats) {
  const JsonSchema name(ojson::parse(R"({"type": "string", "minLength": 2, "maxLength": 3})"));
  EXPECT_EQ(accepted(name, "\"a\""), 2u);
  EXPECT_TRUE(whole(name, "\"ab\""));
  EXPECT_TRUE(whole(name, "\"\xc3\xa9\xc3\xa9\xc3\xa9\""));  // characters, not bytes
  EXPECT_EQ(accepted(name, "\"abcd\""), 4u);
  EXPECT_TRUE(whole(name, "\"a\\n\""));
  EXPECT_EQ(accepted(name, "\"a\\u0041\""), 3u);  // no \u escapes in constrained strings
  const JsonSchema code(ojson::parse(R"({"type": "string", "pattern": "^[A-Z]{3}-\\d{2,4}$"})"));
  EXPECT_TRUE(whole(code, "\"ABC-12\""));
  EXPECT_TRUE(whole(code, "\"ABC-1234\""));
  EXPECT_EQ(accepted(code, "\"AB-"), 3u);
  EXPECT_EQ(accepted(code, "\"ABC-1\""), 6u);
  EXPECT_EQ(accepted(code, "\"ABC-12345"), 9u);
  const JsonSchema search(ojson::parse(R"({"type": "string", "pattern": "cat"})"));  // unanchored: contains
  EXPECT_TRUE(whole(search, "\"a cat!\""));
  EXPECT_EQ(accepted(search, "\"dog\""), 4u);
  const JsonSchema dt(ojson::parse(R"({"type": "string", "format": "date-time"})"));
  EXPECT_TRUE(whole(dt, "\"2024-06-30T23:59:59.123+02:00\""));
  EXPECT_EQ(accepted(dt, "\"2024-02-30"), 9u);
  EXPECT_EQ(accepted(dt, "\"2024-06-30T24"), 13u);
  EXPECT_EQ(accepted(dt, "\"2024-06-30T23:59:59\""), 20u);  // an offset is required
  const JsonSchema uuid(ojson::parse(R"({"type": "string", "format": "uuid"})"));
  EXPECT_TRUE(whole(uuid, "\"123e4567-e89b-12d3-a456-426614174000\""));
  EXPECT_EQ(accepted(uuid, "\"123e4567e"), 9u);
  const JsonSchema email(ojson::parse(R"({"type": "string", "format": "email", "maxLength": 8})"));
  EXPECT_TRUE(whole(email, "\"a@b.org\""));
  EXPECT_EQ(accepted(email, "\"abc@d.org"), 9u);  // the 9th character
  EXPECT_EQ(accepted(email, "\"abcd@e"), 4u);    // after "abcd", "@x.yz" would not fit
  const JsonSchema nullable(ojson::parse(R"({"type": "string", "nullable": true, "maxLength": 1})"));
  EXPECT_TRUE(whole(nullable, "null"));
  EXPECT_TRUE(whole(nullable, "\"x\""));
}

TEST(JsonSchemaKeywords, TaggedUnionsOfObjects) {
  const ojson doc = ojson::parse(kPydantic);
  ojson pet = ojson::object();
  pet["$defs"] = doc["$defs"];
  pet["oneOf"] = doc["properties"]["pet"]["oneOf"];
  const JsonSchema s(pet);
  EXPECT_TRUE(whole(s, R"({"kind":"cat","lives":9})"));
  EXPECT_TRUE(whole(s, R"({"kind":"dog","good":true})"));
  EXPECT_EQ(accepted(s, R"({"kind":"cow")"), 10u);
  EXPECT_EQ(accepted(s, R"({"kind":"dog","lives")"), 15u);
  // The tag need not come first in the schema: it is written first.
  const JsonSchema late(ojson::parse(R"({"anyOf": [
      {"type": "object", "properties": {"x": {"type": "integer"}, "t": {"const": "a"}}},
      {"type": "object", "properties": {"t": {"enum": ["b"]}, "y": {"type": "string"}}}, {"type": "null"}]})"));
  EXPECT_TRUE(whole(late, R"({"t":"a","x":1})"));
  EXPECT_TRUE(whole(late, R"({"t":"b","y":""})"));
  EXPECT_TRUE(whole(late, "null"));
  // Objects with no distinguishing constant are still refused by name.
  EXPECT_THROW(JsonSchema(ojson::parse(R"({"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}},
                                                      {"type": "object", "properties": {"b": {"type": "string"}}}]})")),
               InputError);
}

TEST(JsonSchemaKeywords, RefusesByName) {
  auto refused = [](const char* schema, const char* needle) {
    try {
      JsonSchema s(ojson::parse(schema));
      ADD_FAILURE() << "accepted: " << schema;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  refused(R"({"type": "string", "format": "uri"})", "format 'uri' is not supported");
  refused(R"({"type": "string", "pattern": "^(?!a)b$"})", "lookaround '(?!' is not supported");
  refused(R"({"type": "string", "pattern": "(a)\\1"})", "backreference");
  refused(R"({"type": "string", "pattern": "\\bword"})", "word boundary");
  refused(R"({"type": "string", "pattern": "\\p{L}"})", "Unicode properties");
  refused(R"({"type": "string", "pattern": "a$b"})", "'$' before the end");
  refused(R"({"type": "string", "pattern": "[\u00e9]"})", "non-ASCII character in a class");
  refused(R"({"type": "string", "pattern": "^a{3}$", "maxLength": 2})", "more characters than maxLength");
  refused(R"({"type": "integer", "minimum": 5, "maximum": 4})", "no integer lies between");
  refused(R"({"type": "integer", "multipleOf": 2})", "keyword 'multipleOf' is not supported");
  refused(R"({"type": "string", "minLength": -1})", "minLength must be 0 to 1000000");
  refused(R"({"type": "string", "pattern": "\\uZZ12"})", "without 4 hex digits");
  refused(R"({"type": "string", "pattern": "(a|b){1000}(c|d){1000}"})", "more than 5000 automaton states");
  refused(R"({"type": "string", "pattern": "(a|b)*a(a|b){12}$"})", "passes 3000 states");  // 2^13 DFA states
}

TEST(RegexDfa, AgreesWithStdRegexOnZodPatterns) {
  const ojson z = ojson::parse(kZod);
  std::vector<std::string> patterns;
  for (const auto& [k, p] : z["properties"].items())
    if (p.contains("pattern")) patterns.push_back(p["pattern"]);
  patterns.push_back("a(b|cd)*e?");
  patterns.push_back("^x.{2,3}y$");
  const std::vector<std::string> seeds = {"ab.c@ex.com", "123e4567-e89b-42d3-a456-426614174000", "2024-02-29T10:20:30.5Z",
                                          "2023-02-29", "23:59", "23:59:01.25", "ABC-123", "abcde", "xaby"};
  std::mt19937 rng(11);
  const std::string alphabet = "0123456789abcdefABCDEF-:.@T Zxy_'+";
  for (const auto& p : patterns) {
    const RegexDfa d(p);
    const std::regex re(p, std::regex::ECMAScript);
    for (int t = 0; t < 3000; ++t) {
      std::string s = seeds[rng() % seeds.size()];
      for (int k = rng() % 3; k > 0; --k) {  // mutate: replace, insert or delete a byte
        const size_t at = s.empty() ? 0 : rng() % s.size();
        const char c = alphabet[rng() % alphabet.size()];
        switch (rng() % 3) {
          case 0: if (!s.empty()) s[at] = c; break;
          case 1: s.insert(s.begin() + static_cast<long>(at), c); break;
          default: if (!s.empty()) s.erase(at, 1);
        }
      }
      int st = d.start();
      for (unsigned char c : s) st = d.next(st, c);
      ASSERT_EQ(d.accepting(st), std::regex_search(s, re)) << p << " on '" << s << "'";
    }
  }
}

}  // namespace json_schema_keywords_test
