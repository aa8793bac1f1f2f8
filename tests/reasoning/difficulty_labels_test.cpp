// Training labels of the difficulty estimator: the cheapest mode that answers right, and what
// problems no mode solves are taught (slow by default, fast with `train-difficulty --unsolved fast`).
#include <gtest/gtest.h>

#include "training/difficulty_data.h"
#include "training/difficulty_train.h"
#include "util/error.h"

namespace difficulty_labels_test {

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

// train-difficulty's fit as a library call: the rows and their labels as the command reports them,
// and an estimator that learns questions whose features say which mode they need.
TEST(DifficultyFit, LabelsRowsAndLearnsTheCheapestRightMode) {
  std::vector<ProblemRecord> recs;
  for (int i = 0; i < 240; ++i) {
    const int need = i % 3;  // fast, mixed or slow is the cheapest right mode
    ProblemRecord r = record(need == F, need <= M, true);
    r.features = {float(need == F), float(need == M), float(need == S), float((i * 7) % 5) * 0.01f};
    if (i % 4 == 0) {  // a check point where forcing the answer is right
      ProblemRecord::Checkpoint c;
      c.mode = Mode::Slow;
      c.forced_correct = true;
      c.features = r.features;
      r.checkpoints.push_back(c);
    }
    recs.push_back(std::move(r));
  }
  recs.push_back(record(false, false, false));  // unsolved
  recs.back().features = {0, 0, 1, 0};
  TrainOptions to;
  to.max_epochs = 200;
  to.seed = 3;
  const auto fit = fit_difficulty(recs, 8, Mode::Slow, to);
  EXPECT_EQ(fit.info["rows"], 241 + 60);
  EXPECT_EQ(fit.info["labels_question"]["fast"], 80);
  EXPECT_EQ(fit.info["labels_question"]["mixed"], 80);
  EXPECT_EQ(fit.info["labels_question"]["slow"], 81);
  EXPECT_EQ(fit.info["labels_checkpoints"]["fast"], 60);
  EXPECT_EQ(fit.info["unsolved"], 1);
  EXPECT_EQ(fit.info["params"], fit.mlp.n_params());
  EXPECT_GT(fit.info["val_accuracy"].get<double>(), 0.7);
  EXPECT_THROW(fit_difficulty({}, 8, Mode::Slow, to), InputError);
}

}  // namespace difficulty_labels_test
