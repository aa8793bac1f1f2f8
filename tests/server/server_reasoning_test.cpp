// "reasoning" on /v1/completions with the embedded reasoner and its estimator: fixed modes add the
// mode line (same text as a lone run), auto reports its decision and serves a repeated question
// from the decision cache, Redis holds the decision under kv_pattern:{hash}, bad uses are 400s.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>

#include "context_generate.h"
#include "engine/context.h"
#include "server_test_util.h"
#include "tinygsm/tinygsm.h"

namespace server_reasoning_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {
const std::string kModel = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.gguf";
const std::string kQuestion = "Question: (1) Tom has 34 apples. (2) He buys 12 more. How many apples does Tom have now?";

server::ServerOptions reasoner_options() {
  auto o = test_options();
  o.model_path = kModel;  // its estimator is found next to it
  return o;
}
std::string lone(const std::string& prompt) {
  static auto m = Model::load(kModel);
  Context ctx(*m, {0, 2, 512});
  SamplingParams g;
  g.temperature = 0;
  return generate(ctx, m->tokenizer().encode(prompt, true, false), g, 128).text;
}
}  // namespace

class ServerReasoning : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kModel)) GTEST_SKIP() << "no embedded reasoner";
  }
};

TEST_F(ServerReasoning, FixedAndAutoModes) {
  auto srv = start_server(reasoner_options());
  const int port = srv->port();
  auto r = post(port, "/v1/completions", {{"prompt", kQuestion}, {"reasoning", "slow"}, {"temperature", 0}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.j()["choices"][0]["text"], lone(kQuestion + "\nMode: slow\n"));
  EXPECT_EQ(r.j()["kvscope"]["reasoning"]["mode"], "slow");
  EXPECT_EQ(r.j()["kvscope"]["reasoning"]["source"], "requested");

  const json body = {{"prompt", kQuestion}, {"reasoning", "auto"}, {"temperature", 0}, {"max_tokens", 100}};
  auto a = post(port, "/v1/completions", body);
  ASSERT_EQ(a.status, 200) << a.body;
  const json ra = a.j()["kvscope"]["reasoning"];
  EXPECT_EQ(ra["source"], "estimate");
  EXPECT_GE(ra["initial_difficulty"].get<double>(), 0);
  EXPECT_LE(ra["initial_difficulty"].get<double>(), 100);
  EXPECT_TRUE(ra.contains("trace") && ra.contains("switches") && ra.contains("reason"));
  EXPECT_EQ(ra["decision_key"].get<std::string>().rfind("kv_pattern:", 0), 0u);
  EXPECT_TRUE(tinygsm::parse_answer(a.j()["choices"][0]["text"].get<std::string>()).has_value());
  auto b = post(port, "/v1/completions", body);
  ASSERT_EQ(b.status, 200);
  EXPECT_EQ(b.j()["kvscope"]["reasoning"]["source"], "cache");
  EXPECT_EQ(b.j()["kvscope"]["reasoning"]["initial_mode"], ra["initial_mode"]);
  EXPECT_EQ(b.j()["kvscope"]["reasoning"]["decision_key"], ra["decision_key"]);

  auto bad = post(port, "/v1/completions", {{"prompt", kQuestion}, {"reasoning", "deep"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.j()["error"]["param"], "reasoning");
  auto tok = post(port, "/v1/completions", {{"prompt", json::array({1, 2, 3})}, {"reasoning", "fast"}});
  EXPECT_EQ(tok.status, 400);
}

// A low-confidence answer is retried in the next slower mode: the body carries the last attempt's
// text only and usage counts every attempt. A stream that already sent its answer keeps it.
TEST_F(ServerReasoning, UnsureAnswersAreRetriedSlower) {
  auto o = reasoner_options();
  o.controller.retry_below = 1.0;  // no answer is that sure: every fast/mixed answer is retried
  o.controller.early_answer = false;
  auto srv = start_server(o);
  const int port = srv->port();
  const json body = {{"prompt", kQuestion}, {"reasoning", "auto"}, {"temperature", 0}, {"max_tokens", 200}};
  auto a = post(port, "/v1/completions", body);
  ASSERT_EQ(a.status, 200) << a.body;
  const json ra = a.j()["kvscope"]["reasoning"];
  EXPECT_EQ(ra["mode"], "slow");
  EXPECT_EQ(a.j()["choices"][0]["text"], lone(kQuestion + "\nMode: slow\n"));
  int retries = 0;
  for (const auto& s : ra["switches"]) retries += s["action"] == "retry";
  const int expected = ra["initial_mode"] == "fast" ? 2 : ra["initial_mode"] == "mixed" ? 1 : 0;
  EXPECT_EQ(retries, expected) << ra.dump();
  EXPECT_EQ(ra["attempts"], 1 + expected);
  EXPECT_GT(ra["answer_confidence"].get<double>(), 0);
  const int slow_tokens = static_cast<int>(
      post(port, "/v1/completions", {{"prompt", kQuestion}, {"reasoning", "slow"}, {"temperature", 0}, {"max_tokens", 200}})
          .j()["usage"]["completion_tokens"]);
  ASSERT_GT(expected, 0) << "the question should start below slow";
  EXPECT_GT(a.j()["usage"]["completion_tokens"].get<int>(), slow_tokens);

  // Forced fast, the retry rule does not apply (only auto decides modes).
  auto f = post(port, "/v1/completions", {{"prompt", kQuestion}, {"reasoning", "fast"}, {"temperature", 0}});
  ASSERT_EQ(f.status, 200);
  EXPECT_EQ(f.j()["kvscope"]["reasoning"]["mode"], "fast");
}

TEST_F(ServerReasoning, AutoWithoutAnEstimatorIsA400) {
  auto srv = start_server(test_options());  // the random default model has no estimator
  auto r = post(srv->port(), "/v1/completions", {{"prompt", "hello"}, {"reasoning", "auto"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.j()["error"]["message"].get<std::string>().find("difficulty estimator"), std::string::npos);
  EXPECT_EQ(post(srv->port(), "/v1/completions", {{"prompt", "hello"}, {"reasoning", "fast"}, {"max_tokens", 2}}).status, 200);
}

TEST_F(ServerReasoning, DecisionsGoToRedis) {
  if (!std::filesystem::exists("/usr/bin/redis-server") || !std::filesystem::exists("/usr/bin/redis-cli"))
    GTEST_SKIP() << "no redis-server";
  const int rport = 23000 + static_cast<int>(::getpid() % 5000);
  const std::string pidfile = (temp_dir() / "redis.pid").string();
  ASSERT_EQ(std::system(("/usr/bin/redis-server --port " + std::to_string(rport) +
                         " --save '' --appendonly no --daemonize yes --pidfile " + pidfile + " >/dev/null")
                            .c_str()),
            0);
  struct Kill {
    std::string cmd;
    ~Kill() { (void)!std::system(cmd.c_str()); }
  } kill{"/usr/bin/redis-cli -p " + std::to_string(rport) + " shutdown nosave >/dev/null 2>&1"};
  for (int i = 0; i < 100 && run_capture("/usr/bin/redis-cli -p " + std::to_string(rport) + " ping").find("PONG") ==
                                 std::string::npos;
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto o = reasoner_options();
  o.decision_cache.redis_url = "redis://127.0.0.1:" + std::to_string(rport);
  o.decision_cache.ttl_s = 600;
  auto srv = start_server(o);
  auto a = post(srv->port(), "/v1/completions", {{"prompt", kQuestion}, {"reasoning", "auto"}, {"max_tokens", 60}});
  ASSERT_EQ(a.status, 200) << a.body;
  const std::string key = a.j()["kvscope"]["reasoning"]["decision_key"];
  const std::string got = run_capture("/usr/bin/redis-cli -p " + std::to_string(rport) + " get " + key);
  const json d = json::parse(got);
  EXPECT_EQ(d["mode"], a.j()["kvscope"]["reasoning"]["initial_mode"]);
  const int ttl = std::stoi(run_capture("/usr/bin/redis-cli -p " + std::to_string(rport) + " ttl " + key));
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 600);
}

// Chat completions take "reasoning" too: the last user message is the question, the chat template
// renders it with the mode line; auto estimates once and serves the repeat from the cache.
TEST_F(ServerReasoning, ChatCompletionsWithAuto) {
  auto srv = start_server(reasoner_options());
  const int port = srv->port();
  const json body = {{"messages", {{{"role", "system"}, {"content", "Answer briefly."}}, {{"role", "user"}, {"content", kQuestion}}}},
                     {"reasoning", "auto"}, {"temperature", 0}, {"max_tokens", 60}};
  auto a = post(port, "/v1/chat/completions", body);
  ASSERT_EQ(a.status, 200) << a.body;
  const json ra = a.j()["kvscope"]["reasoning"];
  EXPECT_EQ(ra["source"], "estimate");
  EXPECT_TRUE(ra["initial_mode"] == "fast" || ra["initial_mode"] == "mixed" || ra["initial_mode"] == "slow") << ra.dump();
  EXPECT_EQ(a.j()["object"], "chat.completion");
  EXPECT_FALSE(a.j()["choices"][0]["message"]["content"].get<std::string>().empty());
  // Re-estimation is woken by token counts: every 5 generated tokens one comes due and is done.
  const int gen = a.j()["usage"]["completion_tokens"].get<int>();
  const std::string m = http(port, "GET", "/metrics").body;
  const double due = metric(m, "kvscope_reestimates_due_total"), done = metric(m, "kvscope_reestimates_done_total");
  if (gen >= 10) {
    EXPECT_GE(due, 1) << m;
  }
  EXPECT_GE(done, 0) << m;
  EXPECT_LE(done, due) << m;
  EXPECT_EQ(metric(m, "kvscope_decision_cache_misses_total"), 1);
  auto b = post(port, "/v1/chat/completions", body);
  ASSERT_EQ(b.status, 200) << b.body;
  EXPECT_EQ(b.j()["kvscope"]["reasoning"]["source"], "cache");
  EXPECT_EQ(metric(http(port, "GET", "/metrics").body, "kvscope_decision_cache_hits_total"), 1);
  auto fixed = post(port, "/v1/chat/completions",
                    {{"messages", {{{"role", "user"}, {"content", kQuestion}}}}, {"reasoning", "fast"}, {"max_tokens", 8}});
  ASSERT_EQ(fixed.status, 200) << fixed.body;
  EXPECT_EQ(fixed.j()["kvscope"]["reasoning"]["mode"], "fast");
  const std::string m2 = http(port, "GET", "/metrics").body;
  EXPECT_EQ(metric(m2, "kvscope_reasoning_requests_started_total{mode=\"auto\"}"), 2) << m2;
  EXPECT_EQ(metric(m2, "kvscope_reasoning_requests_started_total{mode=\"fast\"}"), 1) << m2;
  EXPECT_EQ(metric(m2, "kvscope_reasoning_requests_ended_total{mode=\"fast\"}") +
                metric(m2, "kvscope_reasoning_requests_ended_total{mode=\"mixed\"}") +
                metric(m2, "kvscope_reasoning_requests_ended_total{mode=\"slow\"}"),
            3);
  EXPECT_EQ(metric(m2, "kvscope_reasoning_confidence_count"), 2);
  EXPECT_GE(metric(m2, "kvscope_kv_bytes_per_token"), 1);
  auto none = post(port, "/v1/chat/completions",
                   {{"messages", {{{"role", "system"}, {"content", "x"}}}}, {"reasoning", "fast"}});
  EXPECT_EQ(none.status, 400) << none.body;
}

}  // namespace server_reasoning_test
