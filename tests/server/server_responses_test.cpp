// POST /v1/responses: the request's translation (errors name the Responses parameter), the
// stream's event order when the answer has reasoning text, stored responses per tenant, and a
// client that hangs up mid-stream giving its blocks back.
#include <gtest/gtest.h>

#include "server/responses.h"
#include "server_test_util.h"

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
  const json& m = c.chat["messages"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0], json({{"role", "system"}, {"content", "You are kvscope."}}));
  EXPECT_EQ(m[1], json({{"role", "system"}, {"content", "be brief"}}));
  EXPECT_EQ(m[2], json({{"role", "user"}, {"content", "hi there"}}));
  EXPECT_EQ(c.chat["max_tokens"], 7);
  EXPECT_EQ(c.chat["reasoning_effort"], "low");
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
  EXPECT_EQ(server::responses_error(ApiError(400, "invalid_request_error", "m", "max_tokens")).param, "max_output_tokens");
}

// The chat request built from a Responses request fails in chat terms; the client reads its own.
TEST(Responses, ChatErrorsComeBackInResponsesSpelling) {
  auto map = [](const std::string& msg, const std::string& param) {
    const ApiError e = server::responses_error(ApiError(400, "invalid_request_error", msg, param, "invalid_value"));
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.code, "invalid_value");
    return std::string(e.what()) + " | " + e.param;
  };
  EXPECT_EQ(map("'max_tokens' must be at least 1", "max_tokens"), "'max_output_tokens' must be at least 1 | max_output_tokens");
  EXPECT_EQ(map("'max_completion_tokens' must be an integer", "max_completion_tokens"),
            "'max_output_tokens' must be an integer | max_output_tokens");
  EXPECT_EQ(map("reasoning_effort 'auto' needs a difficulty estimator", "reasoning_effort"),
            "reasoning.effort 'auto' needs a difficulty estimator | reasoning.effort");
  EXPECT_EQ(map("'messages' must not be empty", "messages[3].content"), "'input' must not be empty | input");
  // Names the two APIs share, and longer names that only contain a chat name, stay.
  EXPECT_EQ(map("'temperature' must be a number", "temperature"), "'temperature' must be a number | temperature");
  EXPECT_EQ(map("see max_tokens_limit and my_reasoning_effort", "thinking_token_budget"),
            "see max_tokens_limit and my_reasoning_effort | thinking_token_budget");
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
