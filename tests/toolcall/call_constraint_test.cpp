// Auto tool calls (toolcall/call_constraint.h): free text is left alone, and once a call is named its
// arguments are decoded under that function's schema, in each family's call syntax. Checked on a
// small synthetic vocabulary (random walks, tokens that straddle the name's end) and through the
// engine on the random-weight tool models, where the call's opening is forced and the weights write
// the arguments.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "engine/engine.h"
#include "fixtures.h"
#include "toolcall/call_constraint.h"
#include "toolcall/parser.h"

namespace call_constraint_test {

using namespace kvscope;
using namespace kvscope::toolcall;
using ojson = nlohmann::ordered_json;

namespace {

constexpr float kOut = -std::numeric_limits<float>::infinity();

ToolSpec weather_spec() {
  const ojson tools = ojson::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string", "maxLength": 6}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
      "required": ["city", "unit"], "additionalProperties": false}}},
    {"type": "function", "function": {"name": "add", "parameters": {"type": "object",
      "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 999}, "b": {"type": "integer", "minimum": 0, "maximum": 999}},
      "required": ["a", "b"]}}},
    {"type": "function", "function": {"name": "open_url", "parameters": {"type": "object",
      "properties": {"url": {"type": "string", "format": "uri"}}}}}])");
  return parse_tool_spec(&tools, nullptr, nullptr);
}

void expect_weather(const std::string& args) {
  const auto a = nlohmann::json::parse(args);  // throws (fails) when they do not parse
  ASSERT_TRUE(a.is_object()) << args;
  ASSERT_EQ(a.size(), 2u) << args;
  ASSERT_TRUE(a["city"].is_string()) << args;
  EXPECT_TRUE(a["unit"] == "celsius" || a["unit"] == "fahrenheit") << args;
}

void expect_add(const std::string& args) {
  const auto a = nlohmann::json::parse(args);
  ASSERT_TRUE(a.is_object()) << args;
  ASSERT_TRUE(a["a"].is_number_integer() && a["b"].is_number_integer()) << args;
  EXPECT_LE(a["a"].get<int>(), 999);
  EXPECT_GE(a["b"].get<int>(), 0);
}

// Every byte, some JSON-ish merges (among them tokens that close a name and go on: '"}', '", "',
// '",'), and [TOOL_CALLS] / [ARGS] as control tokens (no bytes; their text only in `marks`).
struct Vocab {
  std::vector<std::string> pieces, marks;
  std::shared_ptr<const TokenPieces> tp;
  int tool_calls = -1, args = -1;
  Vocab() {
    for (int c = 1; c < 256; ++c) pieces.emplace_back(1, static_cast<char>(c));
    for (const char* m : {"\"}", "\", \"", "\",", "\":", "{\"", "\"}}", "\"arguments\"", "\"parameters\"", ": ", ", ",
                          "celsius", "12", "ab", "\"}\n</tool_call>", "get_weather", "\"get_weather\""})
      pieces.emplace_back(m);
    marks.assign(pieces.size(), "");
    tool_calls = static_cast<int>(pieces.size());
    pieces.emplace_back(), marks.emplace_back("[TOOL_CALLS]");
    args = static_cast<int>(pieces.size());
    pieces.emplace_back(), marks.emplace_back("[ARGS]");
    pieces.emplace_back(), marks.emplace_back();  // end of generation: nothing at all
    tp = std::make_shared<const TokenPieces>(pieces);
  }
  int id(const std::string& s) const {
    for (size_t i = 0; i < pieces.size(); ++i)
      if (pieces[i] == s || (pieces[i].empty() && marks[i] == s)) return static_cast<int>(i);
    return -1;
  }
  int n() const { return static_cast<int>(pieces.size()); }
  const std::string& text(int i) const { return pieces[static_cast<size_t>(i)].empty() ? marks[static_cast<size_t>(i)] : pieces[static_cast<size_t>(i)]; }
};

const Vocab& vocab() {
  static const Vocab v;
  return v;
}

AutoCallConstraint make(ToolFormat f) {
  static const auto schemas = std::make_shared<const CallSchemas>(compile_call_schemas(weather_spec()));
  const Vocab& v = vocab();
  return AutoCallConstraint(v.tp, std::make_shared<const std::vector<std::string>>(v.marks), schemas, f);
}

// Writes `script` token by token (each token must be allowed), then draws random allowed tokens
// until the first call's arguments are whole JSON (or `steps` run out); returns the text.
std::string walk(ToolFormat f, const std::vector<std::string>& script, uint32_t seed, int steps = 400) {
  const Vocab& v = vocab();
  auto c = make(f);
  auto reader = make_tool_call_parser(f);
  std::mt19937 rng(seed);
  std::string text;
  auto take = [&](int id) {
    c.accept(id);
    reader->feed(v.text(id));
    text += v.text(id);
  };
  for (const auto& s : script) {
    std::vector<float> l(static_cast<size_t>(v.n()), 0.f);
    EXPECT_TRUE(c.mask(l.data(), v.n()));
    const int id = v.id(s);
    EXPECT_GE(id, 0) << s;
    EXPECT_NE(l[static_cast<size_t>(id)], kOut) << "scripted '" << s << "' refused after " << text;
    take(id);
  }
  for (int step = 0; step < steps; ++step) {
    if (!reader->calls().empty() && nlohmann::json::accept(reader->calls()[0].arguments)) break;
    std::vector<float> l(static_cast<size_t>(v.n()));
    for (auto& x : l) x = std::uniform_real_distribution<float>(0, 1)(rng);
    EXPECT_TRUE(c.mask(l.data(), v.n())) << text;
    int best = 0;
    for (int i = 1; i < v.n(); ++i)
      if (l[static_cast<size_t>(i)] > l[static_cast<size_t>(best)]) best = i;
    if (l[static_cast<size_t>(best)] == kOut) break;
    take(best);
  }
  reader->finish();
  return text;
}

std::string first_args(ToolFormat f, const std::string& text, const char* name) {
  auto p = make_tool_call_parser(f);
  p->feed(text);
  p->finish();
  if (p->calls().empty()) {
    ADD_FAILURE() << "no call in " << text;
    return "";
  }
  EXPECT_EQ(p->calls()[0].name, name) << text;
  return p->calls()[0].arguments;
}

}  // namespace

TEST(AutoCallConstraint, RandomArgumentsParseInEachFamily) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::string t = walk(ToolFormat::Hermes, {"<", "t", "o", "o", "l", "_", "c", "a", "l", "l", ">", "\n", "{\"", "n", "a", "m", "e", "\":",
                                              " ", "\"get_weather\""}, seed);
    expect_weather(first_args(ToolFormat::Hermes, t, "get_weather"));
    t = walk(ToolFormat::Llama3, {"{\"", "n", "a", "m", "e", "\":", " ", "\"", "a", "d", "d", "\""}, seed);
    expect_add(first_args(ToolFormat::Llama3, t, "add"));
    t = walk(ToolFormat::Mistral, {"[TOOL_CALLS]", "[", "{\"", "n", "a", "m", "e", "\":", "\"get_weather\""}, seed);
    expect_weather(first_args(ToolFormat::Mistral, t, "get_weather"));
    t = walk(ToolFormat::Mistral, {"[TOOL_CALLS]", "a", "d", "d", "[ARGS]"}, seed);
    expect_add(first_args(ToolFormat::Mistral, t, "add"));
    t = walk(ToolFormat::Generic, {"{\"", "t", "o", "o", "l", "_", "c", "a", "l", "l", "\":", "{\"", "n", "a", "m", "e", "\":",
                                   "\"get_weather\""}, seed);
    expect_weather(first_args(ToolFormat::Generic, t, "get_weather"));
  }
}

// Before a call nothing is masked; once the name is read, a token that would end the call without
// arguments ('"}') or write them off-schema is refused, while one that goes on into them ('", "')
// is kept; after the arguments the text is free again.
TEST(AutoCallConstraint, MasksOnlyBetweenTheNameAndTheArgumentsEnd) {
  const Vocab& v = vocab();
  auto c = make(ToolFormat::Hermes);
  auto feed = [&](const std::string& s) {
    for (char ch : s) c.accept(v.id(std::string(1, ch)));
  };
  auto allowed = [&] {
    std::vector<float> l(static_cast<size_t>(v.n()), 0.f);
    c.mask(l.data(), v.n());
    std::vector<bool> ok(l.size());
    for (size_t i = 0; i < l.size(); ++i) ok[i] = l[i] != kOut;
    return ok;
  };
  feed("Let me check. ");
  auto ok = allowed();
  EXPECT_EQ(std::count(ok.begin(), ok.end(), false), 0) << "content is free, end of generation included";
  feed("<tool_call>\n{\"name\": \"get_weather");
  ok = allowed();
  EXPECT_FALSE(ok[static_cast<size_t>(v.id("\"}"))]) << "the call may not close without arguments";
  EXPECT_FALSE(ok[static_cast<size_t>(v.id("\"}}"))]);
  EXPECT_TRUE(ok[static_cast<size_t>(v.id("\", \""))]);
  EXPECT_TRUE(ok[static_cast<size_t>(v.id("\","))]);
  EXPECT_TRUE(ok[static_cast<size_t>(v.id("e"))]) << "the name itself is the model's";
  feed("\", \"arguments\": ");
  ok = allowed();
  EXPECT_TRUE(ok[static_cast<size_t>(v.id("{\""))]);
  EXPECT_FALSE(ok[static_cast<size_t>(v.id("1"))]) << "the arguments are an object";
  EXPECT_FALSE(ok.back()) << "no end of generation inside a call";
  feed("{\"city\":\"Paris\",\"unit\":\"");
  ok = allowed();
  EXPECT_TRUE(ok[static_cast<size_t>(v.id("c"))]);
  EXPECT_TRUE(ok[static_cast<size_t>(v.id("celsius"))]);
  EXPECT_FALSE(ok[static_cast<size_t>(v.id("k"))]) << "unit is celsius or fahrenheit";
  feed("celsius\"}");
  ok = allowed();
  EXPECT_EQ(std::count(ok.begin(), ok.end(), false), 0) << "after the arguments the text is free again";
}

// A function the schema engine cannot serve (format uri), or a name no tool has, is left free.
TEST(AutoCallConstraint, UnservedSchemasAndUnknownNamesStayFree) {
  const auto schemas = compile_call_schemas(weather_spec());
  EXPECT_EQ(schemas.count("get_weather"), 1u);
  EXPECT_EQ(schemas.count("open_url"), 0u);
  const Vocab& v = vocab();
  for (const char* name : {"open_url", "nope"}) {
    auto c = make(ToolFormat::Hermes);
    for (char ch : "<tool_call>\n{\"name\": \"" + std::string(name)) c.accept(v.id(std::string(1, ch)));
    std::vector<float> l(static_cast<size_t>(v.n()), 0.f);
    c.accept(v.id("\""));
    c.mask(l.data(), v.n());
    EXPECT_EQ(std::count(l.begin(), l.end(), kOut), 0) << name;
  }
}

// Through the engine: the tool model of each family, the call's opening forced token by token, then
// the weights (sampled, several seeds) write the arguments under the constraint.
namespace {

class OpenThenAuto final : public TokenConstraint {
 public:
  OpenThenAuto(std::vector<int32_t> script, std::shared_ptr<TokenConstraint> inner)
      : script_(std::move(script)), inner_(std::move(inner)) {}
  bool mask(float* logits, int n_vocab) override {
    if (next_ < script_.size()) {
      const int32_t keep = script_[next_];
      std::vector<float> l(logits, logits + n_vocab);
      if (!inner_->mask(l.data(), n_vocab) || l[static_cast<size_t>(keep)] == kOut) return false;  // the opening must be allowed
      for (int i = 0; i < n_vocab; ++i)
        if (i != keep) logits[i] = kOut;
      return true;
    }
    return inner_->mask(logits, n_vocab);
  }
  void accept(int32_t token) override {
    ++next_;
    inner_->accept(token);
  }
  bool done() const override { return false; }

 private:
  std::vector<int32_t> script_;
  size_t next_ = 0;
  std::shared_ptr<TokenConstraint> inner_;
};

}  // namespace

TEST(AutoCallConstraint, ToolModelsWriteArgumentsThatParse) {
  const std::vector<std::tuple<const char*, ToolFormat, std::string, const char*>> cases = {
      {"hermes", ToolFormat::Hermes, "<tool_call>\n{\"name\": \"get_weather\"", "get_weather"},
      {"llama3", ToolFormat::Llama3, "{\"name\": \"add\"", "add"},
      {"mistral", ToolFormat::Mistral, "[TOOL_CALLS] [{\"name\": \"get_weather\"", "get_weather"},
  };
  const auto schemas = std::make_shared<const CallSchemas>(compile_call_schemas(weather_spec()));
  for (const auto& [family, fmt, opening, name] : cases) {
    const auto m = Model::load(fixtures::tool_model(family));
    const auto& tk = m->tokenizer();
    std::vector<std::string> p(static_cast<size_t>(tk.n_vocab())), marks(p.size());
    for (int id = 0; id < tk.n_vocab(); ++id) {
      if (tk.is_eog(id)) continue;
      p[static_cast<size_t>(id)] = tk.token_to_piece(id);
      if (p[static_cast<size_t>(id)].empty()) marks[static_cast<size_t>(id)] = tk.token_to_piece(id, true);
    }
    auto tp = std::make_shared<const TokenPieces>(std::move(p));
    auto mk = std::make_shared<const std::vector<std::string>>(std::move(marks));
    Engine eng(*m, fixtures::small_engine(1024, 1));
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      Request r;
      r.prompt = tk.encode("Weather in Paris, or 2+3?", true, true);
      r.sampling.temperature = 1.0f;
      r.sampling.seed = seed;
      r.max_tokens = 120;
      r.constraint = std::make_shared<OpenThenAuto>(tk.encode(opening, false, true),
                                                    std::make_shared<AutoCallConstraint>(tp, mk, schemas, fmt));
      const Completion c = eng.wait(eng.submit(std::move(r)));
      const std::string text = tk.decode(c.tokens, true);
      const std::string args = first_args(fmt, text, name);
      if (std::string(name) == "add") expect_add(args);
      else expect_weather(args);
    }
  }
}

}  // namespace call_constraint_test
