// The fast/slow controller: the spec's bands, the confidence fallback, early answers and upgrades.
#include <gtest/gtest.h>

#include "reasoning/controller.h"
#include "util/error.h"

namespace controller_test {

using namespace kvscope;
using namespace kvscope::reasoning;

namespace {
Estimate est(double d, double conf = 0.9) {
  Estimate e;
  e.difficulty = d;
  e.confidence = conf;
  return e;
}
}  // namespace

TEST(Controller, BandsFollowTheSpecThresholds) {
  Controller c;
  EXPECT_EQ(c.choose(est(10)).mode, Mode::Fast);
  EXPECT_EQ(c.choose(est(25)).mode, Mode::Fast);  // d <= 25 answers directly
  EXPECT_EQ(c.choose(est(25.1)).mode, Mode::Mixed);
  EXPECT_EQ(c.choose(est(75)).mode, Mode::Mixed);
  EXPECT_EQ(c.choose(est(75.1)).mode, Mode::Slow);
  EXPECT_NE(c.choose(est(10)).reason.find("<= 25"), std::string::npos);
}

TEST(Controller, LowConfidenceFallsBackToSlow) {
  Controller c;
  const auto m = c.choose(est(5, 0.59));
  EXPECT_EQ(m.mode, Mode::Slow);
  EXPECT_NE(m.reason.find("confidence"), std::string::npos);
  EXPECT_EQ(c.choose(est(5, 0.60)).mode, Mode::Fast);
}

TEST(Controller, AnswersEarlyWhenDifficultyFalls) {
  ControllerConfig cfg;
  cfg.early_answer = true;
  Controller c(cfg);
  c.start({Mode::Slow, 80, 0.9, ""});
  EXPECT_EQ(c.observe(5, est(70)), Controller::Action::Continue);  // fell < 30%
  EXPECT_EQ(c.observe(10, est(30)), Controller::Action::Continue);  // fell > 30% but not into the fast band
  EXPECT_EQ(c.observe(15, est(20)), Controller::Action::EarlyAnswer);
  EXPECT_TRUE(c.answered_early());
  EXPECT_EQ(c.observe(20, est(10)), Controller::Action::Continue);  // once per attempt
  ASSERT_EQ(c.switches().size(), 1u);
  EXPECT_EQ(c.switches()[0].action, SwitchKind::EarlyAnswer);
  EXPECT_EQ(c.trace().size(), 4u);
}

TEST(Controller, NoEarlyAnswerOnceTheAnswerHasStarted) {
  ControllerConfig cfg;
  cfg.early_answer = true;
  Controller c(cfg);
  c.start({Mode::Mixed, 60, 0.9, ""});
  // The model wrote its answer and d collapsed: forcing the cue again would only add a second answer.
  EXPECT_EQ(c.observe(20, est(5), true), Controller::Action::Continue);
  EXPECT_FALSE(c.answered_early());
  EXPECT_TRUE(c.switches().empty());
  EXPECT_EQ(c.observe(25, est(5), false), Controller::Action::EarlyAnswer);
}

TEST(Controller, RetriesUnsureAnswersInTheNextSlowerMode) {
  ControllerConfig cfg;
  cfg.retry_below = 0.9;
  Controller c(cfg);
  c.start({Mode::Fast, 10, 0.9, ""});
  EXPECT_FALSE(c.check_answer(3, 0.95));  // sure enough
  EXPECT_EQ(c.mode(), Mode::Fast);
  EXPECT_TRUE(c.check_answer(3, 0.85));
  EXPECT_EQ(c.mode(), Mode::Mixed);
  EXPECT_EQ(c.attempt(), 1);
  EXPECT_TRUE(c.check_answer(20, 0.5));
  EXPECT_EQ(c.mode(), Mode::Slow);
  EXPECT_FALSE(c.check_answer(40, 0.1));  // slow is the last resort
  ASSERT_EQ(c.switches().size(), 2u);
  EXPECT_EQ(c.switches()[0].action, SwitchKind::Retry);
  EXPECT_EQ(c.switches()[0].generated, 3);
  EXPECT_NE(c.switches()[1].reason.find("0.500 < 0.900"), std::string::npos) << c.switches()[1].reason;
  c.refuse_retry(Mode::Mixed, "test");
  EXPECT_EQ(c.mode(), Mode::Mixed);
  EXPECT_EQ(c.switches().back().action, SwitchKind::RetryRefused);

  cfg.retry_below = 0;  // off
  Controller off(cfg);
  off.start({Mode::Fast, 10, 0.9, ""});
  EXPECT_FALSE(off.check_answer(3, 0.01));
  cfg.retry_below = 1.5;
  EXPECT_THROW(Controller{cfg}, InputError);
}

TEST(Controller, FastModeNeverAnswersEarly) {
  Controller c;
  c.start({Mode::Fast, 20, 0.9, ""});
  EXPECT_EQ(c.observe(5, est(1)), Controller::Action::Continue);
}

TEST(Controller, UpgradesWhenDifficultyJumpsOutOfTheBand) {
  Controller c;
  c.start({Mode::Mixed, 40, 0.9, ""});
  EXPECT_EQ(c.observe(5, est(59)), Controller::Action::Continue);  // +47%
  EXPECT_EQ(c.observe(10, est(70)), Controller::Action::Continue);  // +75% but still mixed's band
  EXPECT_EQ(c.observe(15, est(80)), Controller::Action::Upgrade);
  EXPECT_EQ(c.mode(), Mode::Slow);
  EXPECT_EQ(c.attempt(), 1);
  EXPECT_EQ(c.observe(5, est(99)), Controller::Action::Continue);  // slow is the top
  c.refuse_upgrade(Mode::Mixed, "test");
  EXPECT_EQ(c.mode(), Mode::Mixed);
  EXPECT_EQ(c.switches().back().action, SwitchKind::UpgradeRefused);
  const auto j = c.to_json();
  EXPECT_EQ(j["initial_mode"], "mixed");
  EXPECT_EQ(j["switches"].size(), 2u);
}

TEST(Controller, SwitchesCanBeTurnedOff) {
  ControllerConfig cfg;
  cfg.early_answer = false;
  cfg.upgrade = false;
  Controller c(cfg);
  c.start({Mode::Mixed, 40, 0.9, ""});
  EXPECT_EQ(c.observe(5, est(100)), Controller::Action::Continue);
  EXPECT_EQ(c.observe(10, est(0)), Controller::Action::Continue);
}

TEST(Controller, BadConfigurationIsRefused) {
  ControllerConfig c;
  c.fast_at_most = 80;
  c.slow_above = 70;
  EXPECT_THROW(Controller{c}, InputError);
  c = {};
  c.min_confidence = 1.5;
  EXPECT_THROW(c.validate(), InputError);
  c = {};
  c.check_every = 0;
  EXPECT_THROW(c.validate(), InputError);
  c = {};
  c.cap_slow = 0;
  EXPECT_THROW(c.validate(), InputError);
  EXPECT_FALSE(parse_mode("auto"));
  EXPECT_EQ(*parse_mode("mixed"), Mode::Mixed);
}

}  // namespace controller_test
