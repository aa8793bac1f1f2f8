// Structured output from reasoning models: response_format JSON and forced tool calls constrain only
// the answer after the reasoning ends (reasoning/answer_gate.h), so a thinking model reasons freely
// and still answers in JSON, at every effort. Chat logprobs: logprobs.content covers the answer's
// tokens only; the reasoning's come apart in logprobs.kvscope_reasoning, whole and streamed.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "fixtures.h"
#include "think_fixture.h"
#include "server_test_util.h"

namespace server_reasoning_json_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {

json chat(const std::string& q, json extra = json::object()) {
  json b = {{"messages", json::array({{{"role", "user"}, {"content", q}}})}, {"temperature", 0}, {"max_tokens", 60}};
  for (auto& [k, v] : extra.items()) b[k] = v;
  return b;
}

std::vector<json> sse_chunks(const std::string& body) {
  std::vector<json> out;
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("data: ", 0) == 0 && line != "data: [DONE]") out.push_back(json::parse(line.substr(6)));
  return out;
}

struct Streamed {
  std::string reasoning, content;
  json content_lp = json::array(), reasoning_lp = json::array();
};
Streamed read_stream(const std::string& body) {
  Streamed s;
  for (const json& j : sse_chunks(body)) {
    if (j["choices"].empty()) continue;
    const json& c = j["choices"][0];
    const json& d = c["delta"];
    if (d.contains("reasoning_content")) s.reasoning += d["reasoning_content"].get<std::string>();
    if (d.contains("content") && d["content"].is_string()) s.content += d["content"].get<std::string>();
    if (c["logprobs"].is_object()) {
      if (c["logprobs"]["content"].is_array())
        for (const auto& t : c["logprobs"]["content"]) s.content_lp.push_back(t);
      if (c["logprobs"].contains("kvscope_reasoning"))
        for (const auto& t : c["logprobs"]["kvscope_reasoning"]) s.reasoning_lp.push_back(t);
    }
  }
  return s;
}

std::string pieces(const json& lp) {
  std::string s;
  for (const auto& t : lp) s += t["token"].get<std::string>();
  return s;
}

const json kJsonObject = {{"type", "json_object"}};
// The answer's number in a field (compact JSON, so a short answer cap holds it).
const json kAnswerSchema = {{"type", "json_schema"},
                            {"json_schema",
                             {{"name", "answer"},
                              {"schema",
                               {{"type", "object"},
                                {"properties", {{"answer", {{"type", "integer"}, {"minimum", 0}, {"maximum", 999}}}}},
                                {"required", {"answer"}}}}}}};

std::string embedded() { return std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner.gguf"; }
std::string embedded_v1() { return std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.gguf"; }

const char* kQ = "Question: (1) Tom has 34 apples. (2) Tom buys 12 more apples. How many apples does Tom have now?";

// The content is a whole JSON object, and the stream writes the same reasoning and content.
void expect_json_answer(int port, const json& body, bool reasoning_expected, const std::string& what) {
  auto r = post(port, "/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << what << ": " << r.body;
  const json c = r.j()["choices"][0];
  const std::string content = c["message"]["content"].get<std::string>();
  EXPECT_EQ(c["finish_reason"], "stop") << what << ": " << r.body;
  const json parsed = json::parse(content, nullptr, false);
  EXPECT_TRUE(parsed.is_object()) << what << ": " << r.body;
  const json rc = c["message"]["reasoning_content"];
  if (reasoning_expected) {
    EXPECT_TRUE(rc.is_string() && !rc.get<std::string>().empty()) << what << ": " << r.body;
  }
  json sb = body;
  sb["stream"] = true;
  auto st = post(port, "/v1/chat/completions", sb);
  ASSERT_EQ(st.status, 200) << what;
  const Streamed s = read_stream(st.body);
  EXPECT_EQ(s.content, content) << what;
  EXPECT_EQ(s.reasoning, rc.is_string() ? rc.get<std::string>() : "") << what;
}

}  // namespace

// The embedded model (levels) thinks in its think block and answers in JSON after it, at effort none
// (its lowest level: an empty block, then the answer) and at high (the full working first), in a
// schema's field: the 4M-parameter model was never trained on JSON, and in an open json_object string
// it writes its working on until the token limit (stage 7 does so even at none). json_object is
// checked by where it starts and by the reasoning it leaves untouched.
TEST(ServerReasoningJson, EmbeddedModelAnswersInJsonAfterItsReasoning) {
  if (!std::filesystem::exists(embedded())) GTEST_SKIP() << "no embedded reasoner";
  auto o = test_options();
  o.model_path = embedded();
  o.signals = false;
  auto srv = start_server(o);
  expect_json_answer(srv->port(), chat(kQ, {{"response_format", kAnswerSchema}, {"reasoning_effort", "none"}}), false,
                     "levels/none");
  expect_json_answer(srv->port(), chat(kQ, {{"response_format", kAnswerSchema}, {"reasoning_effort", "high"}, {"max_tokens", 160}}),
                     true, "levels/high");
  // The reasoning is the model's own, untouched by the constraint: the same as without JSON.
  auto plain = post(srv->port(), "/v1/chat/completions", chat(kQ, {{"reasoning_effort", "high"}, {"max_tokens", 160}}));
  auto js = post(srv->port(), "/v1/chat/completions",
                 chat(kQ, {{"response_format", kJsonObject}, {"reasoning_effort", "high"}, {"max_tokens", 160}}));
  ASSERT_EQ(plain.status, 200);
  ASSERT_EQ(js.status, 200);
  EXPECT_EQ(js.j()["choices"][0]["message"]["reasoning_content"], plain.j()["choices"][0]["message"]["reasoning_content"]);
  EXPECT_EQ(js.j()["choices"][0]["message"]["content"].get<std::string>().rfind("{", 0), 0u) << js.body;
}

// The first reasoner (kvscope format; its mode line is in the prompt): its working is the
// reasoning, and the JSON starts after its "Answer:" cue, in fast mode (effort none: no working) and
// slow (high). Its fast mode caps the attempt at 16 tokens, so the answer is a compact schema's.
TEST(ServerReasoningJson, FirstReasonerAnswersInJsonAfterItsCue) {
  if (!std::filesystem::exists(embedded_v1())) GTEST_SKIP() << "no first reasoner";
  auto o = test_options();
  o.model_path = embedded_v1();
  o.signals = false;
  auto srv = start_server(o);
  for (const char* effort : {"none", "high"}) {
    auto r = post(srv->port(), "/v1/chat/completions",
                  chat(kQ, {{"response_format", kAnswerSchema}, {"reasoning_effort", effort}, {"max_tokens", 120}}));
    ASSERT_EQ(r.status, 200) << effort << ": " << r.body;
    const json m = r.j()["choices"][0]["message"];
    const json a = json::parse(m["content"].get<std::string>(), nullptr, false);
    EXPECT_TRUE(a.is_object() && a["answer"].is_number_integer()) << effort << ": " << r.body;
    if (std::string(effort) == "high") {
      EXPECT_TRUE(m["reasoning_content"].is_string() && !m["reasoning_content"].get<std::string>().empty()) << r.body;
    }
  }
}

// A think-format model: effort none leaves the think block empty and the whole response is the
// JSON; with thinking the budget's cut closes the block and the JSON follows it.
TEST(ServerReasoningJson, ThinkFormatJsonAfterTheThinkBlock) {
  auto o = test_options();
  o.model_path = fixtures::think_model();
  o.signals = false;
  o.effort_budgets = {6, 12};
  auto srv = start_server(o);
  // The random weights write noise: a bias towards JSON's punctuation lets the object close.
  json bias = json::object();
  {
    auto m = Model::load(fixtures::think_model());
    const auto& tk = m->tokenizer();
    for (int id = 0; id < tk.n_vocab(); ++id) {
      const std::string p = tk.token_to_piece(id);
      if (p == "{" || p == "}" || p == " {" || p == " }") bias[std::to_string(id)] = 30;
    }
  }
  ASSERT_FALSE(bias.empty());
  auto none = post(srv->port(), "/v1/chat/completions",
                   chat("hi", {{"response_format", kJsonObject}, {"reasoning_effort", "none"}, {"logit_bias", bias}}));
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_TRUE(json::parse(none.j()["choices"][0]["message"]["content"].get<std::string>(), nullptr, false).is_object())
      << none.body;
  EXPECT_TRUE(none.j()["choices"][0]["message"]["reasoning_content"].is_null()) << none.body;
  EXPECT_EQ(none.j()["usage"]["completion_tokens_details"]["reasoning_tokens"], 0);
  // With thinking the reasoning is free text (the bias reaches it too) until the budget's cut closes it.
  for (const json& extra : {json{{"reasoning_effort", "low"}}, json{{"reasoning_effort", "high"}, {"thinking_token_budget", 8}}}) {
    json b = chat("hi", {{"response_format", kJsonObject}, {"logit_bias", bias}});
    for (auto& [k, v] : extra.items()) b[k] = v;
    expect_json_answer(srv->port(), b, true, extra.dump());
    auto r = post(srv->port(), "/v1/chat/completions", b);
    EXPECT_EQ(r.j()["kvscope"]["reasoning"]["budget_cut"], true) << r.body;
  }
}

// tool_choice required on a thinking request: the model thinks, and the call's arguments are
// decoded under the function's schema after the think block closes.
TEST(ServerReasoningJson, ForcedToolCallAfterTheReasoning) {
  auto o = test_options();
  o.model_path = fixtures::think_model();
  o.signals = false;
  o.effort_budgets = {6, 12};
  auto srv = start_server(o);
  const json add = {{"type", "function"},
                    {"function",
                     {{"name", "add"},
                      {"parameters",
                       {{"type", "object"},
                        {"properties", {{"a", {{"type", "integer"}, {"minimum", 0}, {"maximum", 99}}},
                                        {"b", {{"type", "integer"}, {"minimum", 0}, {"maximum", 99}}}}},
                        {"required", {"a", "b"}}}}}}};
  for (const char* effort : {"low", "none"}) {
    // One call: a parallel array may run past max_tokens on random weights.
    json b = chat("add 2 and 3", {{"tools", {add}}, {"tool_choice", "required"}, {"parallel_tool_calls", false},
                                  {"reasoning_effort", effort}, {"max_tokens", 80}});
    auto r = post(srv->port(), "/v1/chat/completions", b);
    ASSERT_EQ(r.status, 200) << effort << ": " << r.body;
    const json c = r.j()["choices"][0];
    EXPECT_EQ(c["finish_reason"], "tool_calls") << effort << ": " << r.body;
    ASSERT_EQ(c["message"]["tool_calls"].size(), 1u) << effort << ": " << r.body;
    const json a = json::parse(c["message"]["tool_calls"][0]["function"]["arguments"].get<std::string>());
    EXPECT_TRUE(a["a"].is_number_integer() && a["b"].is_number_integer()) << r.body;
    if (std::string(effort) == "low") {
      EXPECT_TRUE(c["message"]["reasoning_content"].is_string()) << r.body;
      EXPECT_EQ(r.j()["kvscope"]["reasoning"]["budget_cut"], true) << r.body;
    }
  }
}

// logprobs.content is the answer's tokens only; the reasoning's are in logprobs.kvscope_reasoning,
// and together they are every generated token.
TEST(ServerReasoningJson, LogprobsCoverContentOnly) {
  if (!std::filesystem::exists(embedded())) GTEST_SKIP() << "no embedded reasoner";
  auto o = test_options();
  o.model_path = embedded();
  o.signals = false;
  auto srv = start_server(o);
  const json b = chat(kQ, {{"reasoning_effort", "medium"}, {"max_tokens", 120}, {"logprobs", true}, {"top_logprobs", 2}});
  auto r = post(srv->port(), "/v1/chat/completions", b);
  ASSERT_EQ(r.status, 200) << r.body;
  const json c = r.j()["choices"][0];
  const std::string content = c["message"]["content"];
  const std::string reasoning = c["message"]["reasoning_content"];
  ASSERT_EQ(content, "Answer: 46") << r.body;
  const json& lp = c["logprobs"];
  ASSERT_TRUE(lp["content"].is_array() && lp["kvscope_reasoning"].is_array()) << r.body;
  EXPECT_EQ(pieces(lp["content"]), content);
  EXPECT_NE(pieces(lp["kvscope_reasoning"]).find(reasoning), std::string::npos) << pieces(lp["kvscope_reasoning"]);
  EXPECT_EQ(lp["content"].size() + lp["kvscope_reasoning"].size(), r.j()["usage"]["completion_tokens"].get<size_t>());
  EXPECT_EQ(lp["content"][0]["top_logprobs"].size(), 2u);
  json sb = b;
  sb["stream"] = true;
  auto st = post(srv->port(), "/v1/chat/completions", sb);
  ASSERT_EQ(st.status, 200);
  const Streamed s = read_stream(st.body);
  EXPECT_EQ(s.content_lp, lp["content"]);
  EXPECT_EQ(s.reasoning_lp, lp["kvscope_reasoning"]);
}

}  // namespace server_reasoning_json_test
