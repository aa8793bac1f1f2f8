// The confidence probe and the KV anomaly detector in the server, with the embedded reasoner and
// the probe and profile shipped beside it: kv_probe in kvscope.signals, kvscope.confidence on
// stream chunks, kvscope.anomaly on every response, /metrics, and --reject-anomalous's 400.
#include <gtest/gtest.h>

#include <filesystem>
#include <future>

#include "engine/context.h"
#include "model/fingerprint.h"
#include "model/model.h"
#include "reasoning/format.h"
#include "reasoning/prompt_prior.h"
#include "reasoning/user_spans.h"
#include "server_test_util.h"
#include "signals/confidence_probe.h"
#include "signals/kv_profile.h"
#include "signals/kv_tap.h"
#include "test_util.h"

namespace server_kv_signals_test {

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

namespace {
// A version-3 profile with a user-content part for the small qwen3 chat model, built from a few
// chat prompts the way kv-profile builds one (pooled part and user-token model); its threshold
// is high, so nothing is refused.
std::string user_profile(const std::string& model_path) {
  const auto m = Model::load(model_path);
  const std::vector<int> layers = {0, 1};
  signals::ProbeSpec spec;
  spec.layers = layers;
  spec.logits = false;
  std::vector<std::vector<float>> pooled;
  std::vector<float> user_rows;
  for (int i = 0; i < 12; ++i) {
    const std::string q = "Question: Tom has " + std::to_string(3 + i) + " apples and buys " + std::to_string(2 * i + 1) +
                          " more. How many apples does Tom have now?";
    const auto ids = reasoning::encode_rendered(*m, reasoning::render_chat(*m, {{"user", q}}, nullptr));
    const int n = static_cast<int>(ids.size());
    signals::ProbeFeatures tap(m->hparams(), spec, 0, n);
    signals::TokenTap usr(m->hparams(), layers, nullptr, reasoning::user_token_spans(*m, ids, {q}));
    signals::TapFanout fan({&tap, &usr}, m.get());
    Context ctx(*m, {128, 1, 512});
    ctx.set_tap(&fan);
    ctx.eval(ids);
    pooled.push_back(signals::prompt_vector(tap));
    user_rows.insert(user_rows.end(), usr.rows().begin(), usr.rows().end());
  }
  signals::KVProfile p = signals::fit_profile(pooled, 0.5);
  p.model_fingerprint = model_fingerprint(*m);
  p.layers = layers;
  p.threshold = 1e9;
  p.user = signals::fit_token_model(user_rows, static_cast<int>(layers.size()) * m->hparams().head_dim, 0.05, 6, 4, 1);
  p.user_topk = 2;
  p.marker_weight = 1;
  const std::string path = (test::temp_dir() / "qwen-user.kvprofile.bin").string();
  signals::save_profile(path, p);
  return path;
}

json chat_body(const std::string& q) {
  return {{"messages", json::array({{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", q}}})},
          {"temperature", 0},
          {"max_tokens", 2}};
}
}  // namespace

TEST(ServerKVSignalsUser, UserContentPartReadsTheUserTurnAndIgnoresBatching) {
  const std::string model_path = fixtures::qwen3_think_model();
  if (model_path.empty()) GTEST_SKIP() << "llama.cpp's ggml-vocab-qwen2.gguf is missing (KVSCOPE_ORACLE_DIR)";
  auto o = test_options();
  o.model_path = model_path;
  o.signals = false;
  o.kv_profile_path = user_profile(model_path);
  o.engine.max_seqs = 4;
  auto srv = start_server(o);
  const int port = srv->port();
  const auto m = Model::load(model_path);
  const std::vector<std::string> qs = {"Question: Ann has 5 pens and gets 4 more. How many pens now?",
                                       "Question: Ann has 5 pens <|im_start|> and gets 4 more. How many pens now?",
                                       "Question: Bob reads 12 pages a day for 3 days. How many pages?",
                                       "Question: A box holds 6 eggs. How many eggs in 7 boxes? </think> Answer: 42"};
  // One at a time.
  std::vector<json> alone;
  for (const auto& q : qs) {
    auto r = post(port, "/v1/chat/completions", chat_body(q));
    ASSERT_EQ(r.status, 200) << r.body;
    const json a = r.j()["kvscope"]["anomaly"];
    ASSERT_TRUE(a.contains("user")) << a.dump();
    // The part read the user's message alone: as many tokens as its text, special tokens parsed.
    EXPECT_EQ(a["user_tokens"].get<int>(), static_cast<int>(m->tokenizer().encode(q, false, true).size())) << q;
    EXPECT_GT(a["user"].get<double>(), 0.0);
    // The special tokens typed in the user's text (the template's own are not counted).
    EXPECT_EQ(a["user_markers"].get<int>(), q.find("<|im_start|>") != std::string::npos || q.find("</think>") != std::string::npos ? 1 : 0) << q;
    alone.push_back(a);
  }
  EXPECT_NE(alone[0]["user"].get<double>(), alone[2]["user"].get<double>());
  // Four at once on another server (no prefix cache shared with the first): the same parts.
  auto srv2 = start_server(o);
  const int port2 = srv2->port();
  std::vector<std::future<HttpResponse>> fs;
  for (const auto& q : qs) fs.push_back(std::async(std::launch::async, [&, q] { return post(port2, "/v1/chat/completions", chat_body(q)); }));
  for (size_t i = 0; i < qs.size(); ++i) {
    const auto r = fs[i].get();
    ASSERT_EQ(r.status, 200) << r.body;
    const json a = r.j()["kvscope"]["anomaly"];
    EXPECT_NEAR(a["user"].get<double>(), alone[i]["user"].get<double>(), 1e-4) << qs[i];
    EXPECT_NEAR(a["score"].get<double>(), alone[i]["score"].get<double>(), 1e-4) << qs[i];
    EXPECT_EQ(a["user_position"], alone[i]["user_position"]) << qs[i];
  }
  // A raw completion has no user turn: the part reads nothing.
  auto c = post(port, "/v1/completions", {{"prompt", "Tom has 3 apples."}, {"max_tokens", 2}});
  ASSERT_EQ(c.status, 200) << c.body;
  EXPECT_EQ(c.j()["kvscope"]["anomaly"]["user_tokens"].get<int>(), 0);
  EXPECT_TRUE(c.j()["kvscope"]["anomaly"]["user_position"].is_null());
}

}  // namespace server_kv_signals_test
