// Tool-call parsers on the exact text each model family writes (the strings come from the models'
// own documentation and chat templates: Qwen2.5 / Qwen3 function-calling docs, Meta's Llama 3.1
// prompt-format page, Mistral 7B Instruct v0.3 and Mistral Small 3.2 model cards), whole and streamed
// in every chunking, plus the request fields and the forced call's schema.
#include <gtest/gtest.h>

#include <random>

#include "sampling/json_schema.h"
#include "toolcall/parser.h"
#include "toolcall/tools.h"

namespace parser_test {

using namespace kvscope;
using namespace kvscope::toolcall;
using ojson = nlohmann::ordered_json;

namespace {

IdMaker fixed_ids() {
  return [](ToolFormat f, int i) { return (f == ToolFormat::Mistral ? std::string("abcdefgh") : "call_") + std::to_string(i); };
}

struct Result {
  std::string content;
  std::vector<ToolCall> calls;
};

// Feeds `text` in the given piece lengths; checks the deltas' invariants and returns what they add up to.
Result stream(ToolFormat f, const std::string& text, const std::vector<size_t>& cuts) {
  auto p = make_tool_call_parser(f, fixed_ids());
  Result r;
  auto take = [&](const ParseDelta& d) {
    r.content += d.content;
    for (const auto& c : d.calls) {
      if (c.index == static_cast<int>(r.calls.size())) {
        EXPECT_FALSE(c.name.empty()) << "a call's first delta names it";
        EXPECT_FALSE(c.id.empty());
        r.calls.push_back(ToolCall{c.id, c.name, c.arguments});
      } else {
        EXPECT_EQ(c.index, static_cast<int>(r.calls.size()) - 1) << "fragments go to the latest call";
        EXPECT_TRUE(c.name.empty() && c.id.empty());
        r.calls.back().arguments += c.arguments;
      }
    }
  };
  size_t at = 0;
  for (size_t n : cuts) {
    if (at >= text.size()) break;
    take(p->feed(text.substr(at, n)));
    at += n;
  }
  if (at < text.size()) take(p->feed(text.substr(at)));
  take(p->finish());
  // The parser's own record agrees with the streamed deltas.
  EXPECT_EQ(p->content(), r.content);
  EXPECT_EQ(p->calls().size(), r.calls.size());
  for (size_t i = 0; i < std::min(p->calls().size(), r.calls.size()); ++i) {
    EXPECT_EQ(p->calls()[i].name, r.calls[i].name);
    EXPECT_EQ(p->calls()[i].arguments, r.calls[i].arguments);
  }
  return r;
}

// Whole, byte by byte, and in random pieces: the same result each time.
Result parse_all_ways(ToolFormat f, const std::string& text) {
  const Result whole = stream(f, text, {text.size()});
  const Result bytes = stream(f, text, std::vector<size_t>(text.size(), 1));
  EXPECT_EQ(bytes.content, whole.content) << text;
  EXPECT_EQ(bytes.calls.size(), whole.calls.size()) << text;
  std::mt19937 rng(7);
  for (int t = 0; t < 20; ++t) {
    std::vector<size_t> cuts;
    for (size_t n = 0; n < text.size();) cuts.push_back(1 + rng() % 9), n += cuts.back();
    const Result r = stream(f, text, cuts);
    EXPECT_EQ(r.content, whole.content) << text;
    EXPECT_EQ(r.calls.size(), whole.calls.size()) << text;
    for (size_t i = 0; i < std::min(r.calls.size(), whole.calls.size()); ++i) {
      EXPECT_EQ(r.calls[i].name, whole.calls[i].name);
      EXPECT_EQ(r.calls[i].arguments, whole.calls[i].arguments);
      EXPECT_EQ(r.calls[i].id, whole.calls[i].id);
    }
  }
  return whole;
}

void expect_call(const Result& r, size_t i, const std::string& name, const std::string& args) {
  ASSERT_LT(i, r.calls.size());
  EXPECT_EQ(r.calls[i].name, name);
  EXPECT_EQ(r.calls[i].arguments, args);
  EXPECT_TRUE(ojson::accept(r.calls[i].arguments)) << r.calls[i].arguments;
}

}  // namespace

TEST(ToolCallParser, HermesAndQwenCalls) {
  // Qwen2.5's documented answer: two parallel calls.
  const std::string qwen =
      "<tool_call>\n{\"name\": \"get_current_temperature\", \"arguments\": {\"location\": \"San Francisco, CA, USA\"}}\n</tool_call>\n"
      "<tool_call>\n{\"name\": \"get_temperature_date\", \"arguments\": {\"location\": \"San Francisco, CA, USA\", \"date\": "
      "\"2024-10-01\"}}\n</tool_call>";
  Result r = parse_all_ways(ToolFormat::Hermes, qwen);
  EXPECT_EQ(r.content, "");
  ASSERT_EQ(r.calls.size(), 2u);
  expect_call(r, 0, "get_current_temperature", R"({"location": "San Francisco, CA, USA"})");
  expect_call(r, 1, "get_temperature_date", R"({"location": "San Francisco, CA, USA", "date": "2024-10-01"})");
  EXPECT_EQ(r.calls[0].id, "call_0");
  EXPECT_EQ(r.calls[1].id, "call_1");

  // Content first (Hermes 3 and Qwen3 after its thinking), a call with nested arguments, no arguments.
  r = parse_all_ways(ToolFormat::Hermes,
                     "\n\nLet me look that up.\n<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"a \\\"b\\\" }{\", "
                     "\"filters\": {\"tags\": [\"x\", {\"y\": null}]}, \"n\": 3}}\n</tool_call>\n");
  EXPECT_EQ(r.content, "Let me look that up.");
  expect_call(r, 0, "search", R"({"q": "a \"b\" }{", "filters": {"tags": ["x", {"y": null}]}, "n": 3})");
  r = parse_all_ways(ToolFormat::Hermes, "<tool_call>\n{\"name\": \"now\"}\n</tool_call>");
  expect_call(r, 0, "now", "{}");
  // Arguments written as a JSON string, arguments before the name.
  r = parse_all_ways(ToolFormat::Hermes, "<tool_call>{\"arguments\": \"{\\\"a\\\": 1}\", \"name\": \"f\"}</tool_call>");
  expect_call(r, 0, "f", R"({"a": 1})");
}

TEST(ToolCallParser, HermesKeepsWhatIsNotACall) {
  // Text that starts like the marker but is not one, a marker followed by no JSON, plain answers.
  Result r = parse_all_ways(ToolFormat::Hermes, "Use <tool> tags, or <tool_cal.");
  EXPECT_EQ(r.content, "Use <tool> tags, or <tool_cal.");
  EXPECT_TRUE(r.calls.empty());
  r = parse_all_ways(ToolFormat::Hermes, "<tool_call>not json</tool_call> done");
  EXPECT_EQ(r.content, "<tool_call>not json</tool_call> done");
  EXPECT_TRUE(r.calls.empty());
  r = parse_all_ways(ToolFormat::Hermes, "The answer is 42.\n");
  EXPECT_EQ(r.content, "The answer is 42.\n");
  // Held back while it may be a marker: nothing of "<tool_c" is shown until it is decided.
  auto p = make_tool_call_parser(ToolFormat::Hermes, fixed_ids());
  EXPECT_EQ(p->feed("Hi <tool_c").content, "Hi");
  const ParseDelta d = p->feed("all>{\"name\": \"f\", \"arguments\": {\"x\": 1");
  EXPECT_EQ(d.content, "");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].name, "f");
  EXPECT_EQ(d.calls[0].arguments, "{\"x\": 1");
  // Cut off by max_tokens inside the arguments: the call is kept as written so far.
  const ParseDelta e = p->finish();
  EXPECT_TRUE(e.content.empty());
  ASSERT_EQ(p->calls().size(), 1u);
  EXPECT_EQ(p->calls()[0].arguments, "{\"x\": 1");
  // Cut off before the name is whole: the text is content.
  r = parse_all_ways(ToolFormat::Hermes, "ok <tool_call>\n{\"name\": \"ge");
  EXPECT_EQ(r.content, "ok <tool_call>\n{\"name\": \"ge");
  EXPECT_TRUE(r.calls.empty());
}

TEST(ToolCallParser, Llama3JsonAndPythonTag) {
  // Meta's Llama 3.1 prompt-format page: JSON calls with "parameters".
  Result r = parse_all_ways(ToolFormat::Llama3,
                            "{\"name\": \"get_current_conditions\", \"parameters\": {\"location\": \"San Francisco, CA\", \"unit\": "
                            "\"Fahrenheit\"}}");
  EXPECT_EQ(r.content, "");
  expect_call(r, 0, "get_current_conditions", R"({"location": "San Francisco, CA", "unit": "Fahrenheit"})");
  r = parse_all_ways(ToolFormat::Llama3, "<|python_tag|>{\"name\": \"trending_songs\", \"parameters\": {\"n\": \"10\", \"genre\": \"all\"}}");
  expect_call(r, 0, "trending_songs", R"({"n": "10", "genre": "all"})");
  // The OpenAI-like variant with a type, several calls separated by ';'.
  r = parse_all_ways(ToolFormat::Llama3,
                     "{\"type\": \"function\", \"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": {\"x\": -1.5e3}}");
  ASSERT_EQ(r.calls.size(), 2u);
  expect_call(r, 0, "a", "{}");
  expect_call(r, 1, "b", R"({"x": -1.5e3})");
  // An answer in words, or JSON that is not a call, is content.
  r = parse_all_ways(ToolFormat::Llama3, "The weather in Paris is sunny.");
  EXPECT_EQ(r.content, "The weather in Paris is sunny.");
  EXPECT_TRUE(r.calls.empty());
  r = parse_all_ways(ToolFormat::Llama3, "{\"answer\": 4}");
  EXPECT_EQ(r.content, "{\"answer\": 4}");
  EXPECT_TRUE(r.calls.empty());
}

TEST(ToolCallParser, MistralArraysAndArgsForm) {
  // Mistral 7B Instruct v0.3 (with the space) and Nemo (without).
  Result r = parse_all_ways(ToolFormat::Mistral,
                            "[TOOL_CALLS] [{\"name\": \"get_current_weather\", \"arguments\": {\"location\": \"Paris, France\", "
                            "\"format\": \"celsius\"}}]");
  EXPECT_EQ(r.content, "");
  expect_call(r, 0, "get_current_weather", R"({"location": "Paris, France", "format": "celsius"})");
  EXPECT_EQ(r.calls[0].id.size(), 9u);
  r = parse_all_ways(ToolFormat::Mistral,
                     "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": {\"y\": [2]}, \"id\": \"Zz9Zz9Zz9\"}]");
  ASSERT_EQ(r.calls.size(), 2u);
  expect_call(r, 0, "a", R"({"x": 1})");
  expect_call(r, 1, "b", R"({"y": [2]})");
  // Mistral Small 3.2 / Devstral: name[ARGS]arguments, one marker per call, after content.
  r = parse_all_ways(ToolFormat::Mistral,
                     "Checking both.[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]get_time[ARGS]{\"tz\": \"CET\"}");
  EXPECT_EQ(r.content, "Checking both.");
  ASSERT_EQ(r.calls.size(), 2u);
  expect_call(r, 0, "get_weather", R"({"city": "Paris"})");
  expect_call(r, 1, "get_time", R"({"tz": "CET"})");
  r = parse_all_ways(ToolFormat::Mistral, "Use [TOOL] or [TOOL_CALL words.");
  EXPECT_EQ(r.content, "Use [TOOL] or [TOOL_CALL words.");
  EXPECT_TRUE(r.calls.empty());
}

TEST(ToolCallParser, GenericJson) {
  Result r = parse_all_ways(ToolFormat::Generic,
                            "{\"tool_calls\": [{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}, {\"name\": \"neg\", "
                            "\"arguments\": {\"a\": 3}}]}");
  ASSERT_EQ(r.calls.size(), 2u);
  expect_call(r, 0, "add", R"({"a": 1, "b": 2})");
  expect_call(r, 1, "neg", R"({"a": 3})");
  EXPECT_EQ(r.content, "");
  r = parse_all_ways(ToolFormat::Generic, "{\"tool_call\": {\"name\": \"f\", \"arguments\": {}}}");
  expect_call(r, 0, "f", "{}");
  r = parse_all_ways(ToolFormat::Generic, "{\"name\": \"f\", \"arguments\": {\"k\": true}}");
  expect_call(r, 0, "f", R"({"k": true})");
  r = parse_all_ways(ToolFormat::Generic, "{\"response\": \"It is \\\"sunny\\\".\"}");
  EXPECT_EQ(r.content, "It is \"sunny\".");
  EXPECT_TRUE(r.calls.empty());
  r = parse_all_ways(ToolFormat::Generic, "Just words.");
  EXPECT_EQ(r.content, "Just words.");
}

TEST(ToolCallParser, FormatsByTemplateAndName) {
  EXPECT_EQ(detect_tool_format("{%- if tools %}...<tool_call>\\n{\"name\": <function-name>...<|im_start|>"), ToolFormat::Hermes);
  EXPECT_EQ(detect_tool_format("<|start_header_id|>ipython<|end_header_id|> \"parameters\": "), ToolFormat::Llama3);
  EXPECT_EQ(detect_tool_format("{{- \"[TOOL_CALLS] [\" }} [INST]"), ToolFormat::Mistral);
  EXPECT_EQ(detect_tool_format("<|im_start|>{{ message.content }}"), ToolFormat::Generic);
  EXPECT_EQ(tool_format_from_name("qwen3"), ToolFormat::Hermes);
  try {
    tool_format_from_name("xml");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("known: hermes, llama3, mistral, generic"), std::string::npos);
  }
  EXPECT_EQ(random_call_id(ToolFormat::Hermes, 1).rfind("call_", 0), 0u);
  EXPECT_EQ(random_call_id(ToolFormat::Hermes, 1).size(), 29u);
  EXPECT_NE(random_call_id(ToolFormat::Mistral, 1), random_call_id(ToolFormat::Mistral, 2));
}

namespace {

const char* kWeatherTools = R"([
  {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
                   "required": ["city", "unit"], "additionalProperties": false}}},
  {"type": "function", "function": {"name": "add", "parameters": {"type": "object",
    "properties": {"a": {"$ref": "#/$defs/N"}, "b": {"$ref": "#/$defs/N"}}, "required": ["a", "b"],
    "$defs": {"N": {"type": "integer"}}}}}
])";

std::string tool_error(const char* tools, const char* choice, const char* parallel = nullptr, Api api = Api::Chat) {
  const ojson t = tools ? ojson::parse(tools) : ojson();
  const ojson c = choice ? ojson::parse(choice) : ojson();
  const ojson p = parallel ? ojson::parse(parallel) : ojson();
  try {
    parse_tool_spec(tools ? &t : nullptr, choice ? &c : nullptr, parallel ? &p : nullptr, api);
  } catch (const ToolError& e) {
    return e.param + " | " + e.what();
  }
  return "accepted";
}

}  // namespace

TEST(ToolSpec, ReadsChatAndResponsesShapes) {
  const ojson tools = ojson::parse(kWeatherTools);
  const ojson choice = ojson::parse(R"({"type": "function", "function": {"name": "add"}})");
  const ojson par = false;
  const ToolSpec s = parse_tool_spec(&tools, &choice, &par);
  ASSERT_EQ(s.tools.size(), 2u);
  EXPECT_EQ(s.tools[0].description, "Weather in a city");
  EXPECT_EQ(s.choice, ChoiceKind::Function);
  EXPECT_EQ(s.choice_name, "add");
  EXPECT_FALSE(s.parallel);
  EXPECT_EQ(s.template_tools[1]["function"]["name"], "add");
  const ojson flat = ojson::parse(R"([{"type": "function", "name": "f", "parameters": {"type": "object"}, "strict": true}])");
  const ojson req = "required";
  const ToolSpec r = parse_tool_spec(&flat, &req, nullptr, Api::Responses);
  EXPECT_EQ(r.choice, ChoiceKind::Required);
  EXPECT_TRUE(r.tools[0].strict);
  EXPECT_EQ(r.template_tools[0]["function"]["parameters"]["type"], "object");
  // Defaults: no parameters is an empty object schema, tool_choice auto, parallel calls on.
  const ojson bare = ojson::parse(R"([{"type": "function", "function": {"name": "now"}}])");
  const ToolSpec b = parse_tool_spec(&bare, nullptr, nullptr);
  EXPECT_EQ(b.choice, ChoiceKind::Auto);
  EXPECT_TRUE(b.parallel);
  EXPECT_EQ(b.tools[0].parameters["type"], "object");
}

TEST(ToolSpec, NamesTheFieldThatIsWrong) {
  auto has = [](const std::string& got, const char* want) { EXPECT_NE(got.find(want), std::string::npos) << got; };
  has(tool_error(R"({"type": "function"})", nullptr), "tools | ");
  has(tool_error(R"([{"function": {"name": "f"}}])", nullptr), "tools[0].type | ");
  has(tool_error(R"([{"type": "web_search"}])", nullptr), "'web_search' is not supported");
  has(tool_error(R"([{"type": "function", "function": {"name": "a b"}}])", nullptr), "tools[0].function.name | ");
  has(tool_error(R"([{"type": "function", "function": {"description": "x"}}])", nullptr), "tools[0].function.name | ");
  has(tool_error(R"([{"type": "function", "function": {"name": "f", "parameters": "x"}}])", nullptr), "tools[0].function.parameters | ");
  has(tool_error(R"([{"type": "function", "function": {"name": "f"}}, {"type": "function", "function": {"name": "f"}}])", nullptr),
      "given twice");
  has(tool_error(kWeatherTools, R"("sometimes")"), "tool_choice | ");
  has(tool_error(kWeatherTools, R"({"type": "function", "function": {"name": "nope"}})"), "tool_choice.function.name | ");
  has(tool_error(nullptr, R"("required")"), "needs 'tools'");
  has(tool_error(kWeatherTools, nullptr, "1"), "parallel_tool_calls | ");
  has(tool_error(R"([{"type": "function", "name": "f"}])", R"({"type": "function", "name": "g"})", nullptr, Api::Responses),
      "tool_choice.name | ");
  EXPECT_EQ(tool_error(nullptr, R"("none")"), "accepted");
  EXPECT_EQ(tool_error("[]", R"("auto")"), "accepted");
}

TEST(ForcedCall, SchemaCompilesAndAcceptsTheCall) {
  const ojson tools = ojson::parse(kWeatherTools);
  const ojson named = ojson::parse(R"({"type": "function", "function": {"name": "add"}})");
  const ToolSpec s = parse_tool_spec(&tools, &named, nullptr);
  auto accepts = [](const ForcedCall& fc, const std::string& json) {
    const JsonSchema js(fc.schema);
    SchemaCursor c(js);
    return c.push(json) && c.ended();
  };
  const ForcedCall h = forced_call(s, ToolFormat::Hermes);
  EXPECT_EQ(h.prefix, "<tool_call>\n");
  EXPECT_EQ(h.suffix, "\n</tool_call>");
  EXPECT_TRUE(accepts(h, R"({"name":"add","arguments":{"a":1,"b":-2}})")) << h.schema.dump();
  EXPECT_FALSE(accepts(h, R"({"name":"add","arguments":{"a":1.5,"b":-2}})"));
  EXPECT_FALSE(accepts(h, R"({"name":"get_weather","arguments":{}})"));
  EXPECT_TRUE(accepts(forced_call(s, ToolFormat::Llama3), R"({"name":"add","parameters":{"a":1,"b":2}})"));
  const ForcedCall m = forced_call(s, ToolFormat::Mistral);
  EXPECT_EQ(m.prefix, "[TOOL_CALLS]");
  EXPECT_TRUE(accepts(m, R"([{"name":"add","arguments":{"a":1,"b":2}}])"));
  EXPECT_FALSE(accepts(m, R"([{"name":"add","arguments":{"a":1,"b":2}},)"));  // one call to a named function
  // What the forced text parses back to, through the family's parser.
  auto p = make_tool_call_parser(ToolFormat::Hermes, fixed_ids());
  p->feed(h.prefix + R"({"name":"add","arguments":{"a":1,"b":-2}})" + h.suffix);
  p->finish();
  ASSERT_EQ(p->calls().size(), 1u);
  EXPECT_EQ(p->calls()[0].arguments, R"({"a":1,"b":-2})");
  EXPECT_THROW(forced_call(parse_tool_spec(&tools, nullptr, nullptr), ToolFormat::Hermes), InputError);
  // "required" with two tools: the name decides which arguments follow; each tool's $defs keep working.
  const ojson req = "required";
  const ToolSpec any = parse_tool_spec(&tools, &req, nullptr);
  const ForcedCall g = forced_call(any, ToolFormat::Generic);
  EXPECT_TRUE(accepts(g, R"({"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris","unit":"c"}},)"
                         R"({"name":"add","arguments":{"a":1,"b":2}}]})"))
      << g.schema.dump();
  EXPECT_FALSE(accepts(g, R"({"tool_calls":[{"name":"add","arguments":{"city":"Paris","unit":"c"}}]})"));
  EXPECT_FALSE(accepts(g, R"({"tool_calls":[]})"));
  EXPECT_TRUE(accepts(forced_call(any, ToolFormat::Hermes), R"({"name":"get_weather","arguments":{"city":"","unit":"f"}})"));
}

}  // namespace parser_test
