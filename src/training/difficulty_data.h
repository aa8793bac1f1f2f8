// Labelled data for the difficulty estimator on tinygsm: each problem run in every mode, its
// question's pooled KV features, and check points along the mixed and slow runs (the features
// there plus whether forcing the answer at that point gives the right number).
#pragma once
#include <array>
#include <functional>
#include <vector>

#include "engine/context.h"
#include "reasoning/adaptive_generate.h"
#include "reasoning/dataset.h"
#include "tinygsm/tinygsm.h"

namespace kvscope::reasoning {

struct ProblemRecord {
  int steps = 0;
  std::array<bool, kClasses> correct{};  // per mode: fast, mixed, slow
  std::array<int, kClasses> tokens{};    // generated tokens per mode (EOS counted)
  std::vector<float> features;           // the question window (the collector's spec)
  std::vector<std::vector<float>> variants;  // the same question under each variant spec
  struct Checkpoint {
    Mode mode = Mode::Slow;
    int generated = 0;
    std::vector<float> features;
    bool forced_correct = false;
  };
  std::vector<Checkpoint> checkpoints;

  bool solved() const { return correct[0] || correct[1] || correct[2]; }
  // The cheapest mode that answers right. Problems no mode solves get `unsolved` (slow is the safe
  // choice; fast spends no tokens on questions the model gets wrong anyway).
  int label(Mode unsolved = Mode::Slow) const;
  // A check point's target: fast when the forced answer is right there, else the mode to go on in
  // (this run's if it ends right, slow if only slow gets it; when nothing does, this run's mode, or
  // fast when `unsolved` is fast: stop spending tokens).
  int checkpoint_label(const Checkpoint& c, Mode unsolved = Mode::Slow) const;
};

struct CollectOptions {
  FeatureSpec spec;                   // features of the question window and of the check points
  std::vector<FeatureSpec> variants;  // more question-window features (analysis: fractions, RoPE)
  bool checkpoints = true;
  int check_every = 5;
  int max_tokens = 256;
  std::function<void(int done, int fast_fail)> progress;
};

std::vector<ProblemRecord> collect_tinygsm(Context& ctx, const std::vector<tinygsm::Item>& items,
                                           const CollectOptions& o);

// Any dataset (eval/train-difficulty --data) on any reasoning format: each item at the format's
// three efforts (the controller's modes), right when the response's answer part passes
// check_answer; the check points probe the answer forced there. render(item, plan): the item's
// prompt with the plan's think block or mode line; with null, the prompt the estimator pools.
using ItemRender = std::function<std::vector<int32_t>(const DataItem&, const ReasoningPlan*)>;
std::vector<ProblemRecord> collect_data(Context& ctx, const std::vector<DataItem>& items, FormatKind kind,
                                        const ItemRender& render, const EffortBudgets& budgets, const CollectOptions& o);

// The question part of a tinygsm prompt (everything before the mode line).
std::string tinygsm_question(const tinygsm::Item& item);

}  // namespace kvscope::reasoning
