// JSON as a prefix language (sampling/json_prefix.h) and the token constraint built on it, checked
// against nlohmann::json's own parser on valid, broken and random texts.
#include "sampling/json_prefix.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sampling/constraint.h"

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
  auto pieces = std::make_shared<std::vector<std::string>>(
      std::vector<std::string>{"{", "}", "\"", "a", ":", "1", " ", "", ",", "[", "]", "\"a\":", "}}", "x"});
  const int nv = static_cast<int>(pieces->size());
  auto allowed = [&](JsonConstraint& c) {
    std::vector<float> l(static_cast<size_t>(nv), 0.0f);
    c.mask(l.data(), nv);
    std::string ids;
    for (int i = 0; i < nv; ++i)
      if (std::isfinite(l[static_cast<size_t>(i)])) ids += std::to_string(i) + " ";
    return ids;
  };
  JsonConstraint c(pieces, true);
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
    JsonConstraint w(pieces, true);
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
