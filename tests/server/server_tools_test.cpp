// Tool calling on /v1/chat/completions with the random-weight tool models of each family
// (fixtures::tool_model): tool_choice required or a named function decodes the arguments under the
// function's schema, so they always parse whatever the weights; the call comes back as
// message.tool_calls or streamed delta.tool_calls with finish_reason "tool_calls"; tool messages and
// assistant calls in the history go through the chat template.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "server_test_util.h"

namespace server_tools_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {

server::Server& family_server(const std::string& family) {
  static std::map<std::string, std::unique_ptr<server::Server>> servers;
  auto& s = servers[family];
  if (!s) {
    auto o = test_options();
    o.model_path = fixtures::tool_model(family);
    s = start_server(o);
  }
  return *s;
}

const json kWeather = {{"type", "function"},
                       {"function",
                        {{"name", "get_weather"},
                         {"parameters",
                          {{"type", "object"},
                           {"properties",
                            {{"city", {{"type", "string"}, {"maxLength", 6}}},
                             {"unit", {{"type", "string"}, {"enum", {"celsius", "fahrenheit"}}}}}},
                           {"required", {"city", "unit"}},
                           {"additionalProperties", false}}}}}};
const json kAdd = {{"type", "function"},
                   {"function",
                    {{"name", "add"},
                     {"parameters",
                      {{"type", "object"},
                       {"properties", {{"a", {{"type", "integer"}, {"minimum", 0}, {"maximum", 999}}},
                                       {"b", {{"type", "integer"}, {"minimum", 0}, {"maximum", 999}}}}},
                       {"required", {"a", "b"}}}}}}};

// The tool models' vocabulary is byte-level: the tools are small so prompts and calls stay short.
json chat_body(json tool_choice, json tools = {kWeather}) {
  return {{"messages", {{{"role", "user"}, {"content", "Weather in Paris?"}}}},
          {"tools", std::move(tools)},
          {"tool_choice", std::move(tool_choice)},
          {"temperature", 0},
          {"max_tokens", 160}};
}

// The data payloads of an SSE body, [DONE] left out.
std::vector<json> sse_chunks(const std::string& body) {
  std::vector<json> out;
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("data: ", 0) == 0 && line != "data: [DONE]") out.push_back(json::parse(line.substr(6)));
  return out;
}

void expect_weather_args(const std::string& args) {
  const json a = json::parse(args);  // throws (fails the test) when the arguments do not parse
  ASSERT_TRUE(a.is_object()) << args;
  ASSERT_TRUE(a.contains("city") && a["city"].is_string()) << args;
  EXPECT_LE(a["city"].get<std::string>().size(), 6u * 4) << args;  // characters, up to 4 bytes each
  ASSERT_TRUE(a.contains("unit")) << args;
  EXPECT_TRUE(a["unit"] == "celsius" || a["unit"] == "fahrenheit") << args;
  EXPECT_EQ(a.size(), 2u) << args;
}

class ToolFamilies : public ::testing::TestWithParam<std::string> {};

TEST_P(ToolFamilies, NamedFunctionCallParsesUnderItsSchema) {
  const int port = family_server(GetParam()).port();
  auto r = post(port, "/v1/chat/completions", chat_body({{"type", "function"}, {"function", {{"name", "get_weather"}}}}));
  ASSERT_EQ(r.status, 200) << r.body;
  const json c = r.j()["choices"][0];
  EXPECT_EQ(c["finish_reason"], "tool_calls") << r.body;
  ASSERT_TRUE(c["message"].contains("tool_calls")) << r.body;
  const json& calls = c["message"]["tool_calls"];
  ASSERT_EQ(calls.size(), 1u) << r.body;
  EXPECT_EQ(calls[0]["type"], "function");
  EXPECT_FALSE(calls[0]["id"].get<std::string>().empty());
  EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
  expect_weather_args(calls[0]["function"]["arguments"].get<std::string>());
  EXPECT_TRUE(c["message"]["content"].is_null()) << r.body;
}

TEST_P(ToolFamilies, RequiredCallsOneOfTheTools) {
  const int port = family_server(GetParam()).port();
  for (int seed = 1; seed <= 3; ++seed) {
    json b = chat_body("required", {kWeather, kAdd});
    b["parallel_tool_calls"] = false;  // one call: a parallel array may run past the short max_tokens
    b["temperature"] = 1.0;
    b["seed"] = seed;
    auto r = post(port, "/v1/chat/completions", b);
    ASSERT_EQ(r.status, 200) << r.body;
    const json c = r.j()["choices"][0];
    EXPECT_EQ(c["finish_reason"], "tool_calls") << r.body;
    ASSERT_GE(c["message"]["tool_calls"].size(), 1u) << r.body;
    for (const auto& call : c["message"]["tool_calls"]) {
      const std::string name = call["function"]["name"];
      const json a = json::parse(call["function"]["arguments"].get<std::string>());
      if (name == "get_weather") {
        expect_weather_args(a.dump());
      } else {
        ASSERT_EQ(name, "add") << r.body;
        ASSERT_TRUE(a["a"].is_number_integer() && a["b"].is_number_integer()) << r.body;
        EXPECT_LE(a["a"].get<int>(), 999);
      }
    }
  }
}

TEST_P(ToolFamilies, StreamedCallMatchesTheBody) {
  const int port = family_server(GetParam()).port();
  const json choice = {{"type", "function"}, {"function", {{"name", "get_weather"}}}};
  auto whole = post(port, "/v1/chat/completions", chat_body(choice));
  ASSERT_EQ(whole.status, 200) << whole.body;
  const json call = whole.j()["choices"][0]["message"]["tool_calls"][0];
  json b = chat_body(choice);
  b["stream"] = true;
  auto r = post(port, "/v1/chat/completions", b);
  ASSERT_EQ(r.status, 200) << r.body;
  std::string args, name, finish;
  int first_pieces = 0;
  for (const auto& ch : sse_chunks(r.body)) {
    const json& c = ch["choices"][0];
    if (!c["finish_reason"].is_null()) finish = c["finish_reason"];
    if (!c["delta"].contains("tool_calls")) continue;
    const json& t = c["delta"]["tool_calls"][0];
    EXPECT_EQ(t["index"], 0);
    if (t.contains("id")) {
      ++first_pieces;
      EXPECT_EQ(t["type"], "function");
      EXPECT_FALSE(t["id"].get<std::string>().empty());
      name = t["function"]["name"];
    } else {
      EXPECT_FALSE(t["function"].contains("name")) << "the name comes with the first piece only";
    }
    args += t["function"]["arguments"].get<std::string>();
  }
  EXPECT_EQ(first_pieces, 1);
  EXPECT_EQ(name, "get_weather");
  EXPECT_EQ(finish, "tool_calls");
  EXPECT_EQ(json::parse(args), json::parse(call["function"]["arguments"].get<std::string>())) << args;
}

TEST_P(ToolFamilies, ToolResultsInTheHistoryAreRendered) {
  const int port = family_server(GetParam()).port();
  // The Mistral templates take 9-character call ids.
  const json call = {{"id", "abcDEF123"}, {"type", "function"},
                     {"function", {{"name", "get_weather"}, {"arguments", "{\"city\": \"Paris\", \"unit\": \"celsius\"}"}}}};
  json msgs = {{{"role", "user"}, {"content", "What is the weather in Paris?"}},
               {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", {call}}},
               {{"role", "tool"}, {"tool_call_id", "abcDEF123"}, {"content", "sunny, 21 degrees celsius"}}};
  json b = {{"messages", msgs}, {"tools", {kWeather}}, {"max_tokens", 2}, {"temperature", 0}};
  auto with = post(port, "/v1/chat/completions", b);
  ASSERT_EQ(with.status, 200) << with.body;
  // The tool result is part of the prompt: a longer one makes a longer prompt.
  b["messages"][2]["content"] = "sunny, 21 degrees celsius, light wind from the west, no rain expected today";
  auto longer = post(port, "/v1/chat/completions", b);
  ASSERT_EQ(longer.status, 200) << longer.body;
  EXPECT_GT(longer.j()["usage"]["prompt_tokens"].get<int>(), with.j()["usage"]["prompt_tokens"].get<int>());
  // A tool message must name the call it answers.
  b["messages"][2].erase("tool_call_id");
  auto bad = post(port, "/v1/chat/completions", b);
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(bad.j()["error"]["param"], "messages[2].tool_call_id") << bad.body;
}

INSTANTIATE_TEST_SUITE_P(Server, ToolFamilies, ::testing::Values("hermes", "llama3", "mistral"));

TEST(ServerTools, ToolChoiceNoneShowsToolsButCallsNothing) {
  const int port = family_server("hermes").port();
  json b = chat_body("none");
  b["max_tokens"] = 4;
  auto r = post(port, "/v1/chat/completions", b);
  ASSERT_EQ(r.status, 200) << r.body;
  const json c = r.j()["choices"][0];
  EXPECT_FALSE(c["message"].contains("tool_calls")) << r.body;
  EXPECT_NE(c["finish_reason"], "tool_calls");
  b.erase("tools");
  b.erase("tool_choice");
  auto bare = post(port, "/v1/chat/completions", b);
  ASSERT_EQ(bare.status, 200) << bare.body;
  // The template's tools section is in the prompt.
  EXPECT_GT(r.j()["usage"]["prompt_tokens"].get<int>(), bare.j()["usage"]["prompt_tokens"].get<int>() + 20);
}

TEST(ServerTools, BadToolFieldsNameTheField) {
  const int port = family_server("hermes").port();
  auto r = post(port, "/v1/chat/completions", chat_body({{"type", "function"}, {"function", {{"name", "nope"}}}}));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.j()["error"]["param"].get<std::string>().rfind("tool_choice", 0), 0u) << r.body;
  json b = chat_body("required");
  b["response_format"] = {{"type", "json_object"}};
  r = post(port, "/v1/chat/completions", b);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.j()["error"]["param"], "response_format") << r.body;
  b = chat_body("auto");
  b["functions"] = {kWeather["function"]};
  r = post(port, "/v1/chat/completions", b);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.j()["error"]["param"], "functions") << r.body;
}

TEST(ServerTools, SeveralChoicesEachCallTheTool) {
  const int port = family_server("hermes").port();
  json b = chat_body({{"type", "function"}, {"function", {{"name", "get_weather"}}}});
  b["n"] = 2;
  b["temperature"] = 1.0;
  auto r = post(port, "/v1/chat/completions", b);
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = r.j();  // r.j() parses anew: iterate a copy that outlives the loop
  ASSERT_EQ(body["choices"].size(), 2u);
  for (const auto& c : body["choices"]) {
    EXPECT_EQ(c["finish_reason"], "tool_calls") << r.body;
    expect_weather_args(c["message"]["tool_calls"][0]["function"]["arguments"].get<std::string>());
  }
}

}  // namespace

namespace {

// x-request-id on every response: the client's own when usable, else a fresh one per response.
TEST(ServerRequestId, EveryResponseCarriesOne) {
  const int port = family_server("hermes").port();
  auto a = post(port, "/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 1}});
  auto b = post(port, "/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 1}});
  ASSERT_EQ(a.status, 200);
  ASSERT_TRUE(a.headers.count("x-request-id") && b.headers.count("x-request-id"));
  EXPECT_NE(a.headers["x-request-id"], b.headers["x-request-id"]);
  auto mine = post(port, "/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 1}},
                   {{"X-Request-Id", "trace-42"}});
  EXPECT_EQ(mine.headers["x-request-id"], "trace-42");
  auto err = post(port, "/v1/chat/completions", json::object(), {{"X-Request-Id", "trace-43"}});
  EXPECT_EQ(err.status, 400);
  EXPECT_EQ(err.headers["x-request-id"], "trace-43");
  auto stream = post(port, "/v1/chat/completions",
                     {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 1}, {"stream", true}});
  EXPECT_TRUE(stream.headers.count("x-request-id"));
  auto health = http(port, "GET", "/health");
  EXPECT_TRUE(health.headers.count("x-request-id"));
}

}  // namespace

namespace {

// The Responses API's function tools: flat tool definitions, function_call output items (whole and
// streamed), and function_call / function_call_output input items for the next turn.
json responses_tool() {
  json t = kWeather["function"];
  t["type"] = "function";
  return t;
}

TEST(ServerResponsesTools, FunctionCallItem) {
  const int port = family_server("hermes").port();
  const json body = {{"input", "Weather in Paris?"},
                     {"tools", {responses_tool()}},
                     {"tool_choice", {{"type", "function"}, {"name", "get_weather"}}},
                     {"temperature", 0},
                     {"max_output_tokens", 160}};
  auto r = post(port, "/v1/responses", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.j();
  EXPECT_EQ(j["status"], "completed") << r.body;
  ASSERT_EQ(j["output"].size(), 1u) << r.body;
  const json& item = j["output"][0];
  EXPECT_EQ(item["type"], "function_call");
  EXPECT_EQ(item["name"], "get_weather");
  EXPECT_EQ(item["status"], "completed");
  EXPECT_FALSE(item["call_id"].get<std::string>().empty());
  expect_weather_args(item["arguments"].get<std::string>());
  EXPECT_EQ(j["tools"].size(), 1u);

  json s = body;
  s["stream"] = true;
  auto st = post(port, "/v1/responses", s);
  ASSERT_EQ(st.status, 200) << st.body;
  std::string deltas, done_args;
  bool added = false, item_done = false;
  for (const auto& e : sse_chunks(st.body)) {
    const std::string type = e["type"];
    if (type == "response.output_item.added" && e["item"]["type"] == "function_call") {
      added = true;
      EXPECT_EQ(e["item"]["name"], "get_weather");
    }
    if (type == "response.function_call_arguments.delta") deltas += e["delta"].get<std::string>();
    if (type == "response.function_call_arguments.done") done_args = e["arguments"];
    if (type == "response.output_item.done" && e["item"]["type"] == "function_call") item_done = true;
    EXPECT_NE(type, "response.output_text.delta") << "a forced call writes no text";
  }
  EXPECT_TRUE(added && item_done) << st.body;
  EXPECT_EQ(deltas, done_args);
  EXPECT_EQ(json::parse(done_args), json::parse(item["arguments"].get<std::string>()));

  // The next turn sends the call and its output back.
  const json next = {{"input",
                      {{{"role", "user"}, {"content", "Weather in Paris?"}},
                       {{"type", "function_call"}, {"call_id", item["call_id"]}, {"name", "get_weather"}, {"arguments", item["arguments"]}},
                       {{"type", "function_call_output"}, {"call_id", item["call_id"]}, {"output", "sunny"}}}},
                     {"tools", {responses_tool()}},
                     {"max_output_tokens", 2}};
  auto a = post(port, "/v1/responses", next);
  ASSERT_EQ(a.status, 200) << a.body;
  json longer = next;
  longer["input"][2]["output"] = "sunny, 21 degrees celsius, light wind from the west, no rain expected";
  auto b = post(port, "/v1/responses", longer);
  ASSERT_EQ(b.status, 200) << b.body;
  EXPECT_GT(b.j()["usage"]["input_tokens"].get<int>(), a.j()["usage"]["input_tokens"].get<int>());
}

}  // namespace

namespace {

// Responses text.format on chat's JSON decoder: the output text parses, under the schema when one is given.
TEST(ServerResponsesTools, TextFormatJson) {
  const int port = family_server("hermes").port();
  const json schema = {{"type", "object"},
                       {"properties", {{"n", {{"type", "integer"}, {"minimum", 0}, {"maximum", 99}}}}},
                       {"required", {"n"}},
                       {"additionalProperties", false}};
  json body = {{"input", "A number?"},
               {"text", {{"format", {{"type", "json_schema"}, {"name", "num"}, {"schema", schema}, {"strict", true}}}}},
               {"temperature", 0},
               {"max_output_tokens", 40}};
  auto r = post(port, "/v1/responses", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.j();
  EXPECT_EQ(j["text"]["format"]["type"], "json_schema");
  const json out = json::parse(j["output"][0]["content"][0]["text"].get<std::string>());
  ASSERT_TRUE(out.is_object() && out.size() == 1 && out["n"].is_number_integer()) << r.body;
  EXPECT_LE(out["n"].get<int>(), 99);
  body["text"] = {{"format", {{"type", "json_object"}}}};
  body["max_output_tokens"] = 200;
  body["temperature"] = 1.0;
  body["seed"] = 3;
  r = post(port, "/v1/responses", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const json o = r.j();
  if (o["status"] == "completed") {
    EXPECT_TRUE(json::parse(o["output"][0]["content"][0]["text"].get<std::string>()).is_object()) << r.body;
  }
}

// The schema's property order survives the Responses request's translation: zod and Pydantic
// write properties in declaration order, and the output follows it (not the alphabet).
TEST(ServerResponsesTools, TextFormatKeepsThePropertyOrder) {
  const int port = family_server("hermes").port();
  const std::string body = R"({"input": "A record?", "temperature": 0, "max_output_tokens": 80,
    "text": {"format": {"type": "json_schema", "name": "rec", "strict": true, "schema": {"type": "object",
      "properties": {"zeta": {"type": "integer", "minimum": 0, "maximum": 9}, "alpha": {"type": "boolean"},
                     "mid": {"type": "string", "maxLength": 3}},
      "required": ["zeta", "alpha", "mid"], "additionalProperties": false}}}})";
  auto r = http(port, "POST", "/v1/responses", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string text = r.j()["output"][0]["content"][0]["text"];
  const auto out = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  for (const auto& [k, v] : out.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"zeta", "alpha", "mid"})) << text;
}

}  // namespace

namespace {

// In auto mode the parser reads the model's text with control-token markers written out: a Mistral
// model's [TOOL_CALLS] (a control token, as in Mistral's vocabularies, invisible in plain text)
// reaches it. Forced here with a logit bias; what follows is no call, so the parser hands the text
// back as content.
TEST(ServerTools, AutoModeSeesControlTokenMarkers) {
  RandomModelSpec spec = fixtures::tiny_spec(64, 2, 4, 2, 128, 512, 4096, 31);
  spec.arch = "mistral";
  spec.chat_template = Model::load(fixtures::tool_model("mistral"))->chat_template();
  spec.added_tokens = {"[TOOL_CALLS]"};  // a generated vocabulary takes it as a control token
  auto o = test_options();
  o.model_path = fixtures::model_file(spec, "tools-mistral-control");
  auto srv = start_server(o);
  const auto m = Model::load(o.model_path);
  const auto& toks = m->tokenizer().vocab().tokens;
  const auto it = std::find(toks.begin(), toks.end(), "[TOOL_CALLS]");
  ASSERT_NE(it, toks.end());
  const int id = static_cast<int>(it - toks.begin());
  json b = chat_body("auto");
  b["max_tokens"] = 2;
  b["logit_bias"] = {{std::to_string(id), 100}};
  auto r = post(srv->port(), "/v1/chat/completions", b);
  ASSERT_EQ(r.status, 200) << r.body;
  const json c = r.j()["choices"][0];
  ASSERT_TRUE(c["message"]["content"].is_string()) << r.body;
  EXPECT_NE(c["message"]["content"].get<std::string>().find("[TOOL_CALLS]"), std::string::npos) << r.body;
  EXPECT_FALSE(c["message"].contains("tool_calls")) << r.body;
}

}  // namespace

}  // namespace server_tools_test
