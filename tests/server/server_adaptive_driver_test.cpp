// One adaptive driver: the same greedy question gives the same text, the same decision and the same
// switch trace from `kvscope run` (the Context adapter) and from the server (the Engine adapter),
// with re-estimates every 5 tokens and the answer-confidence retry on, on both embedded models.
// Thresholds that make every first attempt fast and every answer unsure force upgrades through
// retries, so the restart path is compared too; the model's own text is never pinned.
#include <gtest/gtest.h>

#include <filesystem>

#include "server_test_util.h"

namespace server_adaptive_driver_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {

struct Config {
  const char* name;
  std::string cli;  // the CLI's flags for it
  double fast, slow, min_conf, retry_below, drop;
  bool early_answer = false;
};

const Config kConfigs[] = {
    {"defaults", "", 25, 75, 0.60, 0.98, 0.30},
    // Every first attempt fast, every answer retried at the next effort (a mean token probability
    // is under 1).
    {"retries", "--fast-threshold 100 --slow-threshold 100 --min-confidence 0 --retry-below 1", 100, 100, 0, 1.0, 0.30},
    // One threshold and a hair trigger: early answers and upgrades whenever d moves.
    {"switches", "--fast-threshold 45 --slow-threshold 45 --min-confidence 0 --early-drop 0.02 --early-answer", 45, 45, 0, 0.98, 0.02, true},
};

const char* kQuestions[] = {
    "Question: (1) A box holds 6 pens. (2) Mia buys 7 boxes. (3) She gives away 9 pens. How many pens does Mia have left?",
    "Question: (1) Sam had 50 dollars. (2) He spent 18 dollars on a book and 7 dollars on lunch. How many dollars does he have now?",
};

// The decision and its trace without the timings and the reason's wording.
json decision(const json& rep) {
  json sw = json::array(), tr = json::array();
  for (const auto& s : rep.value("switches", json::array()))
    sw.push_back({{"action", s["action"]}, {"from", s["from"]}, {"to", s["to"]}, {"attempt", s["attempt"]}, {"generated", s["generated"]}});
  for (const auto& p : rep.value("trace", json::array())) tr.push_back({{"attempt", p["attempt"]}, {"generated", p["generated"]}});
  return {{"initial_mode", rep["initial_mode"]}, {"final_mode", rep["final_mode"]}, {"switches", sw}, {"trace", tr},
          {"generated_total", rep["generated_total"]}, {"attempts", rep["attempts"]}};
}

void expect_same_d(const json& cli, const json& srv, const std::string& what) {
  const json a = cli.value("trace", json::array()), b = srv.value("trace", json::array());
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i]["difficulty"].get<double>(), b[i]["difficulty"].get<double>(), 0.5) << what;
  EXPECT_NEAR(cli["initial_difficulty"].get<double>(), srv["initial_difficulty"].get<double>(), 0.5) << what;
}

}  // namespace

TEST(ServerAdaptiveDriver, CliAndServerGiveTheSameTextAndTrace) {
  const char* bin = std::getenv("KVSCOPE_BIN");
  if (!bin) GTEST_SKIP() << "KVSCOPE_BIN not set";
  const std::string levels = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner.gguf";
  const std::string v1 = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.gguf";
  if (!std::filesystem::exists(levels) || !std::filesystem::exists(v1)) GTEST_SKIP() << "no embedded reasoner";
  int retries = 0, restarts = 0, checks = 0, early = 0;
  for (const std::string& model : {levels, v1}) {
    const bool chat = model == levels;  // the reasoner speaks chat turns; the first one bare questions
    for (const Config& cfg : kConfigs) {
      if (!chat && std::string(cfg.name) == "defaults") continue;  // the first reasoner: the switching configs only
      auto o = test_options();
      o.model_path = model;  // the estimator is found next to it
      o.signals = false;
      o.controller.fast_at_most = cfg.fast;
      o.controller.slow_above = cfg.slow;
      o.controller.min_confidence = cfg.min_conf;
      o.controller.retry_below = cfg.retry_below;
      o.controller.drop = cfg.drop;
      o.controller.early_answer = cfg.early_answer;
      auto srv = start_server(o);
      for (const char* q : kQuestions) {
        const std::string what = std::string(chat ? "levels" : "v1") + "/" + cfg.name + ": " + q;
        json body = {{"temperature", 0}, {"max_tokens", 120}};
        if (chat) {
          body["messages"] = json::array({{{"role", "user"}, {"content", q}}});
          body["reasoning_effort"] = "auto";
        } else {
          body["prompt"] = q;
          body["reasoning"] = "auto";
        }
        auto r = post(srv->port(), chat ? "/v1/chat/completions" : "/v1/completions", body);
        ASSERT_EQ(r.status, 200) << what << "\n" << r.body;
        int status = 0;
        const std::string out =
            run_capture(std::string(bin) + " run -m " + model + (chat ? " --chat --reasoning-effort auto" : " --reasoning auto") +
                            " -p '" + q + "' " + cfg.cli + " --temp 0 -n 120 -t 2 --json 2>/dev/null",
                        &status);
        ASSERT_EQ(status, 0) << what << "\n" << out;
        json c;
        try {
          c = json::parse(out);
          ASSERT_TRUE(c.contains("kvscope")) << what << "\n" << out;
        } catch (const std::exception& e) {
          FAIL() << what << ": " << e.what() << "\n" << out;
        }
        const json resp = r.j();
        const json& choice = resp["choices"][0];
        const json srep = resp["kvscope"]["reasoning"], crep = c["kvscope"]["reasoning"];
        if (chat) {
          EXPECT_EQ(c["content"], choice["message"]["content"]) << what;
          EXPECT_EQ(c["reasoning_content"], choice["message"]["reasoning_content"].is_null() ? json("")
                                                                                              : choice["message"]["reasoning_content"])
              << what;
          EXPECT_EQ(c["reasoning_tokens"], resp["usage"]["completion_tokens_details"]["reasoning_tokens"]) << what;
        } else {
          EXPECT_EQ(c["text"], choice["text"]) << what;
        }
        EXPECT_EQ(decision(crep), decision(srep)) << what << "\nCLI:    " << crep.dump() << "\nserver: " << srep.dump();
        expect_same_d(crep, srep, what);
        for (const auto& s : srep.value("switches", json::array())) {
          retries += s["action"] == "retry";
          restarts += s["action"] == "retry" || s["action"] == "upgrade";
          early += s["action"] == "early_answer";
        }
        checks += static_cast<int>(srep.value("trace", json::array()).size());
      }
    }
  }
  // The comparison covered re-estimates and restarts, not only first decisions.
  EXPECT_GT(checks, 0);
  EXPECT_GT(retries, 0);
  std::printf("[ compared %d re-estimates, %d restarts (%d retries), %d early answers ]\n", checks, restarts, retries, early);
}

}  // namespace server_adaptive_driver_test
