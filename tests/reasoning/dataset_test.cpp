// eval --data's JSON-lines datasets: messages or question, numeric / exact / regex answers, and a
// clear error naming the file and line for each kind of bad line.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "reasoning/dataset.h"
#include "test_util.h"
#include "util/error.h"

namespace dataset_test {

using namespace kvscope;
using namespace kvscope::reasoning;

namespace {
std::string write(const std::string& name, const std::string& text) {
  const std::string p = (test::temp_dir() / name).string();
  std::ofstream(p, std::ios::binary) << text;
  return p;
}
std::string error_of(const std::string& text) {
  try {
    load_dataset(write("bad.jsonl", text));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(ReasoningDataset, ReadsQuestionsAndMessages) {
  const auto items = load_dataset(write("ok.jsonl",
                                        "{\"question\": \"2+2?\", \"answer\": 4}\n\n"
                                        "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, "
                                        "{\"role\": \"user\", \"content\": \"Capital of France?\"}], \"answer\": \"Paris\"}\n"
                                        "{\"question\": \"Say hi\", \"answer_regex\": \"^[Hh]i\\\\b\"}\n"
                                        "{\"question\": \"Half of 5?\", \"answer\": \"2.5\", \"steps\": 1}\n"));
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[0].messages.size(), 1u);
  EXPECT_EQ(items[0].messages[0].role, "user");
  EXPECT_EQ(items[1].messages.size(), 2u);
  EXPECT_EQ(items[1].line, 3);
  EXPECT_TRUE(check_answer(items[0], "2 + 2 = 4"));
  EXPECT_TRUE(check_answer(items[0], "It is 4.0"));
  EXPECT_FALSE(check_answer(items[0], "4 or 5"));  // the last number counts
  EXPECT_FALSE(check_answer(items[0], "four"));
  EXPECT_TRUE(check_answer(items[1], " Paris\n"));
  EXPECT_FALSE(check_answer(items[1], "paris"));
  EXPECT_TRUE(check_answer(items[2], "hi there"));
  EXPECT_FALSE(check_answer(items[2], "oh hi"));
  EXPECT_TRUE(check_answer(items[3], "It is 2.5."));
  EXPECT_TRUE(check_answer(load_dataset(write("big.jsonl", "{\"question\": \"q\", \"answer\": 1234}\n"))[0], "1,234"));
  EXPECT_TRUE(check_answer(load_dataset(write("neg.jsonl", "{\"question\": \"q\", \"answer\": -3}\n"))[0], "x = -3"));
}

TEST(ReasoningDataset, BadLinesNameFileAndLine) {
  EXPECT_NE(error_of("{\"question\": \"q\", \"answer\": 1}\n{\"question\": \"no answer\"}\n").find("bad.jsonl:2: no 'answer'"),
            std::string::npos);
  EXPECT_NE(error_of("{\"answer\": 1}\n").find(":1: no 'messages' or 'question'"), std::string::npos);
  EXPECT_NE(error_of("{not json\n").find(":1: not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("{\"question\": \"q\", \"answer_regex\": \"(\"}\n").find("bad 'answer_regex'"), std::string::npos);
  EXPECT_NE(error_of("{\"messages\": [{\"role\": \"user\"}], \"answer\": 1}\n").find("'role' and 'content'"), std::string::npos);
  EXPECT_NE(error_of("\n\n").find("no items"), std::string::npos);
  EXPECT_THROW(load_dataset("/nonexistent/data.jsonl"), InputError);
}

// The built-in task is one such dataset: tinygsm --jsonl fed to eval --data gives eval --task's
// accuracy and tokens on the embedded model (levels: none is low); a line without an answer is an error naming it.
TEST(ReasoningDataset, TinygsmJsonlThroughEvalData) {
  const char* bin = std::getenv("KVSCOPE_BIN");
  if (!bin) GTEST_SKIP() << "KVSCOPE_BIN not set";
  const std::string data = (test::temp_dir() / "tg30.jsonl").string();
  int st = 0;
  test::run_capture(std::string(bin) + " tinygsm --split test --n 30 --jsonl -o " + data, &st);
  ASSERT_EQ(st, 0);
  const std::string a = test::run_capture(std::string(bin) + " eval --data " + data + " --reasoning-effort none,high -t 2 -q --json", &st);
  ASSERT_EQ(st, 0) << a;
  const std::string b = test::run_capture(std::string(bin) + " eval --task tinygsm --split test --n 30 --mode all -t 2 -q --json", &st);
  ASSERT_EQ(st, 0) << b;
  const auto ja = nlohmann::json::parse(a), jb = nlohmann::json::parse(b);
  EXPECT_EQ(ja["format"], "levels");
  EXPECT_EQ(ja["efforts"]["none"]["correct"], jb["modes"]["fast"]["correct"]);
  EXPECT_EQ(ja["efforts"]["high"]["correct"], jb["modes"]["slow"]["correct"]);
  EXPECT_DOUBLE_EQ(ja["efforts"]["high"]["mean_tokens"].get<double>(), jb["modes"]["slow"]["mean_tokens"].get<double>());
  EXPECT_GT(ja["efforts"]["high"]["accuracy"].get<double>(), ja["efforts"]["none"]["accuracy"].get<double>());

  const std::string bad = write("noanswer.jsonl", "{\"question\": \"2+2?\", \"answer\": 4}\n{\"question\": \"3+3?\"}\n");
  const std::string e = test::run_capture(std::string(bin) + " eval --data " + bad + " 2>&1", &st);
  EXPECT_NE(st, 0);
  EXPECT_NE(e.find("error: " + bad + ":2: no 'answer'"), std::string::npos) << e;
  const std::string t = test::run_capture(std::string(bin) + " train-difficulty --data " + bad + " -o /dev/null 2>&1", &st);
  EXPECT_NE(st, 0);
  EXPECT_NE(t.find(":2: no 'answer'"), std::string::npos) << t;
  const std::string u = test::run_capture(std::string(bin) + " eval --data " + data + " --reasoning-effort extreme 2>&1", &st);
  EXPECT_NE(st, 0);
  EXPECT_NE(u.find("unknown effort 'extreme'"), std::string::npos) << u;
}

// eval --file runs questions as typed through the tinygsm loop (every mode, by steps): the same
// prompts and greedy answers as eval --data on the same lines, plus each mode's answer confidence
// (mean top-token probability) and its calibration error; a bad line is refused with file and line.
TEST(ReasoningDataset, EvalFileMatchesEvalData) {
  const char* bin = std::getenv("KVSCOPE_BIN");
  if (!bin) GTEST_SKIP() << "KVSCOPE_BIN not set";
  const std::string data = write("natural.jsonl",
                                 "{\"question\": \"What is 17+26?\", \"answer\": 43, \"steps\": 1}\n"
                                 "{\"question\": \"Tom has 34 apples. He buys 12 more and then gives away 5.\", \"answer\": 41, \"steps\": 2}\n"
                                 "{\"question\": \"Question: (1) Mia has 29 candies. (2) Mia loses 5 candies. How many candies does Mia have now?\", "
                                 "\"answer\": 24, \"steps\": 1}\n");
  int st = 0;
  const std::string a = test::run_capture(std::string(bin) + " eval --file " + data + " --mode all -t 2 -q --json", &st);
  ASSERT_EQ(st, 0) << a;
  const std::string b = test::run_capture(std::string(bin) + " eval --data " + data + " --reasoning-effort low,medium,high -t 2 -q --json", &st);
  ASSERT_EQ(st, 0) << b;
  const auto ja = nlohmann::json::parse(a), jb = nlohmann::json::parse(b);
  EXPECT_EQ(ja["n"], 3);
  for (const auto& [mode, effort] : {std::pair<std::string, std::string>{"fast", "low"}, {"mixed", "medium"}, {"slow", "high"}}) {
    const auto& m = ja["modes"][mode];
    EXPECT_EQ(m["correct"], jb["efforts"][effort]["correct"]) << mode;
    EXPECT_DOUBLE_EQ(m["mean_tokens"].get<double>(), jb["efforts"][effort]["mean_tokens"].get<double>()) << mode;
    EXPECT_EQ(m["by_steps"]["1"]["n"], 2);
    EXPECT_EQ(m["by_steps"]["2"]["n"], 1);
    const double conf = m["mean_max_prob"].get<double>(), ece = m["ece_max_prob"].get<double>();
    EXPECT_GT(conf, 0.0);
    EXPECT_LE(conf, 1.0);
    EXPECT_GE(ece, 0.0);
    EXPECT_LE(ece, 1.0);
  }
  const std::string bad = write("natural_bad.jsonl", "{\"question\": \"2+2?\", \"answer\": 4}\n{\"question\": \"3+3?\", \"answer\": \"6\"}\n");
  const std::string e = test::run_capture(std::string(bin) + " eval --file " + bad + " 2>&1", &st);
  EXPECT_NE(st, 0);
  EXPECT_NE(e.find("error: " + bad + ":2: \"answer\" must be an integer"), std::string::npos) << e;
}

// --probe is the probe whose P(correct) eval reports (kv_probe and its ECE), not only --early-cut's:
// the shipped probe named explicitly gives the default's figures, and a missing file is an error
// naming it instead of a report from the other probe.
TEST(ReasoningDataset, EvalFileReportsTheProbeItIsGiven) {
  const char* bin = std::getenv("KVSCOPE_BIN");
  if (!bin) GTEST_SKIP() << "KVSCOPE_BIN not set";
  const std::string data = write("natural_probe.jsonl",
                                 "{\"question\": \"What is 17+26?\", \"answer\": 43, \"steps\": 1}\n"
                                 "{\"question\": \"Grace has 23 shells and finds 14 more. How many shells does she have?\", \"answer\": 37, \"steps\": 1}\n");
  const std::string shipped = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner.confidence.bin";
  int st = 0;
  const std::string a = test::run_capture(std::string(bin) + " eval --file " + data + " --mode slow -t 2 -q --json", &st);
  ASSERT_EQ(st, 0) << a;
  const std::string b = test::run_capture(std::string(bin) + " eval --file " + data + " --mode slow -t 2 -q --json --probe " + shipped, &st);
  ASSERT_EQ(st, 0) << b;
  const auto ja = nlohmann::json::parse(a), jb = nlohmann::json::parse(b);
  ASSERT_TRUE(ja.contains("mean_kv_probe")) << a;
  EXPECT_DOUBLE_EQ(ja["mean_kv_probe"].get<double>(), jb["mean_kv_probe"].get<double>());
  const std::string missing = test::temp_dir().string() + "/no_such.confidence.bin";
  const std::string e = test::run_capture(std::string(bin) + " eval --file " + data + " --mode slow -t 2 -q --probe " + missing + " 2>&1", &st);
  EXPECT_NE(st, 0) << e;
  EXPECT_NE(e.find(missing), std::string::npos) << e;
}

}  // namespace dataset_test
