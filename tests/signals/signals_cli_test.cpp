// The signals commands as a user runs them: JSON with the documented fields, clear errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace signals_cli_test {

using namespace kvscope;

namespace {
struct Result {
  int status;
  std::string out;
};
Result run(const std::string& args, bool merge_stderr = false) {
  int st = 0;
  std::string out = test::run_capture(test::kvscope_bin() + " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null"), &st);
  return {st, out};
}
std::string model() {
  static std::string p = [] {
    auto path = (test::temp_dir() / "signals_cli.gguf").string();
    auto r = run("gen-model --dim 64 --layers 3 --heads 4 --kv-heads 2 --ffn 64 --vocab 320 --ctx 512 -o " + path, true);
    EXPECT_EQ(r.status, 0) << r.out;
    return path;
  }();
  return p;
}
}  // namespace

TEST(SignalsCli, EmbedPrintsAUnitVector) {
  auto r = run("embed -m " + model() + " --text 'two apples and a pear' --dimensions 6 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["embedding"].size(), 6u);
  double nn = 0;
  for (double x : j["embedding"]) nn += x * x;
  EXPECT_NEAR(nn, 1.0, 1e-5);
  auto bad = run("embed -m " + model() + " --text hi --layers 7", true);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("out of range"), std::string::npos) << bad.out;
  bad = run("embed -m " + model() + " --text hi --dimensions 999", true);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("dimensions must be between"), std::string::npos) << bad.out;
}

TEST(SignalsCli, RunJsonCarriesSignals) {
  auto r = run("run -m " + model() + " -p 'hello there' -n 6 --temp 0 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("signals"));
  for (const char* k : {"kv_coe_c", "kv_coe_r", "kv_coe_c_norm", "kv_coe_r_norm", "max_prob", "perplexity", "entropy",
                        "hidden_coe_c", "hidden_coe_r", "memory", "layers"})
    EXPECT_TRUE(j["signals"].contains(k)) << k;
  auto traced = nlohmann::json::parse(run("run -m " + model() + " -p 'hello there' -n 6 --temp 0 --json --signal-trace").out);
  const int n = traced["signals"]["n_tokens"];
  EXPECT_EQ(traced["signals"]["trace"]["dr"].size(), static_cast<size_t>(n - 1));
  auto plain = nlohmann::json::parse(run("run -m " + model() + " -p 'hello there' -n 6 --temp 0 --json --no-signals").out);
  EXPECT_FALSE(plain.contains("signals"));
  EXPECT_EQ(plain["tokens"], j["tokens"]);  // the tap does not change what is generated
}

TEST(SignalsCli, EvalConfidenceReportsEveryScoreAndTheAblation) {
  auto r = run("eval-confidence -m " + model() + " --mode fast --n 4 --max-tokens 4 -t 1 --json -q");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"kv_coe_c", "kv_coe_r", "kv_coe_c_norm", "max_prob", "perplexity", "entropy", "hidden_coe_c"}) {
    ASSERT_TRUE(j["scores"].contains(k)) << k;
    for (const char* m : {"auroc", "auroc_best", "fpr95", "aupr", "higher_is_confident"}) EXPECT_TRUE(j["scores"][k].contains(m));
  }
  for (const char* k : {"all", "mid", "layer_0", "layer_1", "layer_2"}) EXPECT_TRUE(j["ablation"].contains(k)) << k;
  EXPECT_EQ(j["n"], 4);
  auto bad = run("eval-confidence -m " + model() + " --mode quick --n 2", true);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("unknown mode"), std::string::npos) << bad.out;
}

TEST(SignalsCli, EvalEmbedComparesSources) {
  auto r = run("eval-embed -m " + model() + " --n 12 -t 1 --json -q");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  for (const char* s : {"kv_mid", "kv_all", "token_mean", "hidden_last"}) {
    ASSERT_TRUE(j["sources"].contains(s)) << s;
    const double acc = j["sources"][s]["classification_accuracy"];
    EXPECT_GE(acc, 0.0);
    EXPECT_LE(acc, 1.0);
  }
}

TEST(SignalsCli, BenchMeasuresTheTap) {
  auto r = run("bench -m " + model() + " -p 0 -n 8 -r 1 -t 1 --tap --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"tg_tok_s_tap", "tap_slowdown", "tap_us_per_token", "tap_bytes", "seq_kv_bytes"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_GT(j["tap_bytes"].get<double>(), 0);
}

}  // namespace signals_cli_test
