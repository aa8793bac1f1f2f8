// POST /v1/responses: the request's translation (errors name the Responses parameter), the
// stream's event order when the answer has reasoning text, stored responses per tenant, and a
// client that hangs up mid-stream giving its blocks back.
#include <gtest/gtest.h>

#include "server/responses.h"
#include "server_test_util.h"

namespace server_responses_test {

using namespace kvscope;
using namespace kvscope::test;
using kvscope::server::ApiError;
using kvscope::server::ResponsesWriter;
using kvscope::server::ResponseStore;

namespace {

std::vector<json> events_of(const std::string& sse) {
  std::vector<json> out;
  size_t pos = 0, end;
  while ((end = sse.find("\n\n", pos)) != std::string::npos) {
    const std::string ev = sse.substr(pos, end - pos);
    pos = end + 2;
    const size_t d = ev.find("data: ");
    if (d == std::string::npos) continue;
    json j = json::parse(ev.substr(d + 6));
    EXPECT_EQ(ev.substr(0, 7 + j["type"].get<std::string>().size()), "event: " + j["type"].get<std::string>());
    out.push_back(j);
  }
  return out;
}

std::string param_of(const json& body, const ResponseStore& store = ResponseStore()) {
  try {
    server::parse_responses_request(body, store, 0);
  } catch (const ApiError& e) {
    return std::to_string(e.status) + " " + e.param;
  }
  return "accepted";
}

std::map<std::string, std::string> bearer(const std::string& key) { return {{"Authorization", "Bearer " + key}}; }

}  // namespace

TEST(Responses, RequestBecomesChat) {
  ResponseStore store;
  const json body = {{"input", json::array({{{"role", "developer"}, {"content", "be brief"}},
                                            {{"type", "reasoning"}, {"id", "rs_1"}, {"summary", json::array()}},
                                            {{"role", "user"}, {"content", json::array({{{"type", "input_text"}, {"text", "hi "}},
                                                                                        {{"type", "input_text"}, {"text", "there"}}})}}})},
                     {"instructions", "You are kvscope."},
                     {"max_output_tokens", 7},
                     {"reasoning", {{"effort", "low"}}},
                     {"temperature", 0}};
  const auto c = server::parse_responses_request(body, store, 0);
  const json m = c.chat["messages"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0], json({{"role", "system"}, {"content", "You are kvscope."}}));
  EXPECT_EQ(m[1], json({{"role", "system"}, {"content", "be brief"}}));
  EXPECT_EQ(m[2], json({{"role", "user"}, {"content", "hi there"}}));
  EXPECT_EQ(json(c.chat["max_tokens"]), 7);
  EXPECT_EQ(json(c.chat["reasoning_effort"]), "low");
  EXPECT_EQ(c.conversation.size(), 2u);  // instructions are not carried into a follow-up
  EXPECT_TRUE(c.chat.contains("session_id"));
}

TEST(Responses, BadRequestsNameTheResponsesParameter) {
  EXPECT_EQ(param_of(json::object()), "400 input");
  EXPECT_EQ(param_of({{"input", 3}}), "400 input");
  EXPECT_EQ(param_of({{"input", "x"}, {"max_output_tokens", 0}}), "400 max_output_tokens");
  EXPECT_EQ(param_of({{"input", "x"}, {"tools", json::array({{{"type", "web_search"}}})}}), "400 tools[0].type");
  EXPECT_EQ(param_of({{"input", json::array({{{"type", "function_call_output"}, {"output", "1"}}})}}), "400 input[0].call_id");
  EXPECT_EQ(param_of({{"input", json::array({{{"type", "computer_call"}}})}}), "400 input[0].type");
  EXPECT_EQ(param_of({{"input", json::array({{{"role", "tool"}, {"content", "x"}}})}}), "400 input[0].role");
  EXPECT_EQ(param_of({{"input", json::array({{{"role", "user"}, {"content", json::array({{{"type", "input_image"}}})}}})}}),
            "400 input[0].content[0].type");
  EXPECT_EQ(param_of({{"input", "x"}, {"text", {{"format", {{"type", "json_schema"}}}}}}), "400 text.format.schema");
  EXPECT_EQ(param_of({{"input", "x"}, {"text", {{"format", {{"type", "grammar"}}}}}}), "400 text.format");
  EXPECT_EQ(param_of({{"input", "x"}, {"previous_response_id", "resp_nope"}}), "404 previous_response_id");
  EXPECT_EQ(param_of({{"input", std::string("\xff\xfe")}}), "400 input");
  EXPECT_EQ(param_of({{"input", "x"}, {"reasoning", {{"summary", "verbose"}}}}), "400 reasoning.summary");
  // Tools are checked in this API's shape: the place named is the client's own.
  EXPECT_EQ(param_of({{"input", "x"}, {"tools", json::array({{{"type", "function"}, {"name", "no spaces"}}})}}), "400 tools[0].name");
  EXPECT_EQ(param_of({{"input", "x"}, {"tools", json::array({{{"type", "function"}, {"name", "f"}, {"parameters", 3}}})}}),
            "400 tools[0].parameters");
  EXPECT_EQ(param_of({{"input", "x"}, {"tool_choice", {{"type", "function"}, {"name", "f"}}}}), "400 tool_choice");
}

// Chat's errors name the fields the two APIs spell differently by identity (server::Field), and
// each API words them: what chat's own parser throws reads as the Responses API's names.
TEST(Responses, ChatErrorsAreWordedAsResponsesOnes) {
  auto both = [](const json& chat_body) {
    try {
      server::parse_gen_request(chat_body, server::Endpoint::Chat);
    } catch (const ApiError& e) {
      const ApiError r = server::responses_error(e);
      EXPECT_EQ(r.status, e.status);
      EXPECT_EQ(r.code, e.code);
      return std::string(e.what()) + " | " + e.param + " || " + r.what() + " | " + r.param;
    }
    return std::string("accepted");
  };
  const json msgs = json::array({{{"role", "user"}, {"content", "x"}}});
  EXPECT_EQ(both({{"messages", json::array()}}), "'messages' must not be empty | messages || 'input' must not be empty | input");
  // Chat's index counts instructions and earlier turns, not the client's input items: dropped.
  EXPECT_EQ(both({{"messages", json::array({{{"role", "user"}, {"content", 3}}})}}),
            "'messages[0].content' must be a string or an array of text parts | messages[0].content || "
            "'input' must be a string or an array of text parts | input");
  EXPECT_EQ(both({{"messages", msgs}, {"max_completion_tokens", 0}}),
            "'max_completion_tokens' must be at least 1 | max_completion_tokens || 'max_output_tokens' must be at least 1 | "
            "max_output_tokens");
  EXPECT_EQ(both({{"messages", msgs}, {"max_tokens", "many"}}),
            "'max_tokens' must be an integer | max_tokens || 'max_output_tokens' must be an integer | max_output_tokens");
  EXPECT_EQ(both({{"messages", msgs}, {"response_format", {{"type", "grammar"}}}}),
            "'response_format' type must be text, json_object or json_schema (got 'grammar') | response_format || "
            "'text.format' type must be text, json_object or json_schema (got 'grammar') | text.format");
  EXPECT_EQ(both({{"messages", msgs}, {"reasoning_effort", 3}}),
            "'reasoning_effort' must be a string | reasoning_effort || 'reasoning.effort' must be a string | reasoning.effort");
  EXPECT_EQ(both({{"messages", msgs}, {"reasoning", "fast"}, {"reasoning_effort", "low"}}),
            "'reasoning' (kvscope's fast|mixed|slow|auto) cannot be combined with reasoning_effort, enable_thinking or a thinking "
            "budget | reasoning || 'reasoning' (kvscope's fast|mixed|slow|auto) cannot be combined with reasoning.effort, "
            "enable_thinking or a thinking budget | reasoning");
  // Fields both APIs spell alike are left as they are; nothing is found by searching the text.
  EXPECT_EQ(both({{"messages", msgs}, {"temperature", "hot"}}),
            "'temperature' must be a number | temperature || 'temperature' must be a number | temperature");
  const ApiError plain(400, "invalid_request_error", "see max_tokens_limit and my_reasoning_effort", "thinking_token_budget");
  EXPECT_EQ(std::string(server::responses_error(plain).what()), plain.what());
  EXPECT_EQ(server::responses_error(plain).param, "thinking_token_budget");
}

// reasoning.summary: the reasoning text is the reasoning item's summary too, whole and streamed with
// the summary part and text events OpenAI sends, and the request's choice is echoed.
TEST(Responses, SummaryCarriesTheReasoning) {
  server::ResponsesCall call;
  call.summary = "auto";
  ResponsesWriter whole(call, "m", 1);
  const json r = whole.from_result("think hard", "42", serving::FinishReason::Stop, {5, 3, 2}, nullptr);
  EXPECT_EQ(r["reasoning"]["summary"], "auto");
  ASSERT_EQ(r["output"][0]["type"], "reasoning");
  EXPECT_EQ(r["output"][0]["summary"], json::array({{{"type", "summary_text"}, {"text", "think hard"}}}));
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "think hard");

  ResponsesWriter w(call, "m", 1);
  std::string sse = w.start();
  sse += w.on_event(serving::ReasoningDelta{"think ", std::nullopt}, nullptr);
  sse += w.on_event(serving::ReasoningDelta{"hard", std::nullopt}, nullptr);
  sse += w.on_event(serving::ContentDelta{"42", std::nullopt, 10}, nullptr);
  sse += w.on_event(serving::Finished{serving::FinishReason::Stop, {5, 3, 2}}, nullptr);
  sse += w.finish();
  const auto ev = events_of(sse);
  std::vector<std::string> types;
  std::string deltas;
  for (const auto& e : ev) {
    if (e["type"].get<std::string>().find("reasoning_summary") == std::string::npos) continue;
    types.push_back(e["type"]);
    EXPECT_EQ(e["summary_index"], 0);
    EXPECT_EQ(e["output_index"], 0);
    if (e["type"] == "response.reasoning_summary_text.delta") deltas += e["delta"].get<std::string>();
    if (e["type"] == "response.reasoning_summary_text.done") {
      EXPECT_EQ(e["text"], "think hard");
    }
    if (e["type"] == "response.reasoning_summary_part.done") {
      EXPECT_EQ(e["part"], json({{"type", "summary_text"}, {"text", "think hard"}}));
    }
  }
  EXPECT_EQ(deltas, "think hard");
  const std::vector<std::string> want = {"response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
                                         "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
                                         "response.reasoning_summary_part.done"};
  EXPECT_EQ(types, want);
  const json& done = ev.back()["response"];
  EXPECT_EQ(done["output"][0]["summary"][0]["text"], "think hard");
  // Without a summary asked for, the item's summary stays empty (the text is in its content).
  server::ResponsesCall plain;
  const json p = ResponsesWriter(plain, "m", 1).from_result("think", "42", serving::FinishReason::Stop, {5, 3, 2}, nullptr);
  EXPECT_TRUE(p["output"][0]["summary"].empty());
  EXPECT_TRUE(p["reasoning"]["summary"].is_null());
}

// text.format's schema reaches chat's decoder in the client's order (properties are generated in it).
TEST(Responses, TextFormatSchemaKeepsItsOrder) {
  const auto body = nlohmann::ordered_json::parse(R"({"input": "x", "text": {"format": {"type": "json_schema", "name": "o",
      "schema": {"type": "object", "properties": {"zeta": {"type": "integer"}, "alpha": {"type": "integer"}, "mid": {"type": "string"}},
                 "required": ["zeta", "alpha", "mid"]}}},
      "tools": [{"type": "function", "name": "f", "parameters": {"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "string"}}}}]})");
  const auto c = server::parse_responses_request(body, ResponseStore(), 0);
  std::vector<std::string> keys;
  for (const auto& [k, v] : c.chat["response_format"]["json_schema"]["schema"]["properties"].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"zeta", "alpha", "mid"}));
  keys.clear();
  for (const auto& [k, v] : c.chat["tools"][0]["function"]["parameters"]["properties"].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"z", "a"}));
}

TEST(Responses, StreamPutsReasoningBeforeTheMessage) {
  server::ResponsesCall call;
  call.id = "resp_x";
  ResponsesWriter w(call, "m", 1);
  std::string sse = w.start();
  const json ext = {{"prompt_tokens_cached", 4}};
  sse += w.on_event(serving::ReasoningDelta{"think ", std::nullopt}, ext);
  sse += w.on_event(serving::ConfidenceUpdate{4, 0.5}, ext);  // writes nothing in this API
  sse += w.on_event(serving::ReasoningDelta{"hard", std::nullopt}, ext);
  sse += w.on_event(serving::ContentDelta{"42", std::nullopt, 10}, ext);
  sse += w.on_event(serving::Finished{serving::FinishReason::Stop, {5, 3, 2}}, ext);
  sse += w.finish();
  const auto ev = events_of(sse);
  std::vector<std::string> types;
  for (size_t i = 0; i < ev.size(); ++i) {
    types.push_back(ev[i]["type"]);
    EXPECT_EQ(ev[i]["sequence_number"], int(i));
  }
  const std::vector<std::string> want = {
      "response.created", "response.in_progress",
      "response.output_item.added", "response.content_part.added", "response.reasoning_text.delta", "response.reasoning_text.delta",
      "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
      "response.output_item.added", "response.content_part.added", "response.output_text.delta",
      "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"};
  EXPECT_EQ(types, want);
  const json& r = ev.back()["response"];
  ASSERT_EQ(r["output"].size(), 2u);
  EXPECT_EQ(r["output"][0]["type"], "reasoning");
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "think hard");
  EXPECT_EQ(r["output"][1]["content"][0]["text"], "42");
  EXPECT_EQ(r["usage"]["output_tokens_details"]["reasoning_tokens"], 2);
  EXPECT_EQ(r["usage"]["input_tokens_details"]["cached_tokens"], 4);
  EXPECT_EQ(r["status"], "completed");
}

TEST(Responses, LengthCutIsIncomplete) {
  server::ResponsesCall call;
  ResponsesWriter w(call, "m", 1);
  const json r = w.from_result("", "abc", serving::FinishReason::Length, {2, 3, -1}, nullptr);
  EXPECT_EQ(r["status"], "incomplete");
  EXPECT_EQ(r["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(r["usage"]["total_tokens"], 5);
  EXPECT_EQ(r["usage"]["output_tokens_details"]["reasoning_tokens"], 0);  // not reported: none
  ASSERT_EQ(r["output"].size(), 1u);  // no reasoning item without reasoning
  EXPECT_EQ(r["output"][0]["status"], "incomplete");
}

TEST(Responses, StoreIsBoundedAndPerTenant) {
  ResponseStore s(2);
  s.put("a", {1, json::object(), json::array(), ""});
  s.put("b", {1, json::object(), json::array(), ""});
  s.put("c", {2, json::object(), json::array(), ""});
  EXPECT_FALSE(s.get(1, "a"));  // the oldest went first
  EXPECT_TRUE(s.get(1, "b"));
  EXPECT_FALSE(s.get(1, "c"));  // another tenant's
  EXPECT_FALSE(s.erase(1, "c"));
  EXPECT_TRUE(s.erase(2, "c"));
  s.put("d", {1, json::object(), json::array(), "chain"});
  EXPECT_TRUE(s.uses_session(1, "chain"));
  EXPECT_FALSE(s.uses_session(2, "chain"));
}

TEST(ServerResponses, TenantsSeeOnlyTheirOwnResponses) {
  auto o = test_options();
  o.api_keys = {"key-a", "key-b"};
  auto srv = start_server(o);
  const int port = srv->port();
  auto r = post(port, "/v1/responses", {{"input", "Once upon a time"}, {"max_output_tokens", 4}, {"temperature", 0}}, bearer("key-a"));
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string id = r.j()["id"];
  EXPECT_EQ(http(port, "GET", "/v1/responses/" + id, "", bearer("key-a")).status, 200);
  EXPECT_EQ(http(port, "GET", "/v1/responses/" + id, "", bearer("key-b")).status, 404);
  auto follow = post(port, "/v1/responses", {{"input", "x"}, {"previous_response_id", id}, {"max_output_tokens", 2}}, bearer("key-b"));
  EXPECT_EQ(follow.status, 404) << follow.body;
  EXPECT_EQ(follow.j()["error"]["param"], "previous_response_id");
  EXPECT_EQ(http(port, "DELETE", "/v1/responses/" + id, "", bearer("key-b")).status, 404);
  EXPECT_EQ(http(port, "DELETE", "/v1/responses/" + id, "", bearer("key-a")).status, 200);
  EXPECT_EQ(http(port, "GET", "/v1/responses/" + id, "", bearer("key-a")).status, 404);
  // Its chain's pinned KV went with it.
  Engine& eng = *srv->engine();
  EXPECT_TRUE(eventually([&] { return eng.stats().sessions == 0 && eng.stats().blocks.used == 0; })) << srv->metrics_text();
}

TEST(ServerResponses, StreamAbandonedByTheClientFreesItsBlocks) {
  auto srv = start_server();
  const int port = srv->port();
  {
    HttpConn c(port);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send("POST", "/v1/responses",
                       json{{"input", "A very long story"}, {"max_output_tokens", 400}, {"stream", true}, {"store", false}}.dump()));
    HttpResponse head;
    ASSERT_TRUE(c.read_head(head));
    EXPECT_EQ(head.status, 200);
    std::string got, part;
    while (got.find("response.output_text.delta") == std::string::npos && c.read_some(part)) got += part;
    EXPECT_NE(got.find("event: response.created"), std::string::npos) << got;
  }  // hang up
  Engine& eng = *srv->engine();
  EXPECT_TRUE(eventually([&] { return eng.stats().blocks.used == 0 && eng.stats().running == 0; })) << srv->metrics_text();
}

TEST(ServerResponses, ContextOverflowNamesMaxOutputTokens) {
  auto srv = start_server();
  auto r = post(srv->port(), "/v1/responses", {{"input", "hello"}, {"max_output_tokens", 100000000}});
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.j()["error"]["param"], "max_output_tokens");
  const std::string msg = r.j()["error"]["message"];
  EXPECT_EQ(msg.find("max_tokens"), std::string::npos) << msg;
  // An effort the chat parser refuses comes back as reasoning.effort, in the message too.
  auto e = post(srv->port(), "/v1/responses", {{"input", "hello"}, {"reasoning", {{"effort", "extreme"}}}});
  EXPECT_EQ(e.status, 400) << e.body;
  EXPECT_EQ(e.j()["error"]["param"], "reasoning.effort");
  const std::string emsg = e.j()["error"]["message"];
  EXPECT_NE(emsg.find("'reasoning.effort' must be one of"), std::string::npos) << emsg;
  EXPECT_EQ(emsg.find("reasoning_effort"), std::string::npos) << emsg;
}

// Errors of requests that fail past the Responses parser, in chat's checks, name this API's fields.
TEST(ServerResponses, ErrorsNameTheResponsesFields) {
  auto srv = start_server();
  const int port = srv->port();
  auto expect = [&](const json& body, const std::string& param, const std::string& starts) {
    auto r = post(port, "/v1/responses", body);
    EXPECT_EQ(r.status, 400) << r.body;
    const json e = r.j()["error"];
    EXPECT_EQ(e["param"], param) << r.body;
    const std::string msg = e["message"];
    EXPECT_EQ(msg.rfind(starts, 0), 0u) << msg;
    for (const char* chat : {"messages", "max_tokens", "max_completion_tokens", "response_format", "reasoning_effort"})
      EXPECT_EQ(msg.find(chat), std::string::npos) << chat << " in " << msg;
  };
  expect({{"input", "hello"}, {"text", {{"format", {{"type", "json_schema"}, {"name", "n"}, {"schema", {{"type", "number"}, {"multipleOf", 2}}}}}}}},
         "text.format", "'text.format': ");
  expect({{"input", "hello"}, {"reasoning", {{"effort", "extreme"}}}}, "reasoning.effort", "'reasoning.effort' must be one of");
  expect({{"input", std::string(40000, 'a')}, {"max_output_tokens", 4}}, "input", "This model's maximum context length");
  expect({{"input", "hello"}, {"max_output_tokens", 100000000}}, "max_output_tokens", "This model's maximum context length");
  expect({{"input", "hello"}, {"tools", json::array({{{"type", "function"}, {"name", "a b"}}})}}, "tools[0].name", "Invalid 'tools[0].name'");
}

}  // namespace server_responses_test
