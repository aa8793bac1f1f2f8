// The server's pipeline in-process (Server::load/run, what `kvscope run` and `eval` call): a chat
// request under a thinking budget is cut by the engine's </think> and answered, the events carry
// the text as it comes, the answer equals the HTTP API's, and protocol errors reach the caller as
// the CLI's error types.
#include <gtest/gtest.h>

#include "server_test_util.h"
#include "think_fixture.h"
#include "util/error.h"

namespace local_run_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {

server::ServerOptions local_options(const std::string& model) {
  server::ServerOptions o = test_options();
  o.model_path = model;
  o.kv_for_context = true;
  o.engine.max_seqs = 1;
  o.engine.n_ctx = 256;
  o.signals = false;
  o.effort_budgets = {6, 12};
  return o;
}

server::GenRequest chat(const std::string& q, std::optional<Effort> effort, int max_tokens) {
  server::GenRequest g;
  g.endpoint = server::Endpoint::Chat;
  g.messages = {{"user", q}};
  g.sampling.temperature = 0;
  g.max_tokens = max_tokens;
  g.effort = effort;
  return g;
}

int reasoning_tokens(const nlohmann::json& body) { return body["usage"]["completion_tokens_details"]["reasoning_tokens"].get<int>(); }

}  // namespace

TEST(LocalRun, BudgetCutsTheThinkingAndTheModelAnswers) {
  server::Server srv(local_options(fixtures::think_model()));
  srv.load();
  ASSERT_NE(srv.model(), nullptr);
  ASSERT_TRUE(reasoning::format_of(srv.reasoning_format()).think_block()) << reasoning::format_name(srv.reasoning_format());
  std::string streamed_reasoning, streamed_content;
  bool finished = false;
  const auto low = srv.run(chat("What is 2+2?", Effort::Low, 20), [&](const serving::Event& ev) {
    if (const auto* r = std::get_if<serving::ReasoningDelta>(&ev)) streamed_reasoning += r->text;
    if (const auto* c = std::get_if<serving::ContentDelta>(&ev)) streamed_content += c->text;
    finished |= std::holds_alternative<serving::Finished>(ev);
  });
  const auto& msg = low.body["choices"][0]["message"];
  EXPECT_EQ(reasoning_tokens(low.body), 6);
  EXPECT_EQ(low.body["kvscope"]["reasoning"]["budget_cut"], true);
  EXPECT_EQ(low.body["usage"]["completion_tokens"], 20);
  ASSERT_TRUE(msg["reasoning_content"].is_string());
  ASSERT_TRUE(msg["content"].is_string());
  EXPECT_FALSE(msg["content"].get<std::string>().empty());
  EXPECT_EQ(msg["content"].get<std::string>().find("</think>"), std::string::npos);
  EXPECT_NE(low.text.find("</think>"), std::string::npos) << low.text;
  EXPECT_GT(low.tokens.size(), 20u) << "20 generated and the engine's </think> between them";
  // The events are the answer as it came.
  EXPECT_TRUE(finished);
  EXPECT_EQ(streamed_reasoning, msg["reasoning_content"].get<std::string>());
  EXPECT_EQ(streamed_content, msg["content"].get<std::string>());

  const auto none = srv.run(chat("What is 2+2?", Effort::None, 20));
  EXPECT_EQ(reasoning_tokens(none.body), 0);
  EXPECT_TRUE(none.body["choices"][0]["message"]["reasoning_content"].is_null());
  const auto high = srv.run(chat("What is 2+2?", Effort::High, 20));
  EXPECT_EQ(reasoning_tokens(high.body), 20) << "unbounded: this random model never closes the block";
  EXPECT_EQ(high.body["choices"][0]["message"]["content"], "");
}

TEST(LocalRun, AnswersAsTheHttpApiDoes) {
  auto http = start_server(local_options(fixtures::think_model()));
  server::Server local(local_options(fixtures::think_model()));
  local.load();
  for (const char* effort : {"none", "low"}) {
    auto r = post(http->port(), "/v1/chat/completions",
                  {{"messages", json::array({{{"role", "user"}, {"content", "Tell me a story"}}})},
                   {"temperature", 0},
                   {"max_tokens", 16},
                   {"reasoning_effort", effort}});
    ASSERT_EQ(r.status, 200) << r.body;
    const auto l = local.run(chat("Tell me a story", parse_effort(effort), 16));
    EXPECT_EQ(l.body["choices"][0]["message"], r.j()["choices"][0]["message"]) << effort;
    EXPECT_EQ(l.body["usage"], r.j()["usage"]) << effort;
  }
}

TEST(LocalRun, ErrorsReachTheCallerTyped) {
  server::Server missing(local_options("/nonexistent/model.gguf"));
  EXPECT_THROW(missing.load(), InputError);
  server::Server srv(local_options(fixtures::think_model()));
  EXPECT_THROW(srv.run(chat("hi", std::nullopt, 4)), InputError) << "not loaded";
  srv.load();
  try {
    srv.run(chat(std::string(20000, 'a'), std::nullopt, 4));
    FAIL() << "a prompt longer than the context was accepted";
  } catch (const LimitError& e) {
    EXPECT_NE(std::string(e.what()).find("prompt too long"), std::string::npos) << e.what();
  }
  auto bad = chat("hi", std::nullopt, 4);
  bad.sampling.logit_bias.push_back({100000, 1.0f});
  try {
    srv.run(bad);
    FAIL() << "a logit bias outside the vocabulary was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not in the vocabulary"), std::string::npos) << e.what();
  }
  // fit_context: a CLI's -n larger than the context leaves is cut to what is left, not refused.
  auto big = chat("hi", Effort::None, 1 << 20);
  EXPECT_THROW(srv.run(big), InputError);
  big.fit_context = true;
  const auto r = srv.run(big);
  EXPECT_EQ(r.body["choices"][0]["finish_reason"].is_string(), true);
}

}  // namespace local_run_test
