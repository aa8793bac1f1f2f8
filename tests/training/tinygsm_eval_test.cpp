// eval's bookkeeping as a library call (training/tinygsm_eval.h), with answers from a scripted
// callback: accuracies overall and by steps, the cost in tokens, the confidences' calibration, auto's
// decision counts and the blind mix of fixed modes it is compared with.
#include <gtest/gtest.h>

#include <sstream>

#include "tinygsm/tinygsm.h"
#include "training/tinygsm_eval.h"

namespace tinygsm_eval_test {

using namespace kvscope;
using namespace kvscope::training;

namespace {

std::string answer_text(int v) { return "Answer: " + std::to_string(v); }

}  // namespace

TEST(TinygsmEval, TalliesModesAutoAndCalibration) {
  const auto items = tinygsm::generate(tinygsm::Split::Test, 8, tinygsm::kDefaultSeed);
  // fast: right on even problems, 2 tokens, always 0.9 sure; slow: always right, 10 tokens, probe
  // exactly right (1 on right answers); auto: right on all but the last, 6 tokens, one upgrade.
  auto ask = [&](const tinygsm::Item& it, std::optional<Mode> m) {
    EvalAnswer a;
    const bool even = it.index % 2 == 0;
    a.prompt_tokens = 30;
    if (m == Mode::Fast) {
      a.content = answer_text(even ? it.answer : it.answer + 1);
      a.tokens = 2;
      a.max_prob = 0.9;
      a.kv_probe = even ? 1.0 : 0.0;
    } else if (m == Mode::Slow) {
      a.content = answer_text(it.answer);
      a.tokens = 10;
      a.max_prob = 1.0;
    } else {
      const bool last = &it == &items.back();
      a.content = answer_text(last ? it.answer + 3 : it.answer);
      a.tokens = 6;
      a.reasoning = {{"initial_mode", "fast"}, {"final_mode", "slow"}, {"confidence", last ? 0.1 : 0.9},
                     {"estimate_ms", 2.0}, {"switches", {{{"action", "upgrade"}}}}};
    }
    a.text = "(1) ... " + a.content;
    return a;
  };
  std::ostringstream details;
  int progress_calls = 0, last_correct = -1;
  TinygsmEvalOptions o;
  o.modes = {Mode::Fast, Mode::Slow};
  o.with_auto = true;
  o.min_confidence = 0.5;
  o.details = &details;
  o.on_problem = [&](int done, int correct) {
    ++progress_calls;
    EXPECT_EQ(done, progress_calls);
    last_correct = correct;
  };
  const auto j = evaluate_tinygsm(items, ask, o);
  int even = 0;
  for (const auto& it : items) even += it.index % 2 == 0;
  const auto& fast = j["fast"];
  EXPECT_EQ(fast["n"], 8);
  EXPECT_EQ(fast["correct"], even);
  EXPECT_DOUBLE_EQ(fast["mean_tokens"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(fast["mean_prompt_tokens"].get<double>(), 30.0);
  EXPECT_NEAR(fast["ece_max_prob"].get<double>(), std::abs(0.9 - double(even) / 8), 1e-9);
  EXPECT_NEAR(fast["ece_kv_probe"].get<double>(), 0.0, 1e-9) << "a probe that is exactly right is calibrated";
  int by_steps = 0;
  for (const auto& [k, t] : fast["by_steps"].items()) by_steps += t["n"].get<int>();
  EXPECT_EQ(by_steps, 8);
  EXPECT_EQ(j["slow"]["correct"], 8);
  EXPECT_FALSE(j["slow"].contains("ece_kv_probe")) << "no answer reported the probe";
  const auto& a = j["auto"];
  EXPECT_EQ(a["correct"], 7);
  EXPECT_EQ(last_correct, 7);
  EXPECT_EQ(progress_calls, 8);
  EXPECT_EQ(a["upgrades"], 8);
  EXPECT_EQ(a["initial_modes"]["fast"], 8);
  EXPECT_EQ(a["final_modes"]["slow"], 8);
  EXPECT_EQ(a["low_confidence_fallbacks"], 1);
  EXPECT_DOUBLE_EQ(a["mean_estimate_ms"].get<double>(), 2.0);
  // auto's 6 tokens sit halfway between fast (2) and slow (10): the blind mix scores halfway too.
  EXPECT_NEAR(a["blind_mix_accuracy"].get<double>(), 0.5 * (double(even) / 8 + 1.0), 1e-9);
  EXPECT_TRUE(a.contains("speedup_vs_slow"));
  // One detail line per answer: two fixed modes and auto on each problem.
  int lines = 0;
  std::istringstream in(details.str());
  for (std::string l; std::getline(in, l);) {
    const auto d = nlohmann::json::parse(l);
    EXPECT_TRUE(d.contains("correct") && d.contains("mode") && d.contains("output"));
    EXPECT_EQ(d.contains("kvscope"), d["mode"] == "auto");
    ++lines;
  }
  EXPECT_EQ(lines, 24);
}

TEST(TinygsmEval, ReadsTheAnswerFromTheTextOrTheContent) {
  const auto items = tinygsm::generate(tinygsm::Split::Test, 3, tinygsm::kDefaultSeed);
  // The text holds the right answer, the content a wrong one.
  auto ask = [](const tinygsm::Item& it, std::optional<Mode>) {
    EvalAnswer a;
    a.text = answer_text(it.answer);
    a.content = answer_text(it.answer + 1);
    return a;
  };
  TinygsmEvalOptions o;
  o.modes = {Mode::Mixed};
  EXPECT_EQ(evaluate_tinygsm(items, ask, o)["mixed"]["correct"], 0);
  o.answer_in_text = true;
  EXPECT_EQ(evaluate_tinygsm(items, ask, o)["mixed"]["correct"], 3);
  EXPECT_FALSE(evaluate_tinygsm(items, ask, o).contains("auto"));
}

}  // namespace tinygsm_eval_test
