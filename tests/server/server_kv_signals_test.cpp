// The confidence probe and the KV anomaly detector in the server, with the embedded reasoner and
// the probe and profile shipped beside it: kv_probe in kvscope.signals, kvscope.confidence on
// stream chunks, kvscope.anomaly on every response, /metrics, and --reject-anomalous's 400.
#include <gtest/gtest.h>

#include <filesystem>

#include "model/fingerprint.h"
#include "model/model.h"
#include "reasoning/prompt_prior.h"
#include "server_test_util.h"
#include "signals/confidence_probe.h"
#include "test_util.h"

using namespace kvscope;
using namespace kvscope::test;

namespace {
const std::string kStem = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1";
const std::string kQuestion =
    "Question: (1) Tom has 34 apples. (2) Tom buys 12 more apples. How many apples does Tom have now?\nMode: slow\n";
}  // namespace

class ServerKVSignals : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* ext : {".gguf", ".confidence.bin", ".kvprofile.bin"})
      if (!std::filesystem::exists(kStem + ext)) GTEST_SKIP() << "no " << kStem << ext;
  }
  server::ServerOptions options() {
    auto o = test_options();
    o.model_path = kStem + ".gguf";  // the probe is found next to it
    o.kv_profile_path = "auto";      // the profile is opt-in
    return o;
  }
};

TEST_F(ServerKVSignals, ProbeAndAnomalyInResponses) {
  auto srv = start_server(options());
  const int port = srv->port();
  auto r = post(port, "/v1/completions", {{"prompt", kQuestion}, {"temperature", 0}, {"max_tokens", 64}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json k = r.j()["kvscope"];
  const double p = k["signals"]["kv_probe"].get<double>();
  EXPECT_GT(p, 0.0);
  EXPECT_LT(p, 1.0);
  EXPECT_FALSE(k["anomaly"]["anomalous"].get<bool>()) << k["anomaly"].dump();
  EXPECT_LT(k["anomaly"]["score"].get<double>(), k["anomaly"]["threshold"].get<double>());
  EXPECT_GT(k["anomaly"]["tokens"].get<int>(), 10);

  // Random-token soup is flagged, not refused (no --reject-anomalous).
  auto s = post(port, "/v1/completions", {{"prompt", "zq#7 vv@@ k)) 9;; xx&& plink }}{{ ~~ 00 wq"}, {"max_tokens", 4}});
  ASSERT_EQ(s.status, 200) << s.body;
  EXPECT_TRUE(s.j()["kvscope"]["anomaly"]["anomalous"].get<bool>()) << s.j()["kvscope"]["anomaly"].dump();
  const auto m = http(port, "GET", "/metrics").body;
  EXPECT_EQ(metric(m, "kvscope_prompts_anomalous_total"), 1);
  EXPECT_EQ(metric(m, "kvscope_prompt_anomaly_score_count"), 2);

  // The same prompt again comes from the prefix cache: the score does not change.
  auto again = post(port, "/v1/completions", {{"prompt", kQuestion}, {"temperature", 0}, {"max_tokens", 64}});
  ASSERT_EQ(again.status, 200);
  EXPECT_NEAR(again.j()["kvscope"]["anomaly"]["score"].get<double>(), k["anomaly"]["score"].get<double>(), 1e-3);
}

TEST_F(ServerKVSignals, RejectAnomalousAndStreamConfidence) {
  auto o = options();
  o.reject_anomalous = 0;  // the profile's own threshold
  o.confidence_every = 4;
  auto srv = start_server(o);
  const int port = srv->port();
  auto bad = post(port, "/v1/completions", {{"prompt", "zq#7 vv@@ k)) 9;; xx&& plink }}{{ ~~ 00 wq"}, {"max_tokens", 4}});
  ASSERT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(bad.j()["error"]["code"], "anomalous_prompt");
  EXPECT_NE(bad.j()["error"]["message"].get<std::string>().find("anomal"), std::string::npos);
  EXPECT_EQ(metric(http(port, "GET", "/metrics").body, "kvscope_requests_rejected_anomalous_total"), 1);

  auto r = post(port, "/v1/completions", {{"prompt", kQuestion}, {"temperature", 0}, {"max_tokens", 64}, {"stream", true}});
  ASSERT_EQ(r.status, 200) << r.body;
  int with_conf = 0, last_tokens = 0;
  size_t pos = 0;
  while ((pos = r.body.find("data: {", pos)) != std::string::npos) {
    const size_t end = r.body.find("\n\n", pos);
    const json c = json::parse(r.body.substr(pos + 6, end - pos - 6));
    pos = end;
    if (!c.contains("kvscope") || !c["kvscope"].contains("confidence")) continue;
    const json cf = c["kvscope"]["confidence"];
    EXPECT_GE(cf["p_correct"].get<double>(), 0.0);
    EXPECT_LE(cf["p_correct"].get<double>(), 1.0);
    EXPECT_GT(cf["tokens"].get<int>(), last_tokens);
    EXPECT_EQ(cf["tokens"].get<int>() % 4, 0);
    last_tokens = cf["tokens"].get<int>();
    ++with_conf;
  }
  EXPECT_GE(with_conf, 2) << r.body;
}

TEST_F(ServerKVSignals, PromptPriorProbeScoresTheSameFromThePrefixCache) {
  // A probe reading the prompt prior (the model's own difficulty estimator) needs the prompt's rows;
  // the second request's prompt comes from the prefix cache and is read back into the tap.
  const std::string dpath = kStem + ".difficulty.bin";
  if (!std::filesystem::exists(dpath)) GTEST_SKIP() << "no " << dpath;
  auto model = Model::load(kStem + ".gguf");
  const uint64_t fp = model_fingerprint(*model);
  signals::ProbeFile f;
  f.model_fingerprint = fp;
  f.spec.kv = false;
  f.spec.prior = reasoning::prompt_prior(reasoning::load_difficulty(dpath, fp), model->hparams().n_layer, dpath);
  f.mlp = signals::ProbeMLP(f.spec.dim(model->hparams().head_dim), 8, 5);
  const std::string ppath = (temp_dir() / "prior_server.confidence.bin").string();
  signals::save_probe(ppath, f);
  auto o = options();
  o.confidence_path = ppath;
  o.kv_profile_path.clear();  // no anomaly prefill: the first request computes its prompt, the second reads it back
  auto srv = start_server(o);
  const int port = srv->port();
  auto ask = [&](const std::string& q) {
    auto r = post(port, "/v1/completions", {{"prompt", q}, {"temperature", 0}, {"max_tokens", 1}});
    EXPECT_EQ(r.status, 200) << r.body;
    return r.j()["kvscope"]["signals"]["kv_probe"].get<double>();
  };
  // One token: the probe's response part is the same each time, its prompt prior decides the score.
  const double first = ask(kQuestion);
  const double cached_before = metric(http(port, "GET", "/metrics").body, "kvscope_prompt_tokens_cached_total");
  const double again = ask(kQuestion);
  EXPECT_GT(metric(http(port, "GET", "/metrics").body, "kvscope_prompt_tokens_cached_total"), cached_before);
  EXPECT_NEAR(again, first, 1e-3);
  const double other = ask("Question: (1) A farm has 300 cows. (2) It sells 120 cows and buys 45. (3) Then it sells "
                           "half of them. How many cows does the farm have now?\nMode: slow\n");
  EXPECT_NE(other, first);  // the prior reads the prompt: not a constant
}
