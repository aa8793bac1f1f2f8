// Adaptive generation on the embedded reasoner: fixed modes give exactly the plain generation of
// the tinygsm prompt, auto decides from the shipped estimator, and both switches (early answer,
// upgrade with the question's KV kept) behave as a user would see them.
#include <gtest/gtest.h>

#include <filesystem>

#include "context_generate.h"
#include "engine/context.h"
#include "model/fingerprint.h"
#include "reasoning/early_cut.h"
#include "signals/confidence_probe.h"
#include "training/difficulty_data.h"
#include "tinygsm/tinygsm.h"
#include "util/error.h"

namespace adaptive_generate_test {

using namespace kvscope;
using namespace kvscope::reasoning;

namespace {

const std::string kModel = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.gguf";
const std::string kDifficulty = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.difficulty.bin";

struct Fixture {
  std::unique_ptr<Model> model = Model::load(kModel);
  DifficultyFile diff = load_difficulty(kDifficulty, model_fingerprint(*model));
};
Fixture& fx() {
  static Fixture f;
  return f;
}
SamplingParams greedy() {
  SamplingParams g;
  g.temperature = 0;
  return g;
}
std::string plain(Context& ctx, const tinygsm::Item& it, tinygsm::Mode m, int n = 256) {
  return generate(ctx, fx().model->tokenizer().encode(tinygsm::format_prompt(it, m), true, false), greedy(), n).text;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

class Adaptive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kModel) || !std::filesystem::exists(kDifficulty))
      GTEST_SKIP() << "no embedded reasoner or estimator";
  }
};

TEST_F(Adaptive, ForcedModesEqualPlainGeneration) {
  Context ctx(*fx().model, {0, 2, 512});
  const auto items = tinygsm::generate(tinygsm::Split::Test, 6, tinygsm::kDefaultSeed);
  for (const auto& it : items)
    for (Mode m : {Mode::Fast, Mode::Mixed, Mode::Slow}) {
      AdaptiveOptions o;
      o.forced = m;
      const auto r = generate_adaptive(ctx, tinygsm_question(it), greedy(), {}, nullptr, o);
      EXPECT_EQ(r.text, plain(ctx, it, static_cast<tinygsm::Mode>(m))) << it.question;
      EXPECT_EQ(r.initial.reason, "requested");
      EXPECT_TRUE(r.report["switches"].empty());
    }
}

TEST_F(Adaptive, AutoDecidesFromTheQuestionsKV) {
  Context ctx(*fx().model, {0, 2, 512});
  const auto items = tinygsm::generate(tinygsm::Split::Test, 30, tinygsm::kDefaultSeed);
  Controller c;
  int slow = 0, not_slow = 0;
  for (const auto& it : items) {
    AdaptiveOptions o;
    o.runtime_checks = false;
    const auto r = generate_adaptive(ctx, tinygsm_question(it), greedy(), fx().diff.features, &fx().diff.mlp, o);
    const auto e = fx().diff.mlp.estimate(r.initial_features);
    EXPECT_EQ(r.initial.mode, c.choose(e).mode);
    EXPECT_NEAR(r.initial.difficulty, e.difficulty, 1e-9);
    EXPECT_GE(r.initial.difficulty, 0);
    EXPECT_LE(r.initial.difficulty, 100);
    // The answer of the mode it ended in (a low-confidence answer is retried slower).
    EXPECT_EQ(r.text, plain(ctx, it, static_cast<tinygsm::Mode>(r.final_mode)));
    if (r.final_mode != r.initial.mode) {
      EXPECT_EQ(r.report["switches"][0]["action"], "retry");
    }
    (r.initial.mode == Mode::Slow ? slow : not_slow)++;
    if (it.steps >= 5) {
      EXPECT_NE(r.initial.mode, Mode::Fast) << "a 5-6 step problem judged easy";
    }
  }
  EXPECT_GT(slow, 0);
  EXPECT_GT(not_slow, 0);  // the estimate varies with the question
}

TEST_F(Adaptive, UpgradeRestartsInTheSlowerModeAndMatchesAFreshSlowRun) {
  Context ctx(*fx().model, {0, 2, 512});
  const auto it = tinygsm::generate(tinygsm::Split::Test, 3, tinygsm::kDefaultSeed)[2];
  AdaptiveOptions o;
  o.cached = ModeChoice{Mode::Mixed, 1.0, 0.9, "test"};  // start mixed with a tiny d: any real d is a jump
  o.controller.fast_at_most = 0.5;
  o.controller.slow_above = 2;
  o.controller.early_answer = false;
  const auto r = generate_adaptive(ctx, tinygsm_question(it), greedy(), fx().diff.features, &fx().diff.mlp, o);
  ASSERT_FALSE(r.report["switches"].empty());
  EXPECT_EQ(r.report["switches"][0]["action"], "upgrade");
  EXPECT_EQ(r.final_mode, Mode::Slow);
  EXPECT_EQ(r.text, plain(ctx, it, tinygsm::Mode::Slow));  // the kept question KV is the same as a fresh one
  EXPECT_GT(r.generated_total, static_cast<int>(r.tokens.size()));  // the abandoned attempt counts as cost
}

TEST_F(Adaptive, EarlyAnswerForcesTheAnswerCue) {
  Context ctx(*fx().model, {0, 2, 512});
  const auto items = tinygsm::generate(tinygsm::Split::Test, 40, tinygsm::kDefaultSeed);
  int early = 0;
  for (const auto& it : items) {
    if (it.steps < 3) continue;
    AdaptiveOptions o;
    o.cached = ModeChoice{Mode::Slow, 100, 0.9, "test"};
    o.controller.fast_at_most = 99;
    o.controller.slow_above = 99.5;
    o.controller.drop = 0.01;  // any d below 99 cuts the reasoning at the first check
    o.controller.early_answer = true;
    const auto r = generate_adaptive(ctx, tinygsm_question(it), greedy(), fx().diff.features, &fx().diff.mlp, o);
    if (r.report["switches"].empty()) continue;
    ++early;
    EXPECT_EQ(r.report["switches"][0]["action"], "early_answer");
    const int at = r.report["switches"][0]["generated"].get<int>();
    EXPECT_EQ(at % 5, 0);  // decided at a re-estimate
    EXPECT_EQ(count(r.text, "Answer:"), 1u) << r.text;
    EXPECT_TRUE(tinygsm::parse_answer(r.text).has_value()) << r.text;
    EXPECT_LE(r.generated_total, at + 8 + 1);  // after the cue: the answer and EOS only
    EXPECT_EQ(r.stop_reason, StopReason::EarlyAnswer);
    EXPECT_EQ(r.text.substr(0, 10), plain(ctx, it, tinygsm::Mode::Slow).substr(0, 10));
  }
  EXPECT_GT(early, 0);
}

// With the spec's defaults the estimate often collapses right after the model writes its answer; an
// early answer there used to append a second "Answer:" and a made-up continuation.
TEST_F(Adaptive, AnAnswerAlreadyGivenIsNeverForcedAgain) {
  Context ctx(*fx().model, {0, 2, 512});
  const auto items = tinygsm::generate(tinygsm::Split::Test, 60, tinygsm::kDefaultSeed);
  int checked = 0;
  for (const auto& it : items) {
    AdaptiveOptions o;
    o.cached = ModeChoice{Mode::Mixed, 50, 0.9, "test"};
    o.controller.early_answer = true;
    const auto r = generate_adaptive(ctx, tinygsm_question(it), greedy(), fx().diff.features, &fx().diff.mlp, o);
    if (r.final_mode != Mode::Mixed) continue;
    ++checked;
    EXPECT_LE(count(r.text, "Answer:"), 1u) << r.text;
    if (r.stop_reason != StopReason::EarlyAnswer) {
      EXPECT_EQ(r.text, plain(ctx, it, tinygsm::Mode::Mixed));
    } else {  // the forced answer is a number and ends there
      const std::string tail = r.text.substr(r.text.rfind("Answer:") + 7);
      EXPECT_EQ(tail.find_first_not_of(" -0123456789"), std::string::npos) << r.text;
    }
  }
  EXPECT_GT(checked, 30);
}

// A fast answer the model is unsure of is retried in mixed, then slow; the kept question KV gives
// exactly a fresh run's text, and every attempt's tokens count as cost.
TEST_F(Adaptive, LowConfidenceAnswersAreRetriedInTheSlowerMode) {
  Context ctx(*fx().model, {0, 2, 512});
  const auto items = tinygsm::generate(tinygsm::Split::Test, 8, tinygsm::kDefaultSeed);
  for (const auto& it : items) {
    AdaptiveOptions o;
    o.cached = ModeChoice{Mode::Fast, 10, 0.9, "test"};
    o.runtime_checks = false;
    o.controller.retry_below = 1.0;  // no answer is that sure: always retry
    const auto r = generate_adaptive(ctx, tinygsm_question(it), greedy(), fx().diff.features, &fx().diff.mlp, o);
    EXPECT_EQ(r.final_mode, Mode::Slow);
    ASSERT_EQ(r.report["switches"].size(), 2u);
    EXPECT_EQ(r.report["switches"][0]["action"], "retry");
    EXPECT_EQ(r.report["switches"][0]["to"], "mixed");
    EXPECT_EQ(r.report["switches"][1]["to"], "slow");
    EXPECT_EQ(r.text, plain(ctx, it, tinygsm::Mode::Slow));
    const auto fast = plain(ctx, it, tinygsm::Mode::Fast);
    EXPECT_GT(r.generated_total, static_cast<int>(r.tokens.size()) + 2);
    EXPECT_GT(r.answer_confidence, 0);
    EXPECT_LT(r.answer_confidence, 1);

    o.controller.retry_below = 0;  // off: the fast answer stands
    const auto r0 = generate_adaptive(ctx, tinygsm_question(it), greedy(), fx().diff.features, &fx().diff.mlp, o);
    EXPECT_EQ(r0.final_mode, Mode::Fast);
    EXPECT_EQ(r0.text, fast);
    EXPECT_TRUE(r0.report["switches"].empty());
  }
}

TEST_F(Adaptive, BadRequestsAreRefused) {
  Context ctx(*fx().model, {64, 2, 512});
  AdaptiveOptions o;
  EXPECT_THROW(generate_adaptive(ctx, "Question: x", greedy(), {}, nullptr, o), InputError);  // auto, no estimator
  std::string longq = "Question:";
  for (int i = 0; i < 100; ++i) longq += " (1) Tom has 3 apples.";
  EXPECT_THROW(generate_adaptive(ctx, longq, greedy(), fx().diff.features, &fx().diff.mlp, o), LimitError);
  o.forced = Mode::Fast;
  o.max_tokens = 0;
  EXPECT_THROW(generate_adaptive(ctx, "Question: x", greedy(), {}, nullptr, o), InputError);
}

TEST_F(Adaptive, ReasoningFormatPutsTheModeOnItsOwnLine) {
  ReasoningFormat f;
  EXPECT_EQ(f.prompt("Question: a?", Mode::Slow), "Question: a?\nMode: slow\n");
  EXPECT_EQ(f.prompt("Question: a?\n", Mode::Fast), "Question: a?\nMode: fast\n");
  const auto it = tinygsm::generate(tinygsm::Split::Test, 1, tinygsm::kDefaultSeed)[0];
  EXPECT_EQ(f.prompt(tinygsm_question(it), Mode::Mixed), tinygsm::format_prompt(it, tinygsm::Mode::Mixed));
}

// The confidence probe's early cut: a mixed attempt it predicts wrong (threshold 1: every score is
// below) is dropped at its first check point and the question restarted in slow mode, giving the
// same text as a fresh slow run; a threshold it never undercuts changes nothing.
TEST_F(Adaptive, EarlyCutRestartsAnAnswerTheProbePredictsWrong) {
  const std::string probe_path = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.confidence.bin";
  if (!std::filesystem::exists(probe_path)) GTEST_SKIP() << "no shipped confidence probe";
  const auto probe = signals::load_probe(probe_path, model_fingerprint(*fx().model));
  Context ctx(*fx().model, {0, 2, 512});
  const auto it = tinygsm::generate(tinygsm::Split::Test, 3, tinygsm::kDefaultSeed)[1];
  AdaptiveOptions o;
  o.cached = ModeChoice{Mode::Mixed, 50, 0.9, "test"};
  o.controller.early_answer = false;
  o.controller.upgrade = false;
  o.controller.retry_below = 0;
  ProbeEarlyCut always(*fx().model, probe, 1.0, 5);
  o.monitor = &always;
  const auto r = generate_adaptive(ctx, tinygsm_question(it), greedy(), fx().diff.features, &fx().diff.mlp, o);
  ASSERT_FALSE(r.report["switches"].empty());
  EXPECT_EQ(r.report["switches"][0]["action"], "early_cut");
  EXPECT_EQ(r.report["switches"][0]["generated"], 5);
  EXPECT_EQ(r.final_mode, Mode::Slow);
  EXPECT_EQ(r.text, plain(ctx, it, tinygsm::Mode::Slow));
  EXPECT_EQ(r.generated_total, static_cast<int>(r.tokens.size()) + 5 + 1);  // the cut attempt's tokens count (EOS too)

  ProbeEarlyCut never(*fx().model, probe, 1e-9, 5);
  o.monitor = &never;
  const auto n = generate_adaptive(ctx, tinygsm_question(it), greedy(), fx().diff.features, &fx().diff.mlp, o);
  EXPECT_TRUE(n.report["switches"].empty());
  EXPECT_EQ(n.final_mode, Mode::Mixed);
  EXPECT_EQ(n.text, plain(ctx, it, tinygsm::Mode::Mixed));
}

}  // namespace adaptive_generate_test
