// The commands: train-difficulty writes an estimator tied to its model, eval --mode auto prints the
// four-mode table with it, analyze-difficulty reports per-layer and per-share probes, and an
// estimator for another model is refused with a clear message.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace difficulty_cli_test {

using namespace kvscope::test;

namespace {
const std::string kModel = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.gguf";
}

TEST(DifficultyCli, TrainEvalAnalyze) {
  if (!std::filesystem::exists(kModel)) GTEST_SKIP() << "no embedded reasoner";
  const auto dir = temp_dir();
  const std::string out = (dir / "d.bin").string();
  auto t = run_cli("train-difficulty -m " + kModel + " --n 30 --epochs 5 -t 2 -q --json -o " + out);
  ASSERT_EQ(t.status, 0) << t.out;
  const auto info = nlohmann::json::parse(t.out);
  EXPECT_EQ(info["n_problems"], 30);
  EXPECT_GT(info["rows"].get<int>(), 30);  // check points join the question rows
  EXPECT_LT(info["params"].get<int>(), 1000000);
  ASSERT_TRUE(std::filesystem::exists(out));

  auto e = run_cli("eval -m " + kModel + " --mode auto --n 12 -t 2 -q --json --difficulty " + out);
  ASSERT_EQ(e.status, 0) << e.out;
  const auto j = nlohmann::json::parse(e.out);
  for (const char* m : {"fast", "mixed", "slow", "auto"}) {
    ASSERT_TRUE(j["modes"].contains(m)) << m;
    EXPECT_EQ(j["modes"][m]["n"], 12);
    EXPECT_GT(j["modes"][m]["speedup_vs_slow"].get<double>(), 0);
  }
  EXPECT_DOUBLE_EQ(j["modes"]["slow"]["speedup_vs_slow"].get<double>(), 1.0);
  int chosen = 0;
  for (auto& [k, v] : j["modes"]["auto"]["initial_modes"].items()) chosen += v.get<int>();
  EXPECT_EQ(chosen, 12);
  // The auto row's bookkeeping: every switch counted, the final modes sum to n as well.
  int ended = 0;
  for (auto& [k, v] : j["modes"]["auto"]["final_modes"].items()) ended += v.get<int>();
  EXPECT_EQ(ended, 12);
  for (const char* k : {"early_answers", "upgrades", "retries", "low_confidence_fallbacks"})
    EXPECT_GE(j["modes"]["auto"][k].get<int>(), 0) << k;
  auto off = run_cli("eval -m " + kModel + " --mode auto --n 12 -t 2 -q --json --retry-below 0 --difficulty " + out);
  ASSERT_EQ(off.status, 0) << off.out;
  EXPECT_EQ(nlohmann::json::parse(off.out)["modes"]["auto"]["retries"], 0);
  auto badflag = run_cli("eval -m " + kModel + " --mode auto --n 2 -q --retry-below 1.5 --difficulty " + out);
  EXPECT_NE(badflag.status, 0);
  EXPECT_NE(badflag.out.find("retry"), std::string::npos) << badflag.out;

  auto a = run_cli("analyze-difficulty -m " + kModel + " --n 40 -t 2 -q --json");
  ASSERT_EQ(a.status, 0) << a.out;
  const auto aj = nlohmann::json::parse(a.out);
  EXPECT_EQ(aj["by_layer"].size(), 6u);     // 4 layers, mid, all
  EXPECT_EQ(aj["by_fraction"].size(), 8u);  // 10/20/50/100% x pre/post RoPE

  // An estimator trained for the reasoner, used with another model.
  const std::string other = (dir / "other.gguf").string();
  ASSERT_EQ(run_cli("gen-model --dim 64 --layers 2 --heads 2 --kv-heads 1 --ffn 64 --vocab 300 --ctx 128 -o " + other).status, 0);
  auto bad = run_cli("eval -m " + other + " --mode auto --n 2 -q --difficulty " + out);
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.out.find("another model"), std::string::npos) << bad.out;
  auto none = run_cli("run -m " + other + " --reasoning auto -p 'Question: x'");
  EXPECT_EQ(none.status, 1);
  EXPECT_NE(none.out.find("difficulty estimator"), std::string::npos) << none.out;
}

}  // namespace difficulty_cli_test
