// Training labels of the difficulty estimator: the cheapest mode that answers right, and what
// problems no mode solves are taught (slow by default, fast with `train-difficulty --unsolved fast`).
#include <gtest/gtest.h>

#include "training/difficulty_data.h"

using namespace kvscope;
using namespace kvscope::reasoning;

namespace {

ProblemRecord record(bool fast, bool mixed, bool slow) {
  ProblemRecord r;
  r.correct = {fast, mixed, slow};
  return r;
}

constexpr int F = static_cast<int>(Mode::Fast), M = static_cast<int>(Mode::Mixed), S = static_cast<int>(Mode::Slow);

}  // namespace

TEST(DifficultyLabels, CheapestRightModeWins) {
  EXPECT_EQ(record(true, true, true).label(), F);
  EXPECT_EQ(record(false, true, true).label(), M);
  EXPECT_EQ(record(false, false, true).label(), S);
  EXPECT_EQ(record(true, false, false).label(Mode::Fast), F);
  EXPECT_EQ(record(false, true, false).label(Mode::Fast), M);  // the unsolved rule only for unsolved
}

TEST(DifficultyLabels, UnsolvedProblemsFollowThePolicy) {
  const auto r = record(false, false, false);
  EXPECT_FALSE(r.solved());
  EXPECT_EQ(r.label(), S);
  EXPECT_EQ(r.label(Mode::Fast), F);
  ProblemRecord::Checkpoint c;
  c.mode = Mode::Mixed;
  EXPECT_EQ(r.checkpoint_label(c), M);  // keep going in this run's mode
  EXPECT_EQ(r.checkpoint_label(c, Mode::Fast), F);  // stop spending tokens
}

TEST(DifficultyLabels, CheckpointsOfSolvedProblems) {
  ProblemRecord::Checkpoint c;
  c.mode = Mode::Mixed;
  c.forced_correct = true;
  EXPECT_EQ(record(false, false, false).checkpoint_label(c), F);  // forcing the answer here is right
  c.forced_correct = false;
  EXPECT_EQ(record(false, true, true).checkpoint_label(c, Mode::Fast), M);
  EXPECT_EQ(record(false, false, true).checkpoint_label(c, Mode::Fast), S);  // only slow gets it: upgrade
  c.mode = Mode::Slow;
  EXPECT_EQ(record(true, false, false).checkpoint_label(c, Mode::Fast), S);  // solved elsewhere: this run's mode
}
