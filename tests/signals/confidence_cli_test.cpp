// train-confidence, kv-profile, eval-anomaly and eval-confidence's probe as a user runs them on the
// embedded reasoner: files written and read back, and another model's files refused with one
// clear error line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace confidence_cli_test {

using namespace kvscope;

namespace {
const std::string kModel = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.gguf";
const std::string kProbe = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.confidence.bin";
const std::string kProfile = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.kvprofile.bin";
struct Result {
  int status;
  std::string out;
};
Result run(const std::string& args, bool merge_stderr = false) {
  int st = 0;
  std::string out = test::run_capture(test::kvscope_bin() + " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null"), &st);
  return {st, out};
}
}  // namespace

class ConfidenceCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kModel) || !std::filesystem::exists(kProbe) || !std::filesystem::exists(kProfile))
      GTEST_SKIP() << "no embedded reasoner with its probe and profile";
  }
};

TEST_F(ConfidenceCli, TrainProfileAndEvaluate) {
  const auto dir = test::temp_dir();
  const std::string data = (dir / "conf_cli.jsonl").string(), probe = (dir / "conf_cli.bin").string(),
                    prof = (dir / "conf_cli.kvprofile.bin").string();
  ASSERT_EQ(run("tinygsm --jsonl --split validation --n 40 -o " + data).status, 0);
  auto t = run("train-confidence -m " + kModel + " --data " + data + " --modes fast,slow --layers 3 --epochs 5 -q --json -o " + probe);
  ASSERT_EQ(t.status, 0) << t.out;
  const auto j = nlohmann::json::parse(t.out);
  EXPECT_EQ(j["answers"], 80);
  EXPECT_GT(j["right"].get<int>(), 0);
  EXPECT_LT(j["params"].get<int>(), 1000000);
  auto e = run("eval-confidence -m " + kModel + " --probe " + probe + " --n 20 --no-ablation --no-hidden -q --json");
  ASSERT_EQ(e.status, 0) << e.out;
  const auto ej = nlohmann::json::parse(e.out);
  EXPECT_TRUE(ej["scores"].contains("kv_probe"));
  EXPECT_TRUE(ej["kv_probe_early"].contains("50%"));
  EXPECT_GT(ej["memory_per_sequence"]["probe_bytes"].get<double>(), 0);

  auto p = run("kv-profile -m " + kModel + " --data " + data + " -q --json -o " + prof);
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_GT(nlohmann::json::parse(p.out)["threshold"].get<double>(), 0);
  auto a = run("eval-anomaly -m " + kModel + " --profile " + prof + " --n 10 --sets soup,repeated -q --json");
  ASSERT_EQ(a.status, 0) << a.out;
  const auto aj = nlohmann::json::parse(a.out);
  EXPECT_GT(aj["sets"]["soup"]["auroc"].get<double>(), 0.9);
}

TEST_F(ConfidenceCli, AnotherModelsFilesAreRefused) {
  const std::string other = (test::temp_dir() / "conf_cli_other.gguf").string();
  ASSERT_EQ(run("gen-model --dim 64 --layers 4 --heads 4 --kv-heads 2 --ffn 64 --vocab 320 --ctx 256 -o " + other).status, 0);
  auto e = run("eval-confidence -m " + other + " --probe " + kProbe + " --n 2 --no-ablation -q", true);
  EXPECT_EQ(e.status, 1);
  EXPECT_NE(e.out.find("error: confidence file"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("another model"), std::string::npos) << e.out;
  auto a = run("eval-anomaly -m " + other + " --profile " + kProfile + " --n 10 -q", true);
  EXPECT_EQ(a.status, 1);
  EXPECT_NE(a.out.find("error: KV profile"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("another model"), std::string::npos) << a.out;
  auto bad = run("train-confidence -m " + kModel + " --data /nonexistent.jsonl -o /tmp/x.bin -q", true);
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.out.find("error: cannot open data file"), std::string::npos) << bad.out;
}

// The same tools on the chat reasoner (ChatML turns, levels): its prompts are rendered by its chat
// template, the answer is read after the think block, and every anomaly set is a user turn.
TEST(ConfidenceCliChat, ToolsRenderTheChatTemplate) {
  const std::string chat = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner.gguf";
  if (!std::filesystem::exists(chat)) GTEST_SKIP() << "no chat reasoner";
  const auto dir = test::temp_dir();
  const std::string data = (dir / "conf_chat.jsonl").string(), probe = (dir / "conf_chat.bin").string(),
                    prof = (dir / "conf_chat.kvprofile.bin").string(), dump = (dir / "conf_chat_dump.jsonl").string();
  ASSERT_EQ(run("tinygsm --jsonl --split validation --n 30 -o " + data).status, 0);
  auto t = run("train-confidence -m " + chat + " --data " + data + " --modes fast,slow --layers 3 --epochs 5 -q --json -o " + probe);
  ASSERT_EQ(t.status, 0) << t.out;
  const auto j = nlohmann::json::parse(t.out);
  EXPECT_EQ(j["format"], "levels");
  EXPECT_EQ(j["answers"], 60);
  EXPECT_GT(j["right"].get<int>(), 0);  // answers read after </think>
  auto e = run("eval-confidence -m " + chat + " --probe " + probe + " --mode slow --n 10 --no-ablation --no-hidden -q --json");
  ASSERT_EQ(e.status, 0) << e.out;
  const auto ej = nlohmann::json::parse(e.out);
  EXPECT_EQ(ej["format"], "levels");
  EXPECT_GT(ej["correct"].get<int>(), 0);
  EXPECT_TRUE(ej["scores"].contains("kv_probe"));
  auto p = run("kv-profile -m " + chat + " --data " + data + " -q --json -o " + prof);
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_EQ(nlohmann::json::parse(p.out)["prompts_fit"].get<int>() + nlohmann::json::parse(p.out)["prompts_calibration"].get<int>(), 90);
  auto a = run("eval-anomaly -m " + chat + " --profile " + prof + " --n 10 --sets control,soup -q --json --dump " + dump);
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_EQ(nlohmann::json::parse(a.out)["format"], "levels");
  std::ifstream in(dump);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    const auto d = nlohmann::json::parse(line);
    const std::string text = d["text"];
    EXPECT_EQ(text.rfind("<|im_start|>user\n", 0), 0u) << text;
    EXPECT_NE(text.find("<|im_start|>assistant\n<think>\n"), std::string::npos) << text;
    ++n;
  }
  EXPECT_EQ(n, 30);  // normal, control, soup
  // The first reasoner's bare format on request: no template turns.
  auto b = run("eval-anomaly -m " + chat + " --profile " + prof + " --n 10 --sets soup --reasoning-format kvscope -q --json");
  ASSERT_EQ(b.status, 0) << b.out;
  EXPECT_EQ(nlohmann::json::parse(b.out)["format"], "kvscope");
}

// The user-content part through the CLI on the chat reasoner: kv-profile fits it on the user turns
// of "messages" lines, eval-anomaly scores each set's user turn with it.
TEST(ConfidenceCliChat, UserContentPartThroughTheCli) {
  const std::string chat = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner.gguf";
  if (!std::filesystem::exists(chat)) GTEST_SKIP() << "no chat reasoner";
  const auto dir = test::temp_dir();
  const std::string data = (dir / "user_cli.jsonl").string(), prof = (dir / "user_cli.kvprofile.bin").string(),
                    dump = (dir / "user_cli_dump.jsonl").string();
  ASSERT_EQ(run("tinygsm --jsonl --split validation --n 30 -o " + data).status, 0);
  auto p = run("kv-profile -m " + chat + " --data " + data + " --user-clusters 16 --user-topk 2 -q --json -o " + prof);
  ASSERT_EQ(p.status, 0) << p.out;
  const auto pj = nlohmann::json::parse(p.out);
  ASSERT_TRUE(pj.contains("user_model")) << p.out;
  EXPECT_EQ(pj["user_model"]["topk"], 2);
  EXPECT_GT(pj["user_model"]["tokens_fit"].get<int>(), 100);
  EXPECT_EQ(pj["user_model"]["ref_by_topk"].size(), 8u);
  auto a = run("eval-anomaly -m " + chat + " --profile " + prof + " --n 10 --sets control -q --json --dump " + dump);
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_TRUE(nlohmann::json::parse(a.out)["sets"]["control"].contains("auroc_user")) << a.out;
  std::ifstream in(dump);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    const auto d = nlohmann::json::parse(line);
    // The part read the question's tokens, fewer than the whole prompt's.
    EXPECT_GT(d["user_tokens"].get<int>(), 10) << line;
    EXPECT_LT(d["user_tokens"].get<int>(), d["tokens"].get<int>() - 8) << line;
    ++n;
  }
  EXPECT_EQ(n, 20);
  // Complete prompts hold no known user turn: the user part cannot be fitted, and says why.
  auto c = run("kv-profile -m " + chat + " --data " + data + " --prompt-field chat_prompt --user-clusters 16 -q -o " + prof, true);
  EXPECT_NE(c.status, 0);
  EXPECT_NE(c.out.find("no user text"), std::string::npos) << c.out;
  // By default (the part not asked for) such data builds the profile without it, and says so.
  auto d = run("kv-profile -m " + chat + " --data " + data + " --prompt-field chat_prompt -o " + prof + " --json", true);
  ASSERT_EQ(d.status, 0) << d.out;
  EXPECT_NE(d.out.find("no user-content part"), std::string::npos) << d.out;
  EXPECT_EQ(d.out.find("\"user_model\""), std::string::npos) << d.out;
}

}  // namespace confidence_cli_test
