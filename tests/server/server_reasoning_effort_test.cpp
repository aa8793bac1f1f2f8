// reasoning_effort, enable_thinking and thinking budgets on chat completions, with a random qwen3
// that has a real Qwen vocabulary and a Qwen3-style template: the thinking goes to
// message.reasoning_content (delta.reasoning_content in streams), the answer to content, and
// usage.completion_tokens_details.reasoning_tokens counts it; at the budget the server writes
// </think> and the model answers; the CLI gives the same text. The embedded model thinks and
// answers the same way (levels in a system message); the first reasoner's private "Mode:
// ...\nAnswer:" lines stay out of content. Bad input is a 400 naming the parameter.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fixtures.h"
#include "sampling/json_prefix.h"
#include "server_test_util.h"

namespace server_reasoning_effort_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {

server::ServerOptions qwen_options() {
  auto o = test_options();
  o.model_path = fixtures::qwen3_think_model();
  o.effort_budgets = {6, 12};
  o.signals = false;
  return o;
}

json chat(const std::string& q, json extra = json::object()) {
  json b = {{"messages", json::array({{{"role", "user"}, {"content", q}}})}, {"temperature", 0}, {"max_tokens", 20}};
  for (auto& [k, v] : extra.items()) b[k] = v;
  return b;
}

// A stream's reasoning and content deltas, concatenated, and its usage chunk.
struct Streamed {
  std::string reasoning, content;
  json usage;
  bool both_in_one_chunk = false;
};
Streamed read_stream(const std::string& body) {
  Streamed s;
  size_t pos = 0;
  while ((pos = body.find("data: ", pos)) != std::string::npos) {
    const size_t end = body.find("\n\n", pos);
    const std::string data = body.substr(pos + 6, end - pos - 6);
    pos = end;
    if (data == "[DONE]") break;
    const json j = json::parse(data);
    if (j.contains("usage") && !j["usage"].is_null()) s.usage = j["usage"];
    if (j["choices"].empty()) continue;
    const json& d = j["choices"][0]["delta"];
    if (d.contains("reasoning_content")) s.reasoning += d["reasoning_content"].get<std::string>();
    if (d.contains("content") && d["content"].is_string()) s.content += d["content"].get<std::string>();
    if (d.contains("reasoning_content") && d.contains("content")) s.both_in_one_chunk = true;
  }
  return s;
}

const std::string kQ = "What is 2+2?";

}  // namespace

class ServerReasoningEffort : public ::testing::Test {
 protected:
  void SetUp() override {
    if (fixtures::qwen3_think_model().empty()) GTEST_SKIP() << "llama.cpp's ggml-vocab-qwen2.gguf is missing (KVSCOPE_ORACLE_DIR)";
  }
};

TEST_F(ServerReasoningEffort, EffortsBudgetsAndSplitting) {
  auto srv = start_server(qwen_options());
  const int port = srv->port();
  auto models = http(port, "GET", "/v1/models");
  EXPECT_EQ(models.j()["data"][0]["kvscope"]["reasoning_format"], "qwen3");

  // low: 6 thinking tokens, then the server writes </think> and the model answers.
  auto low = post(port, "/v1/chat/completions", chat(kQ, {{"reasoning_effort", "low"}}));
  ASSERT_EQ(low.status, 200) << low.body;
  const json lm = low.j()["choices"][0]["message"];
  EXPECT_FALSE(lm["reasoning_content"].get<std::string>().empty());
  EXPECT_FALSE(lm["content"].get<std::string>().empty());
  EXPECT_EQ(lm["content"].get<std::string>().find("</think>"), std::string::npos);
  EXPECT_EQ(lm["reasoning_content"].get<std::string>().find("think>"), std::string::npos);
  EXPECT_EQ(low.j()["usage"]["completion_tokens"], 20);
  EXPECT_EQ(low.j()["usage"]["completion_tokens_details"]["reasoning_tokens"], 6);
  const json lr = low.j()["kvscope"]["reasoning"];
  EXPECT_EQ(lr["format"], "qwen3");
  EXPECT_EQ(lr["effort"], "low");
  EXPECT_EQ(lr["budget"], 6);
  EXPECT_EQ(lr["budget_cut"], true);

  // medium's budget; an explicit budget in either spelling wins and gives the same answer.
  auto med = post(port, "/v1/chat/completions", chat(kQ, {{"reasoning_effort", "medium"}}));
  EXPECT_EQ(med.j()["usage"]["completion_tokens_details"]["reasoning_tokens"], 12);
  auto b1 = post(port, "/v1/chat/completions", chat(kQ, {{"thinking_token_budget", 9}}));
  auto b2 = post(port, "/v1/chat/completions", chat(kQ, {{"reasoning_budget", 9}}));
  ASSERT_EQ(b1.status, 200) << b1.body;
  EXPECT_EQ(b1.j()["usage"]["completion_tokens_details"]["reasoning_tokens"], 9);
  EXPECT_EQ(b1.j()["choices"][0]["message"], b2.j()["choices"][0]["message"]);
  // The first 6 thinking tokens are the same whatever the budget (greedy, same prompt).
  const std::string r6 = lm["reasoning_content"].get<std::string>();
  const std::string r9 = b1.j()["choices"][0]["message"]["reasoning_content"].get<std::string>();
  EXPECT_EQ(r9.substr(0, r6.size() - 1), r6.substr(0, r6.size() - 1));

  // none / enable_thinking false: an empty think block in the prompt, no reasoning.
  auto none = post(port, "/v1/chat/completions", chat(kQ, {{"reasoning_effort", "none"}}));
  auto off = post(port, "/v1/chat/completions", chat(kQ, {{"chat_template_kwargs", {{"enable_thinking", false}}}}));
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_TRUE(none.j()["choices"][0]["message"]["reasoning_content"].is_null());
  EXPECT_FALSE(none.j()["choices"][0]["message"]["content"].get<std::string>().empty());
  EXPECT_EQ(none.j()["usage"]["completion_tokens_details"]["reasoning_tokens"], 0);
  EXPECT_EQ(none.j()["choices"][0]["message"], off.j()["choices"][0]["message"]);
  // The empty block (<think> "\n\n" </think> "\n\n") is 2 tokens longer than the open one (<think> "\n").
  EXPECT_EQ(none.j()["usage"]["prompt_tokens"].get<int>(), low.j()["usage"]["prompt_tokens"].get<int>() + 2);

  // high: unbounded; this random model never closes the block, so everything is reasoning.
  auto high = post(port, "/v1/chat/completions", chat(kQ, {{"reasoning_effort", "high"}}));
  EXPECT_EQ(high.j()["usage"]["completion_tokens_details"]["reasoning_tokens"], 20);
  EXPECT_EQ(high.j()["choices"][0]["message"]["content"], "");
  EXPECT_EQ(high.j()["kvscope"]["reasoning"]["budget_cut"], false);

  // Completions: with an effort the think block follows the text prompt and the budget holds (the
  // text stays whole: OpenAI's completions have no reasoning field); without one the prompt is raw.
  auto cl = post(port, "/v1/completions", {{"prompt", kQ}, {"temperature", 0}, {"max_tokens", 20}, {"reasoning_effort", "low"}});
  ASSERT_EQ(cl.status, 200) << cl.body;
  EXPECT_EQ(cl.j()["usage"]["completion_tokens_details"]["reasoning_tokens"], 6);
  EXPECT_NE(cl.j()["choices"][0]["text"].get<std::string>().find("</think>"), std::string::npos);
  auto raw = post(port, "/v1/completions", {{"prompt", kQ}, {"temperature", 0}, {"max_tokens", 8}});
  EXPECT_FALSE(raw.j()["usage"].contains("completion_tokens_details")) << raw.body;
  EXPECT_FALSE(raw.j()["kvscope"].contains("reasoning")) << raw.body;

  // A stream carries the same split in delta.reasoning_content and delta.content.
  auto st = post(port, "/v1/chat/completions",
                 chat(kQ, {{"reasoning_effort", "low"}, {"stream", true}, {"stream_options", {{"include_usage", true}}}}));
  ASSERT_EQ(st.status, 200) << st.body;
  const Streamed s = read_stream(st.body);
  EXPECT_EQ(s.reasoning, lm["reasoning_content"].get<std::string>());
  EXPECT_EQ(s.content, lm["content"].get<std::string>());
  EXPECT_FALSE(s.both_in_one_chunk);
  EXPECT_EQ(s.usage["completion_tokens_details"]["reasoning_tokens"], 6);
}

TEST_F(ServerReasoningEffort, BadInputIsA400NamingIt) {
  auto srv = start_server(qwen_options());
  const int port = srv->port();
  auto unknown = post(port, "/v1/chat/completions", chat(kQ, {{"reasoning_effort", "extreme"}}));
  EXPECT_EQ(unknown.status, 400);
  EXPECT_EQ(unknown.j()["error"]["param"], "reasoning_effort");
  EXPECT_NE(unknown.j()["error"]["message"].get<std::string>().find("extreme"), std::string::npos);
  auto neg = post(port, "/v1/chat/completions", chat(kQ, {{"thinking_token_budget", -3}}));
  EXPECT_EQ(neg.status, 400);
  EXPECT_EQ(neg.j()["error"]["param"], "thinking_token_budget");
  auto neg2 = post(port, "/v1/chat/completions", chat(kQ, {{"reasoning_budget", -2}}));
  EXPECT_EQ(neg2.status, 400);
  EXPECT_EQ(neg2.j()["error"]["param"], "reasoning_budget");
  auto kw = post(port, "/v1/chat/completions", chat(kQ, {{"chat_template_kwargs", {{"enable_thinking", "yes"}}}}));
  EXPECT_EQ(kw.status, 400);
  auto contra = post(port, "/v1/chat/completions",
                     chat(kQ, {{"reasoning_effort", "high"}, {"chat_template_kwargs", {{"enable_thinking", false}}}}));
  EXPECT_EQ(contra.status, 400);
  auto aut = post(port, "/v1/chat/completions", chat(kQ, {{"reasoning_effort", "auto"}}));
  EXPECT_EQ(aut.status, 400);
  EXPECT_NE(aut.j()["error"]["message"].get<std::string>().find("difficulty estimator"), std::string::npos) << aut.body;
  auto both = post(port, "/v1/chat/completions", chat(kQ, {{"reasoning_effort", "low"}, {"reasoning", "fast"}}));
  EXPECT_EQ(both.status, 400);
  // JSON output constrains the answer only: a thinking request is served (its reasoning free, its
  // answer a JSON prefix), as is one without thinking.
  const json fmt = {{"type", "json_object"}};
  auto thinking = post(port, "/v1/chat/completions", chat(kQ, {{"response_format", fmt}, {"reasoning_effort", "low"}}));
  ASSERT_EQ(thinking.status, 200) << thinking.body;
  {
    JsonPrefix prefix(true);
    EXPECT_TRUE(prefix.push(thinking.j()["choices"][0]["message"]["content"].get<std::string>())) << thinking.body;
  }
  auto plain = post(port, "/v1/chat/completions", chat(kQ, {{"response_format", fmt}, {"reasoning_effort", "none"}}));
  ASSERT_EQ(plain.status, 200) << plain.body;
  JsonPrefix prefix(true);
  EXPECT_TRUE(prefix.push(plain.j()["choices"][0]["message"]["content"].get<std::string>())) << plain.body;
}

TEST(ServerReasoningEffortPlain, EffortOnAModelWithoutAFormatIsA400) {
  auto o = test_options();
  o.signals = false;
  auto srv = start_server(o);
  auto r = post(srv->port(), "/v1/chat/completions", chat(kQ, {{"reasoning_effort", "high"}}));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.j()["error"]["param"], "reasoning_effort");
  EXPECT_NE(r.j()["error"]["message"].get<std::string>().find("reasoning format is 'none'"), std::string::npos) << r.body;
  // none is what such a model does anyway; no reasoning fields appear.
  auto n = post(srv->port(), "/v1/chat/completions", chat(kQ, {{"reasoning_effort", "none"}}));
  ASSERT_EQ(n.status, 200) << n.body;
  EXPECT_FALSE(n.j()["choices"][0]["message"].contains("reasoning_content"));
  EXPECT_FALSE(n.j()["usage"].contains("completion_tokens_details"));
}

// The CLI and the server give the same text for the same greedy question under a budget.
TEST_F(ServerReasoningEffort, CliAndServerAgree) {
  const char* bin = std::getenv("KVSCOPE_BIN");
  if (!bin) GTEST_SKIP() << "KVSCOPE_BIN not set";
  auto srv = start_server(qwen_options());
  auto r = post(srv->port(), "/v1/chat/completions", chat(kQ, {{"reasoning_effort", "low"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  int status = 0;
  const std::string out = run_capture(std::string(bin) + " run -m " + fixtures::qwen3_think_model() +
                                          " --chat -p '" + kQ + "' --reasoning-effort low --think-budget-low 6 "
                                          "--temp 0 -n 20 -t 2 --json 2>/dev/null",
                                      &status);
  ASSERT_EQ(status, 0) << out;
  const json c = json::parse(out);
  EXPECT_EQ(c["reasoning_content"], r.j()["choices"][0]["message"]["reasoning_content"]);
  EXPECT_EQ(c["content"], r.j()["choices"][0]["message"]["content"]);
  EXPECT_EQ(c["reasoning_tokens"], 6);
  EXPECT_EQ(c["kvscope"]["reasoning"]["budget_cut"], true);
  // An effort the model cannot express: the CLI's error names the format.
  const std::string bad =
      run_capture(std::string(bin) + " run -m " + server_model_path() + " -p hi --reasoning-effort high -n 4 2>&1", &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(bad.find("error: reasoning effort 'high' cannot be expressed: the model's reasoning format is 'none'"),
            std::string::npos)
      << bad;
  const std::string neg = run_capture(std::string(bin) + " run -m " + fixtures::qwen3_think_model() +
                                          " -p hi --reasoning-budget -4 -n 4 2>&1",
                                      &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(neg.find("--reasoning-budget must be -1"), std::string::npos) << neg;
}

// The embedded model: its mode line and answer cue are reasoning, content is the answer.
TEST(ServerReasoningEffortEmbedded, ModeLineStaysOutOfContent) {
  const std::string model = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.gguf";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "no embedded reasoner";
  auto o = test_options();
  o.model_path = model;
  o.signals = false;
  auto srv = start_server(o);
  const std::string q = "Question: (1) Tom has 34 apples. (2) He buys 12 more. How many apples does Tom have now?";
  for (const char* effort : {"", "low", "high"}) {
    json extra = json::object();
    if (*effort) extra["reasoning_effort"] = effort;
    extra["max_tokens"] = 120;
    auto r = post(srv->port(), "/v1/chat/completions", chat(q, extra));
    ASSERT_EQ(r.status, 200) << r.body;
    const json m = r.j()["choices"][0]["message"];
    const std::string content = m["content"].get<std::string>();
    EXPECT_EQ(content.find("Mode:"), std::string::npos) << effort << ": " << content;
    EXPECT_EQ(content.find("Answer:"), std::string::npos) << effort << ": " << content;
    EXPECT_FALSE(content.empty()) << effort << ": " << r.body;
    EXPECT_EQ(r.j()["kvscope"]["reasoning"]["format"], "kvscope");
  }
  auto slow = post(srv->port(), "/v1/chat/completions", chat(q, {{"reasoning_effort", "high"}, {"max_tokens", 120}}));
  EXPECT_EQ(slow.j()["kvscope"]["reasoning"]["mode"], "slow");
  EXPECT_GT(slow.j()["usage"]["completion_tokens_details"]["reasoning_tokens"].get<int>(), 5);
}

// The embedded model speaks the ecosystem's convention: efforts as levels in a system message,
// thinking in reasoning_content, the answer in content; streams carry the same text; the CLI gives
// the same text as the server, at a fixed effort and under auto (with the shipped estimator).
TEST(ServerReasoningEffortEmbedded, LevelsModelThinksThenAnswers) {
  const char* bin = std::getenv("KVSCOPE_BIN");
  const std::string model = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner.gguf";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "no embedded reasoner";
  auto o = test_options();
  o.model_path = model;
  o.signals = false;
  // The server re-estimates during an attempt as `kvscope run` does (the default), so auto's switches agree below.
  auto srv = start_server(o);
  const std::string q = "Question: (1) Tom has 34 apples. (2) Tom buys 12 more apples. How many apples does Tom have now?";
  int tokens[3] = {0, 0, 0};
  const char* efforts[] = {"low", "medium", "high"};
  for (int k = 0; k < 3; ++k) {
    auto r = post(srv->port(), "/v1/chat/completions", chat(q, {{"reasoning_effort", efforts[k]}, {"max_tokens", 120}}));
    ASSERT_EQ(r.status, 200) << r.body;
    const json m = r.j()["choices"][0]["message"];
    EXPECT_EQ(r.j()["kvscope"]["reasoning"]["format"], "levels");
    EXPECT_EQ(m["content"], "Answer: 46") << efforts[k] << ": " << r.body;
    EXPECT_EQ(r.j()["choices"][0]["finish_reason"], "stop");
    tokens[k] = r.j()["usage"]["completion_tokens_details"]["reasoning_tokens"].get<int>();
    const std::string thinking = m["reasoning_content"].is_string() ? m["reasoning_content"].get<std::string>() : "";
    if (k == 2) {
      EXPECT_NE(thinking.find("(2) Tom has 34 + 12 = 46 apples."), std::string::npos) << thinking;
    } else if (k == 1) {
      EXPECT_NE(thinking.find("34+12=46."), std::string::npos) << thinking;
    }
    // The stream carries the same reasoning and answer.
    auto st = post(srv->port(), "/v1/chat/completions",
                   chat(q, {{"reasoning_effort", efforts[k]}, {"max_tokens", 120}, {"stream", true}}));
    ASSERT_EQ(st.status, 200);
    const Streamed sd = read_stream(st.body);
    EXPECT_EQ(sd.content, "Answer: 46");
    EXPECT_EQ(sd.reasoning, thinking);
  }
  EXPECT_LT(tokens[0], tokens[1]);
  EXPECT_LT(tokens[1], tokens[2]);
  // The level comes after the conversation, so another effort on the same question reuses its KV.
  const std::string q2 = "Question: (1) Mia has 20 pencils. (2) Mia gives 5 pencils to Ben. How many pencils does Mia have now?";
  ASSERT_EQ(post(srv->port(), "/v1/chat/completions", chat(q2, {{"reasoning_effort", "high"}, {"max_tokens", 4}})).status, 200);
  auto again = post(srv->port(), "/v1/chat/completions", chat(q2, {{"reasoning_effort", "low"}, {"max_tokens", 4}}));
  ASSERT_EQ(again.status, 200);
  EXPECT_GE(again.j()["kvscope"]["prompt_tokens_cached"].get<int>(), again.j()["usage"]["prompt_tokens"].get<int>() / 2)
      << again.body;
  // kvscope's own "reasoning" field means the same levels.
  auto slow = post(srv->port(), "/v1/chat/completions", chat(q, {{"reasoning", "slow"}, {"max_tokens", 120}}));
  ASSERT_EQ(slow.status, 200) << slow.body;
  EXPECT_EQ(slow.j()["usage"]["completion_tokens_details"]["reasoning_tokens"], tokens[2]);
  if (!bin) return;
  for (const char* effort : {"high", "auto"}) {
    auto r = post(srv->port(), "/v1/chat/completions", chat(q, {{"reasoning_effort", effort}, {"max_tokens", 120}}));
    ASSERT_EQ(r.status, 200) << r.body;
    int status = 0;
    const std::string out = run_capture(std::string(bin) + " run -m " + model + " --chat -p '" + q +
                                            "' --reasoning-effort " + effort + " --temp 0 -n 120 -t 2 --json 2>/dev/null",
                                        &status);
    ASSERT_EQ(status, 0) << out;
    const json c = json::parse(out);
    const json m = r.j()["choices"][0]["message"];
    EXPECT_EQ(c["content"], m["content"]) << effort;
    EXPECT_EQ(c["reasoning_content"], m["reasoning_content"].is_null() ? json("") : m["reasoning_content"]) << effort;
  }
}

// The official openai npm client reads reasoning_content bodies and streams without error.
TEST_F(ServerReasoningEffort, OfficialNodeClient) {
  const char* env = std::getenv("KVSCOPE_OPENAI_DIR");
  const std::string dir = env ? env : std::string(KVSCOPE_SOURCE_DIR) + "/build/npm-openai";
  if (!std::filesystem::exists(dir + "/node_modules/openai/package.json"))
    GTEST_SKIP() << "the openai npm package is not installed in " << dir << " (run tools/openai/setup.sh)";
  int st = -1;
  run_capture("node --version >/dev/null 2>&1", &st);
  if (st != 0) GTEST_SKIP() << "node (Node.js >= 18) not found";
  auto srv = start_server(qwen_options());
  const std::string model = http(srv->port(), "GET", "/v1/models").j()["data"][0]["id"];
  const std::string cmd = "KVSCOPE_BASE_URL=http://127.0.0.1:" + std::to_string(srv->port()) + "/v1 KVSCOPE_MODEL='" + model +
                          "' KVSCOPE_OPENAI_DIR='" + dir + "' timeout 120 node '" + KVSCOPE_SOURCE_DIR +
                          "/tests/server/openai_reasoning.mjs' 2>&1";
  const std::string out = run_capture(cmd, &st);
  std::printf("%s", out.c_str());
  EXPECT_EQ(st, 0) << out;
  EXPECT_NE(out.find("7 checks passed"), std::string::npos) << out;
}

// auto on a think format: train-difficulty --data fits an estimator for this model; the server and
// the CLI then decide the effort from the prompt's KV and, deciding once (no re-estimates, no
// retry), give the same text.
TEST_F(ServerReasoningEffort, AutoWithAnEstimatorTrainedOnData) {
  const char* bin = std::getenv("KVSCOPE_BIN");
  if (!bin) GTEST_SKIP() << "KVSCOPE_BIN not set";
  const std::string data = (test::temp_dir() / "think-data.jsonl").string();
  {
    std::ofstream f(data);
    for (int i = 0; i < 12; ++i)
      f << json({{"question", "What is " + std::to_string(i) + " plus " + std::to_string(i + 3) + "?"}, {"answer", 2 * i + 3}}).dump()
        << "\n";
  }
  // Not the model's sibling "<stem>.difficulty.bin", which every later server would load.
  const std::string diff = (test::temp_dir() / "qwen3-think-trained.bin").string();
  int status = 0;
  const std::string trained =
      run_capture(std::string(bin) + " train-difficulty -m " + fixtures::qwen3_think_model() + " --data " + data +
                      " --n 12 --max-tokens 16 --epochs 20 --think-budget-medium 6 -t 2 -q --json -o " + diff + " 2>&1",
                  &status);
  ASSERT_EQ(status, 0) << trained;
  const json info = json::parse(trained.substr(trained.find('{')));
  EXPECT_EQ(info["task"], "data:" + data);
  EXPECT_EQ(info["n_problems"], 12);

  auto o = qwen_options();
  o.difficulty_path = diff;
  o.analysis_interval_ms = 0;
  o.controller.retry_below = 0;
  auto srv = start_server(o);
  auto r = post(srv->port(), "/v1/chat/completions", chat(kQ, {{"reasoning_effort", "auto"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  const json rep = r.j()["kvscope"]["reasoning"];
  EXPECT_EQ(rep["effort"], "auto");
  EXPECT_EQ(rep["source"], "estimate");
  EXPECT_EQ(rep["format"], "qwen3");
  EXPECT_TRUE(rep.contains("initial_difficulty") && rep.contains("confidence") && rep.contains("reason"));
  const std::string out = run_capture(std::string(bin) + " run -m " + fixtures::qwen3_think_model() + " --chat -p '" + kQ +
                                          "' --reasoning-effort auto --difficulty " + diff +
                                          " --no-early-answer --no-upgrade --retry-below 0 --temp 0 -n 20 -t 2 --json 2>/dev/null",
                                      &status);
  ASSERT_EQ(status, 0) << out;
  const json c = json::parse(out);
  EXPECT_EQ(c["kvscope"]["reasoning"]["initial_mode"], rep["initial_mode"]);
  EXPECT_EQ(c["reasoning_content"], r.j()["choices"][0]["message"]["reasoning_content"].is_null()
                                        ? json("")
                                        : r.j()["choices"][0]["message"]["reasoning_content"]);
  EXPECT_EQ(c["content"], r.j()["choices"][0]["message"]["content"]);

  // With re-estimates every 5 tokens (the analyzer in the server, the Context loop in the CLI) and
  // the answer-confidence retry on, both run and report their trace of d.
  srv.reset();
  auto o2 = qwen_options();
  o2.difficulty_path = diff;
  auto srv2 = start_server(o2);
  for (bool stream : {false, true}) {
    auto a = post(srv2->port(), "/v1/chat/completions", chat(kQ, {{"reasoning_effort", "auto"}, {"stream", stream}}));
    ASSERT_EQ(a.status, 200) << a.body;
    if (!stream) {
      EXPECT_TRUE(a.j()["kvscope"]["reasoning"].contains("trace")) << a.body;
      EXPECT_LE(a.j()["usage"]["completion_tokens"].get<int>(), 20);
    }
  }
  const std::string adaptive = run_capture(std::string(bin) + " run -m " + fixtures::qwen3_think_model() + " --chat -p '" + kQ +
                                               "' --reasoning-effort auto --difficulty " + diff + " --temp 0 -n 20 -t 2 --json 2>/dev/null",
                                           &status);
  ASSERT_EQ(status, 0) << adaptive;
  EXPECT_TRUE(json::parse(adaptive)["kvscope"]["reasoning"].contains("trace")) << adaptive;
}

}  // namespace server_reasoning_effort_test
