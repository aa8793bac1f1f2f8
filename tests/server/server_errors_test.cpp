// Every error the server answers, in OpenAI's shape {"error":{"message","type","param","code"}}.
#include <gtest/gtest.h>

#include "server_test_util.h"

namespace server_errors_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {

server::Server& shared_server() {
  static std::unique_ptr<server::Server> s = [] {
    auto o = test_options();
    o.max_body_bytes = 8192;
    return start_server(o);
  }();
  return *s;
}
int port() { return shared_server().port(); }

// Checks the error shape and returns the error object.
json expect_error(const HttpResponse& r, int status, const std::string& code = "", const std::string& param = "") {
  EXPECT_EQ(r.status, status) << r.body;
  json j;
  try {
    j = r.j();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << r.body;
    return j;
  }
  EXPECT_TRUE(j.contains("error")) << r.body;
  json e = j["error"];
  EXPECT_TRUE(e["message"].is_string() && !e["message"].get<std::string>().empty()) << r.body;
  EXPECT_TRUE(e["type"].is_string()) << r.body;
  EXPECT_TRUE(e.contains("param") && e.contains("code")) << r.body;
  if (!code.empty()) {
    EXPECT_EQ(e["code"], code) << r.body;
  }
  if (!param.empty()) {
    EXPECT_EQ(e["param"], param) << r.body;
  }
  return e;
}

const json ok_body = {{"prompt", "Hello"}, {"max_tokens", 2}, {"temperature", 0}};

json with(json b, const std::string& k, const json& v) {
  b[k] = v;
  return b;
}

}  // namespace

TEST(ServerErrors, MalformedJsonAndWrongTypes) {
  expect_error(http(port(), "POST", "/v1/completions", "{\"prompt\": \"x\","), 400, "invalid_json");
  expect_error(http(port(), "POST", "/v1/completions", "[1,2]"), 400);
  expect_error(http(port(), "POST", "/v1/completions", ""), 400, "invalid_json");
  expect_error(post(port(), "/v1/completions", with(ok_body, "max_tokens", "ten")), 400, "invalid_type", "max_tokens");
  expect_error(post(port(), "/v1/completions", with(ok_body, "max_tokens", 2.5)), 400, "invalid_type", "max_tokens");
  expect_error(post(port(), "/v1/completions", with(ok_body, "temperature", "hot")), 400, "invalid_type", "temperature");
  expect_error(post(port(), "/v1/completions", with(ok_body, "temperature", 3)), 400, "invalid_value", "temperature");
  expect_error(post(port(), "/v1/completions", with(ok_body, "top_p", 0)), 400, "invalid_value", "top_p");
  expect_error(post(port(), "/v1/completions", with(ok_body, "stream", "yes")), 400, "invalid_type", "stream");
  expect_error(post(port(), "/v1/completions", with(ok_body, "stop", 5)), 400, "invalid_type", "stop");
  expect_error(post(port(), "/v1/completions", with(ok_body, "prompt", 5)), 400, "invalid_type", "prompt");
  expect_error(post(port(), "/v1/completions", json{{"max_tokens", 2}}), 400, "missing_required_parameter", "prompt");
  expect_error(post(port(), "/v1/chat/completions", json{{"messages", "hi"}}), 400, "invalid_type", "messages");
  expect_error(post(port(), "/v1/chat/completions", json{{"messages", json::array()}}), 400, "invalid_value", "messages");
  expect_error(post(port(), "/v1/chat/completions", json{{"messages", {{{"role", "wizard"}, {"content", "x"}}}}}), 400,
               "invalid_value", "messages[0].role");
  expect_error(post(port(), "/v1/chat/completions", json{{"messages", {{{"role", "user"}, {"content", 7}}}}}), 400,
               "invalid_type", "messages[0].content");
  expect_error(post(port(), "/v1/completions", with(ok_body, "stream_options", {{"include_usage", true}})), 400, "invalid_value",
               "stream_options");
}

TEST(ServerErrors, UnsupportedFieldsThatMatter) {
  expect_error(post(port(), "/v1/completions", with(ok_body, "n", 0)), 400, "invalid_value", "n");
  expect_error(post(port(), "/v1/completions", with(ok_body, "n", 65)), 400, "invalid_value", "n");
  expect_error(post(port(), "/v1/completions", with(ok_body, "n", "two")), 400, "invalid_type", "n");
  expect_error(post(port(), "/v1/completions", with(with(ok_body, "n", 2), "session_id", "one")), 400, "unsupported_parameter", "n");
  expect_error(post(port(), "/v1/completions", with(ok_body, "best_of", 3)), 400, "unsupported_parameter", "best_of");
  expect_error(post(port(), "/v1/completions", with(ok_body, "echo", true)), 400, "unsupported_parameter", "echo");
  expect_error(post(port(), "/v1/completions", with(ok_body, "prompt", json::array({"a", 5}))), 400, "invalid_type", "prompt");
  expect_error(post(port(), "/v1/completions", with(ok_body, "prompt", json::array({json::array({1, 2}), "b"}))), 400, "invalid_type",
               "prompt");
  expect_error(post(port(), "/v1/completions", with(ok_body, "prompt", std::vector<std::string>(65, "x"))), 400, "invalid_value",
               "prompt");
  expect_error(post(port(), "/v1/completions", with(with(ok_body, "prompt", {"a", "b"}), "session_id", "s")), 400,
               "unsupported_parameter", "prompt");
  expect_error(post(port(), "/v1/chat/completions",
                    json{{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"tools", {{{"type", "function"}}}}}),
               400, "missing_required_parameter", "tools[0].function");
  expect_error(post(port(), "/v1/chat/completions",
                    json{{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"functions", {{{"name", "f"}}}}}),
               400, "unsupported_parameter", "functions");
  // Harmless unknown fields and n=1 are accepted.
  EXPECT_EQ(post(port(), "/v1/completions", with(with(ok_body, "n", 1), "user", "someone")).status, 200);
}

TEST(ServerErrors, ResponseFormatsNotServedAreNamed) {
  auto schema_format = [](const json& schema) {
    return json{{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", schema}}}};
  };
  expect_error(post(port(), "/v1/completions", with(ok_body, "response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "x"}}}})),
               400, "invalid_value", "response_format");
  auto pattern = post(port(), "/v1/completions", with(ok_body, "response_format", schema_format({{"type", "string"}, {"pattern", "(?=a)a+"}})));
  expect_error(pattern, 400, "unsupported_value", "response_format");
  EXPECT_NE(pattern.body.find("lookaround '(?=' is not supported"), std::string::npos) << pattern.body;
  auto multiple = post(port(), "/v1/completions", with(ok_body, "response_format", schema_format({{"type", "integer"}, {"multipleOf", 2}})));
  expect_error(multiple, 400, "unsupported_value", "response_format");
  EXPECT_NE(multiple.body.find("keyword 'multipleOf' is not supported"), std::string::npos) << multiple.body;
  expect_error(post(port(), "/v1/completions", with(ok_body, "response_format", {{"type", "json_object"}, {"schema", {{"type", "wat"}}}})),
               400, "unsupported_value", "response_format");
  expect_error(post(port(), "/v1/completions", with(ok_body, "response_format", {{"type", "xml"}})), 400, "invalid_value",
               "response_format");
  // A repeated key, in either order: the request is served by one reading of it or refused, never a crash.
  const std::string text_rf = R"("response_format":{"type":"text"})";
  const std::string schema_rf = R"("response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"string"}}})";
  for (const auto& [a, b] : {std::pair{text_rf, schema_rf}, std::pair{schema_rf, text_rf}}) {
    HttpConn conn(port());
    HttpResponse r;
    ASSERT_TRUE(conn.send("POST", "/v1/completions", R"({"prompt":"x","max_tokens":2,)" + a + "," + b + "}"));
    ASSERT_TRUE(conn.read_head(r));
    r.body = conn.read_body();
    EXPECT_TRUE(r.status == 200 || (r.status == 400 && r.body.find("more than once") != std::string::npos)) << r.body;
  }
  EXPECT_EQ(post(port(), "/v1/completions", ok_body).status, 200);  // still serving
  expect_error(post(port(), "/v1/completions", with(ok_body, "response_format", "json")), 400, "invalid_type", "response_format");
  EXPECT_EQ(post(port(), "/v1/completions", with(ok_body, "response_format", {{"type", "text"}})).status, 200);
}

TEST(ServerErrors, BadLogitBiasIsNamed) {
  expect_error(post(port(), "/v1/completions", with(ok_body, "logit_bias", {{"99999", 5}})), 400, "invalid_value", "logit_bias");
  expect_error(post(port(), "/v1/completions", with(ok_body, "logit_bias", {{"-3", 5}})), 400, "invalid_value", "logit_bias");
  expect_error(post(port(), "/v1/completions", with(ok_body, "logit_bias", {{"hello", 5}})), 400, "invalid_value", "logit_bias");
  expect_error(post(port(), "/v1/completions", with(ok_body, "logit_bias", {{"5", 101}})), 400, "invalid_value", "logit_bias");
  expect_error(post(port(), "/v1/completions", with(ok_body, "logit_bias", {{"5", "up"}})), 400, "invalid_value", "logit_bias");
  expect_error(post(port(), "/v1/completions", with(ok_body, "logit_bias", "5:100")), 400, "invalid_type", "logit_bias");
  expect_error(post(port(), "/v1/completions", with(ok_body, "logit_bias", json::array({json::array({5})}))), 400,
               "invalid_value", "logit_bias");
}

TEST(ServerErrors, MaxTokensAndContextLimits) {
  expect_error(post(port(), "/v1/completions", with(ok_body, "max_tokens", 0)), 400, "invalid_value", "max_tokens");
  expect_error(post(port(), "/v1/completions", with(ok_body, "max_tokens", -5)), 400, "invalid_value", "max_tokens");
  expect_error(post(port(), "/v1/completions", with(ok_body, "max_tokens", 100000)), 400, "context_length_exceeded", "max_tokens");
  expect_error(post(port(), "/v1/completions", with(ok_body, "max_tokens", 1ULL << 62)), 400, "context_length_exceeded",
               "max_tokens");
  std::vector<int> long_prompt(600, 100);  // the default model's context is 512
  expect_error(post(port(), "/v1/completions", with(ok_body, "prompt", long_prompt)), 400, "context_length_exceeded", "prompt");
  expect_error(post(port(), "/v1/completions", with(ok_body, "prompt", std::vector<int>{1, 99999})), 400, "invalid_value", "prompt");
}

TEST(ServerErrors, InvalidUtf8IsRejected) {
  expect_error(http(port(), "POST", "/v1/completions", "{\"prompt\": \"ab\xff\xfe\", \"max_tokens\": 2}"), 400, "invalid_encoding");
  expect_error(http(port(), "POST", "/v1/completions", "{\"prompt\": \"\xed\xa0\x80\", \"max_tokens\": 2}"), 400,
               "invalid_encoding");  // an encoded surrogate
  expect_error(http(port(), "POST", "/v1/completions", "{\"prompt\": \"\\ud800\", \"max_tokens\": 2}"), 400);  // lone escape
  // Valid multi-byte text is fine.
  EXPECT_EQ(post(port(), "/v1/completions", with(ok_body, "prompt", "héllo wörld ✓")).status, 200);
}

TEST(ServerErrors, BodyTooLarge) {
  std::string big(20000, 'a');
  expect_error(post(port(), "/v1/completions", with(ok_body, "prompt", big)), 413, "request_too_large");
}

TEST(ServerErrors, UnknownRouteAndModel) {
  expect_error(http(port(), "GET", "/v2/nothing"), 404, "unknown_url");
  expect_error(http(port(), "GET", "/v1/completions"), 404, "unknown_url");
  expect_error(post(port(), "/v1/completions", with(ok_body, "model", "gpt-9")), 404, "model_not_found", "model");
  expect_error(http(port(), "GET", "/v1/models/gpt-9"), 404, "model_not_found");
}

TEST(ServerErrors, EmbeddingsValidateTheirInput) {
  expect_error(post(port(), "/v1/embeddings", json{{"model", "default"}}), 400, "", "input");
  expect_error(post(port(), "/v1/embeddings", json{{"input", ""}}), 400, "", "input");
  expect_error(post(port(), "/v1/embeddings", json{{"input", json::array()}}), 400, "", "input");
  expect_error(post(port(), "/v1/embeddings", json{{"input", json::array({1, 2, 999999})}}), 400, "", "input");
  expect_error(post(port(), "/v1/embeddings", json{{"input", "hi"}, {"dimensions", 0}}), 400, "", "dimensions");
  expect_error(post(port(), "/v1/embeddings", json{{"input", "hi"}, {"dimensions", 100000}}), 400, "", "dimensions");
  expect_error(post(port(), "/v1/embeddings", json{{"input", "hi"}, {"encoding_format", "int8"}}), 400, "", "encoding_format");
  expect_error(post(port(), "/v1/embeddings", json{{"input", "hi"}, {"kvscope_pool", "max"}}), 400, "", "kvscope_pool");
  expect_error(post(port(), "/v1/embeddings", json{{"input", "hi"}, {"model", "gpt-9"}}), 404, "model_not_found", "model");
}

TEST(ServerErrors, BearerAuthAndTenantSalts) {
  auto o = test_options();
  o.api_keys = {"key-a", "key-b"};
  auto s = start_server(o);
  const int p = s->port();
  EXPECT_EQ(http(p, "GET", "/health").status, 200);  // no auth on /health
  expect_error(http(p, "GET", "/v1/models"), 401, "invalid_api_key");
  expect_error(http(p, "GET", "/metrics", "", {{"Authorization", "Bearer wrong"}}), 401, "invalid_api_key");
  expect_error(post(p, "/v1/completions", ok_body, {{"Authorization", "Bearer key-"}}), 401, "invalid_api_key");
  EXPECT_EQ(http(p, "GET", "/v1/models", "", {{"Authorization", "Bearer key-a"}}).status, 200);
  // A prompt cached for one tenant is not served to the other.
  std::string prompt;
  for (int i = 0; i < 12; ++i) prompt += "tenant data here ";
  const json body = with(ok_body, "prompt", prompt);
  auto a1 = post(p, "/v1/completions", body, {{"Authorization", "Bearer key-a"}});
  ASSERT_EQ(a1.status, 200) << a1.body;
  auto a2 = post(p, "/v1/completions", body, {{"Authorization", "Bearer key-a"}});
  auto b1 = post(p, "/v1/completions", body, {{"Authorization", "Bearer key-b"}});
  EXPECT_GT(a2.j()["kvscope"]["prompt_tokens_cached"].get<int>(), 0);
  EXPECT_EQ(b1.j()["kvscope"]["prompt_tokens_cached"], 0);
  EXPECT_EQ(b1.j()["choices"][0]["text"], a1.j()["choices"][0]["text"]);
}

TEST(ServerErrors, QueueFull) {
  auto o = test_options();
  o.max_queue = 1;
  auto s = start_server(o);
  const int p = s->port();
  HttpConn c(p);
  ASSERT_TRUE(c.send("POST", "/v1/completions", json{{"prompt", "Long"}, {"max_tokens", 400}, {"temperature", 0}, {"stream", true}}.dump()));
  HttpResponse r;
  ASSERT_TRUE(c.read_head(r));
  ASSERT_FALSE(c.next_event().empty());
  expect_error(post(p, "/v1/completions", ok_body), 429, "queue_full");
  c.close();
  EXPECT_TRUE(eventually([&] { return post(p, "/v1/completions", ok_body).status == 200; }));
}

}  // namespace server_errors_test
