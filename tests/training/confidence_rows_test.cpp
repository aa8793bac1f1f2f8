// train-confidence's steps as library calls (training/confidence_rows.h), on the embedded
// reasoner where a model answers and on synthetic rows where the probe is fitted: labelled prompts
// read per mode, four rows per answer labelled by the answer's correctness, feature files that
// round-trip and refuse another model's rows, the probe's inputs sliced as its spec says, and a
// fitted probe that separates right from wrong answers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "model/fingerprint.h"
#include "reasoning/difficulty_mlp.h"
#include "reasoning/prompt_prior.h"
#include "test_util.h"
#include "tinygsm/tinygsm.h"
#include "training/confidence_rows.h"
#include "util/error.h"
#include "util/rng.h"

namespace confidence_rows_test {

using namespace kvscope;

namespace {

const std::string kModel = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.gguf";
const std::string kEstimator = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.difficulty.bin";

// n tinygsm validation problems as `kvscope tinygsm --jsonl` writes them.
std::string write_problems(const std::string& name, int n) {
  const std::string path = (test::temp_dir() / name).string();
  std::ofstream f(path);
  for (const auto& item : tinygsm::generate(tinygsm::Split::Validation, n)) f << tinygsm::to_json(item) << '\n';
  return path;
}

// Layout of a collected row for n_layer layers of head_dim: per layer [pooled 2hd][4 stats]
// [prompt 2hd][last 2hd], then 8 logit statistics, 14 number statistics and the count.
size_t row_size(int n_layer, int head_dim) {
  return static_cast<size_t>(n_layer) * (6 * head_dim + 4) + signals::kProbeLogitFeatures + signals::kProbeNumberFeatures + 1;
}

// Synthetic rows (2 layers, head_dim 2) whose layer-0 pooled feature tells right from wrong through
// noise; every problem has rows at the four shares.
std::vector<training::ProbeRow> synthetic_rows(int problems, uint64_t seed) {
  util::SplitMix64 rng{seed};
  std::vector<training::ProbeRow> rows;
  for (int g = 0; g < problems; ++g) {
    const int ok = g % 3 != 0;
    for (double s : {0.25, 0.5, 0.75, 1.0}) {
      training::ProbeRow r;
      r.group = g, r.mode = "slow", r.share = s, r.ok = ok;
      r.x.resize(row_size(2, 2));
      for (auto& v : r.x) v = static_cast<float>(rng.uniform() - 0.5);
      r.x[0] = static_cast<float>((ok ? 1.0 : -1.0) + 0.6 * (rng.uniform() - 0.5));
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

}  // namespace

class ConfidenceRows : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kModel)) GTEST_SKIP() << "no embedded reasoner";
    model_ = Model::load(kModel);
  }
  std::unique_ptr<Model> model_;
};

TEST_F(ConfidenceRows, ReadsOnePromptPerModeAndNamesTheBadLine) {
  const training::PromptFormat fmt(*model_);
  const std::string data = write_problems("conf_rows_read.jsonl", 3);
  const auto l = training::read_labelled(data, {"fast", "slow"}, "auto", fmt);
  ASSERT_EQ(l.size(), 3u);
  const auto items = tinygsm::generate(tinygsm::Split::Validation, 3);
  for (size_t i = 0; i < l.size(); ++i) {
    EXPECT_EQ(l[i].answer, items[i].answer);
    ASSERT_EQ(l[i].prompts.size(), 2u);
    EXPECT_EQ(l[i].prompts[0].first, "fast");
    EXPECT_EQ(l[i].prompts[1].first, "slow");
    // The first reasoner is prompted with tinygsm's own prompt of each mode.
    EXPECT_EQ(l[i].prompts[1].second, tinygsm::format_prompt(items[i], Mode::Slow));
  }
  const std::string bad = (test::temp_dir() / "conf_rows_bad.jsonl").string();
  std::ofstream(bad) << tinygsm::to_json(items[0]) << "\n{\"prompt\": \"x\"}\n";
  try {
    training::read_labelled(bad, {"slow"}, "auto", fmt);
    FAIL() << "a line without an answer was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(bad + ":2: needs an integer \"answer\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(training::read_labelled(data, {"quick"}, "auto", fmt), InputError);
}

TEST_F(ConfidenceRows, CollectsFourRowsPerAnswerLabelledByItsCorrectness) {
  const training::PromptFormat fmt(*model_);
  const auto data = training::read_labelled(write_problems("conf_rows_collect.jsonl", 4), {"fast", "slow"}, "auto", fmt);
  training::CollectOptions co;
  co.max_tokens = 96;
  if (std::filesystem::exists(kEstimator))
    co.prior = reasoning::prompt_prior(reasoning::load_difficulty(kEstimator, model_fingerprint(*model_)),
                                       model_->hparams().n_layer, kEstimator);
  int calls = 0;
  co.on_answer = [&](int answers, int) { EXPECT_EQ(answers, ++calls); };
  const auto c = training::collect_probe_rows(*model_, fmt, data, co);
  EXPECT_EQ(c.answers, 8);
  EXPECT_EQ(calls, 8);
  EXPECT_GE(c.right, 0);
  EXPECT_LE(c.right, c.answers);
  ASSERT_EQ(c.rows.size(), 32u);  // every answer writes tokens: 25, 50, 75 and 100%
  const HParams& hp = model_->hparams();
  int right = 0;
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const auto& r = c.rows[i];
    EXPECT_EQ(r.group, static_cast<int>(i / 8));
    EXPECT_EQ(r.mode, i % 8 < 4 ? "fast" : "slow");
    EXPECT_DOUBLE_EQ(r.share, (i % 4 + 1) * 0.25);
    EXPECT_EQ(r.ok, c.rows[i - i % 4].ok);  // one label per answer
    EXPECT_EQ(r.x.size(), row_size(hp.n_layer, hp.head_dim));
    EXPECT_EQ(r.prior.size(), co.prior ? size_t{signals::kProbePriorFeatures} : 0u);
    if (r.share == 1) right += r.ok;
    // The count feature (log(1 + tokens seen)) never falls along the answer.
    if (i % 4) {
      EXPECT_GE(r.x.back(), c.rows[i - 1].x.back());
    }
  }
  EXPECT_EQ(right, c.right);
}

TEST_F(ConfidenceRows, FeatureFilesRoundTripAndRefuseAnotherModel) {
  const uint64_t fp = model_fingerprint(*model_);
  auto rows = synthetic_rows(5, 3);
  rows[4].mode = "fast";
  rows[5].mode = "";  // a complete prompt's row: kept whatever the modes
  const std::string file = (test::temp_dir() / "conf_rows_features.jsonl").string();
  {
    std::ofstream f(file);
    for (const auto& r : rows) training::write_probe_row(f, r, fp);
  }
  const auto back = training::read_probe_rows(file, fp, {"slow"}, nullptr, 100);
  ASSERT_EQ(back.size(), rows.size() - 1);  // the fast row is not asked for
  for (size_t i = 0, k = 0; i < rows.size(); ++i) {
    if (i == 4) continue;
    EXPECT_EQ(back[k].group, rows[i].group + 100);
    EXPECT_EQ(back[k].mode, rows[i].mode);
    EXPECT_EQ(back[k].share, rows[i].share);
    EXPECT_EQ(back[k].ok, rows[i].ok);
    EXPECT_EQ(back[k].x, rows[i].x);
    ++k;
  }
  try {
    training::read_probe_rows(file, fp + 1, {"slow"}, nullptr);
    FAIL() << "another model's rows were read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("was collected with another model"), std::string::npos) << e.what();
  }
  EXPECT_EQ(training::read_probe_rows(file, fp, {"mixed"}, nullptr).size(), 1u);  // the complete prompt's row
  rows[5].mode = "slow";
  {
    std::ofstream f(file);
    for (const auto& r : rows) training::write_probe_row(f, r, fp);
  }
  try {
    training::read_probe_rows(file, fp, {"mixed"}, nullptr);
    FAIL() << "a file without the modes asked for gave rows";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("holds no rows of the modes asked for"), std::string::npos) << e.what();
  }
}

TEST(ConfidenceRowsFit, InputsFollowTheSpec) {
  std::vector<float> all(row_size(2, 2));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<float>(i);
  signals::ProbeSpec spec;
  spec.layers = {1};
  spec.prompt = true;
  const auto x = training::probe_inputs(all, spec, 2);
  // Layer 1's pooled part and stats (8), its prompt part (4), the 8 logit statistics, the count.
  ASSERT_EQ(x.size(), 8u + 4 + 8 + 1);
  EXPECT_EQ(x[0], 16.0f);   // layer 1 starts after one layer of 16
  EXPECT_EQ(x[8], 24.0f);   // its prompt part
  EXPECT_EQ(x[12], 32.0f);  // the logits follow both layers
  EXPECT_EQ(x.back(), static_cast<float>(all.size() - 1));
  spec.layers = {2};
  EXPECT_THROW(training::probe_inputs(all, spec, 2), InputError);  // not collected
  spec.layers = {0};
  spec.prior = std::make_shared<signals::PromptPrior>();
  EXPECT_THROW(training::probe_inputs(all, spec, 2), InputError);  // the rows hold no prior
}

TEST(ConfidenceRowsFit, TheProbeSeparatesRightFromWrongAndSetsItsCut) {
  const auto rows = synthetic_rows(90, 1);
  signals::ProbeSpec spec;
  spec.layers = {0};
  training::ProbeFitOptions o;
  o.hidden = 8;
  o.train.max_epochs = 60;
  const auto fit = training::fit_probe(rows, spec, 2, o);
  EXPECT_EQ(fit.n_rows, rows.size());
  EXPECT_GT(fit.report.val_auroc, 0.9);
  // The early cut: at most cut_fpr (2%) of the right answers' partial (25-75%) scores fall below it,
  // while most wrong answers' do.
  int right = 0, right_below = 0, wrong = 0, wrong_below = 0;
  for (const auto& r : rows) {
    if (r.share == 1) continue;
    const bool below = fit.mlp.score(training::probe_inputs(r.x, spec, 2)) < fit.cut_below;
    (r.ok ? right : wrong) += 1;
    (r.ok ? right_below : wrong_below) += below;
  }
  EXPECT_GT(fit.cut_below, 0.0);
  EXPECT_LE(right_below, static_cast<int>(0.02 * right));
  EXPECT_GT(wrong_below, wrong / 2);
  const auto test = training::test_probe(fit.mlp, spec, 2, synthetic_rows(30, 2), {"slow", "fast"});
  ASSERT_EQ(test.size(), 1u);  // no fast rows
  EXPECT_EQ(test[0].n, 30u);
  EXPECT_GT(test[0].probe_by_share.at(100), 0.9);
  EXPECT_EQ(test[0].probe_by_share.size(), 4u);

  o.final_only = true;
  EXPECT_EQ(training::fit_probe(rows, spec, 2, o).n_rows, 90u);
  auto all_right = rows;
  for (auto& r : all_right) r.ok = 1;
  EXPECT_THROW(training::fit_probe(all_right, spec, 2, o), InputError);
}

}  // namespace confidence_rows_test
