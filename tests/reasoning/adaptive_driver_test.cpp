// The adaptive driver's state machine without a model: check points every 5 tokens while the
// reasoning is open (none at the attempt's cap), an early answer as a cut, an upgrade and a retry as
// restarts at a higher effort, refusals undone, and a dropped attempt's tokens counted as reasoning.
#include <gtest/gtest.h>

#include <vector>

#include "reasoning/adaptive_driver.h"

namespace adaptive_driver_test {

using namespace kvscope;
using namespace kvscope::reasoning;
using Do = AdaptiveDriver::Do;

namespace {
Estimate est(double d, double conf = 0.9) {
  Estimate e;
  e.difficulty = d;
  e.confidence = conf;
  return e;
}

AdaptiveConfig levels(int max_tokens = 100) {
  AdaptiveConfig c;
  c.kind = FormatKind::Levels;
  c.max_tokens = max_tokens;
  c.controller.early_answer = true;
  return c;
}

// Feeds n reasoning tokens ("x ") and returns the check points the driver asked for.
std::vector<int> feed(AdaptiveDriver& d, int n) {
  std::vector<int> due;
  std::vector<float> logits = {0.f, 1.f, 2.f};
  for (int i = 0; i < n; ++i) {
    d.observe_logits(logits.data(), 3);
    d.on_token(2, "x ");
    if (d.check_due()) {
      due.push_back(d.generated());
      d.on_estimate(est(50));  // d stays: no action
    }
  }
  return due;
}
}  // namespace

TEST(AdaptiveDriver, ChecksEveryFiveTokensWhileReasoningButNotAtTheCap) {
  AdaptiveDriver d(levels(20), {Mode::Mixed, 50, 0.9, "test"}, true);
  d.begin_attempt();
  EXPECT_EQ(d.attempt_cap(), 20);
  EXPECT_EQ(feed(d, 20), (std::vector<int>{5, 10, 15}));  // 20 is the cap: the attempt ends there
  EXPECT_EQ(d.controller().trace().size(), 3u);
  // A requested mode decides nothing.
  AdaptiveDriver fixed(levels(20), {Mode::Mixed, 0, 1, "requested"}, false);
  fixed.begin_attempt();
  EXPECT_TRUE(feed(fixed, 20).empty());
  EXPECT_EQ(fixed.on_end(StopReason::Eos).what, Do::Done);
}

TEST(AdaptiveDriver, EarlyAnswerIsACutAndEndsTheChecks) {
  AdaptiveDriver d(levels(), {Mode::Slow, 80, 0.9, "test"}, true);
  d.begin_attempt();
  for (int i = 0; i < 5; ++i) d.on_token(7, "step ");
  ASSERT_TRUE(d.check_due());
  EXPECT_EQ(d.on_estimate(est(10)).what, Do::Cut);  // d fell by > 30% into the fast band
  d.on_cut("\n</think>\n\n");
  EXPECT_TRUE(d.answering());
  EXPECT_TRUE(d.answered_early());
  for (int i = 0; i < 5; ++i) d.on_token(8, "42");
  EXPECT_FALSE(d.check_due());
  d.finish();
  EXPECT_EQ(d.tokens().reasoning_tokens(), 5);
  EXPECT_NE(d.tokens().content().find("4242424242"), std::string::npos) << d.tokens().content();
  EXPECT_EQ(d.tokens().reasoning().find("42"), std::string::npos) << d.tokens().reasoning();
  const auto rep = d.report();
  ASSERT_EQ(rep["switches"].size(), 1u);
  EXPECT_EQ(rep["switches"][0]["action"], "early_answer");
  EXPECT_EQ(rep["switches"][0]["generated"], 5);
  EXPECT_EQ(rep["format"], "levels");
}

TEST(AdaptiveDriver, UpgradeRestartsAtTheHigherEffortAndCountsTheDroppedAttempt) {
  AdaptiveDriver d(levels(), {Mode::Fast, 10, 0.9, "test"}, true);
  d.begin_attempt();
  EXPECT_EQ(d.plan().level_name(), "low");
  // The model closed its thinking and began to answer: tokens after the close are content.
  d.on_token(1, "a");
  d.on_token(2, "</think>");
  d.on_token(3, "b");
  d.on_token(4, "c");
  d.on_token(5, "d");
  ASSERT_TRUE(d.check_due());
  const auto a = d.on_estimate(est(60));  // rose by > 50% and left the fast band
  ASSERT_EQ(a.what, Do::Restart);
  EXPECT_EQ(a.mode, Mode::Mixed);
  d.begin_attempt();
  EXPECT_EQ(d.attempts(), 2);
  EXPECT_EQ(d.plan().level_name(), "medium");
  EXPECT_EQ(d.tokens().reasoning_tokens(), 5);  // the dropped attempt's answer tokens too
  EXPECT_EQ(d.generated(), 0);
  EXPECT_EQ(d.attempt_cap(), 95);
}

TEST(AdaptiveDriver, LowConfidenceAnswersAreRetriedAndRefusalsUndone) {
  AdaptiveConfig c = levels();
  c.controller.retry_below = 0.99;
  AdaptiveDriver d(c, {Mode::Fast, 10, 0.9, "test"}, true);
  d.begin_attempt();
  const std::vector<float> flat = {0.f, 0.f, 0.f, 0.f};  // max prob 0.25
  d.observe_logits(flat.data(), 4);
  d.on_token(1, "</think>42");
  const auto a = d.on_end(StopReason::Eos);
  ASSERT_EQ(a.what, Do::Restart);
  EXPECT_EQ(a.mode, Mode::Mixed);
  EXPECT_NEAR(d.answer_confidence(), 0.25, 1e-9);
  d.refuse("the stream already sent text");
  EXPECT_EQ(d.mode(), Mode::Fast);
  EXPECT_EQ(d.refused_retries(), 1);
  const auto rep = d.report();
  ASSERT_EQ(rep["switches"].size(), 2u);
  EXPECT_EQ(rep["switches"][1]["action"], "retry_refused");
  EXPECT_EQ(rep["final_mode"], "fast");
  // No retry when the context filled or the tokens are spent.
  AdaptiveDriver full(c, {Mode::Fast, 10, 0.9, "test"}, true);
  full.begin_attempt();
  full.observe_logits(flat.data(), 4);
  full.on_token(1, "x");
  EXPECT_EQ(full.on_end(StopReason::Context).what, Do::Done);
}

TEST(AdaptiveDriver, ThinkBudgetIsACutAndNoCheckFallsOnIt) {
  AdaptiveConfig c;
  c.kind = FormatKind::Qwen3;
  c.budgets = {4, 10};
  c.max_tokens = 50;
  AdaptiveDriver d(c, {Mode::Mixed, 50, 0.9, "test"}, true);  // mixed = medium: a budget of 10
  d.begin_attempt();
  EXPECT_EQ(d.plan().budget, 10);
  Do last = Do::Continue;
  std::vector<int> due;
  for (int i = 0; i < 10; ++i) {
    last = d.on_token(1, "t").what;
    if (d.check_due()) {
      due.push_back(d.generated());
      d.on_estimate(est(50));
    }
  }
  EXPECT_EQ(last, Do::Cut);
  EXPECT_EQ(due, std::vector<int>{5});  // 10 is the budget's cut
  d.on_cut("\n</think>\n\n");
  EXPECT_TRUE(d.budget_cut());
  EXPECT_FALSE(d.answered_early());
  EXPECT_EQ(d.answer_tokens(), 40);
}

}  // namespace adaptive_driver_test
