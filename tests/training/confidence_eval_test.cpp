// eval-confidence's steps as library calls (training/confidence_eval.h): a score's quality in both
// orientations, the ablation's selections, and a run on the embedded reasoner whose answers are the
// ones train-confidence labels (the same greedy answers to the same prompts) with every score kept
// per problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "model/fingerprint.h"
#include "test_util.h"
#include "training/confidence_eval.h"
#include "training/confidence_rows.h"

namespace confidence_eval_test {

using namespace kvscope;

namespace {
const std::string kModel = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.gguf";
const std::string kProbe = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.confidence.bin";
}  // namespace

TEST(ConfidenceEval, ScoreQualityInBothOrientations) {
  const std::vector<double> s = {0.9, 0.8, 0.7, 0.2, 0.1};
  const std::vector<bool> ok = {true, true, true, false, false};
  const auto up = training::score_quality(s, ok, 1);
  EXPECT_DOUBLE_EQ(up.auroc, 1.0);
  EXPECT_DOUBLE_EQ(up.auroc_best, 1.0);
  EXPECT_FALSE(up.flipped);
  EXPECT_DOUBLE_EQ(up.fpr95, 0.0);
  EXPECT_DOUBLE_EQ(up.aupr, 1.0);
  // Read the wrong way round, the score ranks every wrong answer first: flipped, and its best
  // orientation still separates perfectly.
  const auto down = training::score_quality(s, ok, -1);
  EXPECT_DOUBLE_EQ(down.auroc, 0.0);
  EXPECT_DOUBLE_EQ(down.auroc_best, 1.0);
  EXPECT_TRUE(down.flipped);
  EXPECT_DOUBLE_EQ(down.fpr95, 1.0);
}

TEST(ConfidenceEval, AblationCoversBothKStagesAndEachLayer) {
  const auto sel = training::ablation_selections(4, false);
  ASSERT_EQ(sel.size(), 8u);
  EXPECT_EQ(sel[0].name, "all");
  EXPECT_EQ(sel[0].layers, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_FALSE(sel[0].pre_rope);
  EXPECT_EQ(sel[2].name, "all_pre_rope");
  EXPECT_TRUE(sel[2].pre_rope);
  EXPECT_EQ(sel[3].name, "mid_pre_rope");
  for (int l = 0; l < 4; ++l) {
    EXPECT_EQ(sel[4 + l].name, "layer_" + std::to_string(l));
    EXPECT_EQ(sel[4 + l].layers, std::vector<int>{l});
  }
}

TEST(ConfidenceEval, ScoresEveryProblemAndLabelsItLikeTrainConfidence) {
  if (!std::filesystem::exists(kModel) || !std::filesystem::exists(kProbe)) GTEST_SKIP() << "no embedded reasoner with its probe";
  auto model = Model::load(kModel);
  const training::PromptFormat fmt(*model);
  const auto items = tinygsm::generate(tinygsm::Split::Validation, 4);
  const auto probe = signals::load_probe(kProbe, model_fingerprint(*model));
  training::ConfidenceEvalOptions o;
  o.max_tokens = 96;
  o.signals.probe = &probe;
  o.signals.probe_trace = true;
  o.signals.extra = training::ablation_selections(model->hparams().n_layer, o.signals.pre_rope);
  int seen = 0;
  o.on_item = [&](const tinygsm::Item& it, bool, const signals::ScoredResult& r) {
    EXPECT_EQ(it.index, items[static_cast<size_t>(seen++)].index);
    EXPECT_FALSE(r.gen.tokens.empty());
  };
  const auto e = training::eval_confidence(*model, fmt, items, Mode::Slow, o);
  EXPECT_EQ(seen, 4);
  ASSERT_EQ(e.ok.size(), 4u);
  EXPECT_EQ(e.correct, std::count(e.ok.begin(), e.ok.end(), true));
  EXPECT_GT(e.tokens, 0);
  EXPECT_GT(e.kv_bytes, 0u);
  EXPECT_GT(e.probe_bytes, 0u);
  ASSERT_FALSE(e.names.empty());
  EXPECT_NE(std::find(e.names.begin(), e.names.end(), "kv_probe"), e.names.end());
  for (const auto& n : e.names) EXPECT_EQ(e.values.at(n).size(), 4u) << n;
  EXPECT_EQ(e.early.size(), 3u);
  EXPECT_EQ(e.ablation_c.size(), o.signals.extra.size());
  for (const auto& [name, v] : e.ablation_c) EXPECT_EQ(v.size(), 4u) << name;
  for (double p : e.values.at("kv_probe")) {
    EXPECT_GE(p, 0.0);
    EXPECT_LE(p, 1.0);
  }

  // train-confidence answers the same prompts the same greedy way: its labels are these.
  const std::string data = (test::temp_dir() / "conf_eval_same.jsonl").string();
  {
    std::ofstream f(data);
    for (const auto& it : items) f << tinygsm::to_json(it) << '\n';
  }
  training::CollectOptions co;
  co.max_tokens = 96;
  const auto c = training::collect_probe_rows(*model, fmt, training::read_labelled(data, {"slow"}, "auto", fmt), co);
  ASSERT_EQ(c.answers, 4);
  EXPECT_EQ(c.right, e.correct);
  for (const auto& r : c.rows) {
    if (r.share == 1) {
      EXPECT_EQ(static_cast<bool>(r.ok), e.ok[static_cast<size_t>(r.group)]) << "problem " << r.group;
    }
  }
}

TEST(ConfidenceEval, ProbeCostIsMeasuredPerTokenAndThePriorApart) {
  if (!std::filesystem::exists(kModel) || !std::filesystem::exists(kProbe)) GTEST_SKIP() << "no embedded reasoner with its probe";
  auto model = Model::load(kModel);
  const auto probe = signals::load_probe(kProbe, model_fingerprint(*model));
  const auto c = training::measure_probe_cost(*model, probe);
  EXPECT_GT(c.us_per_token, 0.0);
  EXPECT_LT(c.us_per_token, 1e5);
  if (probe.spec.prior) {
    EXPECT_GT(c.prior_us_per_request, 0.0);
    EXPECT_EQ(c.prior_prompt_tokens, 80);
    EXPECT_GT(c.prior_peak_bytes, 0u);
  } else {
    EXPECT_EQ(c.prior_us_per_request, 0.0);
    EXPECT_EQ(c.prior_prompt_tokens, 0);
  }
}

}  // namespace confidence_eval_test
