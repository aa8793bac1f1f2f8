// The train-confidence workflow as library calls (the command in cli/cmd_confidence.cpp parses
// flags, calls these and prints): labelled prompts read from JSON lines, the model's own greedy
// answers turned into feature rows (the probe's features at 25/50/75% of an answer and at its end,
// labelled right or wrong), feature files written and read back, the prompt prior added to rows of
// an older collection, the probe fitted with its early-cut threshold, and its AUROC on other rows.
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/context.h"
#include "signals/confidence_probe.h"
#include "training/confidence_train.h"
#include "training/prompt_format.h"

namespace kvscope::training {

// One labelled problem: its prompts per mode and the number its answer must give.
struct LabelledPrompts {
  std::vector<std::pair<std::string, std::string>> prompts;  // (mode, prompt text); mode "" for a complete prompt
  int answer = 0;
};

// JSON lines with an integer "answer" and prompts (what `kvscope tinygsm --jsonl` writes; other
// fields are ignored), put to the model as it is prompted (fmt):
//   "messages": a conversation, rendered by the chat template at each mode's effort;
//   "chat_prompt": complete prompts of the levels convention (special tokens parsed);
//   "prompt": the first reasoner's prompts as they are; on a chat model a user turn rendered at
//     its mode's effort (at each mode for a plain string).
// A field's value is a string or an object of prompts per mode (the modes asked for). field
// "auto": chat models read messages, then chat_prompt; the first reasoner prompt. Throws
// InputError naming the file and line.
std::vector<LabelledPrompts> read_labelled(const std::string& path, const std::vector<std::string>& modes,
                                           const std::string& field, const PromptFormat& fmt);

// One snapshot of one answer.
struct ProbeRow {
  int group = 0;             // which problem: its rows stay on one side of the validation split
  std::string mode;          // the prompt variant ("" for a complete prompt)
  double share = 1;          // share of the answer's tokens seen
  int ok = 0;                // the answer was right
  std::vector<float> x;      // features of every layer + logits + numbers + count (the collection spec)
  std::vector<float> prior;  // the prompt prior's features (rows collected with an estimator)
  uint64_t prior_id = 0;     // PromptPrior::id() of that estimator
};

struct CollectOptions {
  ContextParams context;
  int max_tokens = 256;  // generation cap per answer
  // The estimator whose prompt prior the rows carry (kept apart in ProbeRow::prior); may be null.
  std::shared_ptr<const signals::PromptPrior> prior;
  std::function<void(int answers, int right)> on_answer;  // progress, after each answer
};

struct CollectedRows {
  std::vector<ProbeRow> rows;
  int answers = 0, right = 0;
};

// Answers every prompt greedily (prompts that fill the context are skipped) and returns four rows
// per answer: at 25, 50 and 75% of its tokens and at its end.
CollectedRows collect_probe_rows(const Model& model, const PromptFormat& fmt, const std::vector<LabelledPrompts>& data,
                                 const CollectOptions& o);

// Feature files: JSON lines {g, mode, share, ok, x, fingerprint[, prior, prior_id]}.
void write_probe_row(std::ostream& out, const ProbeRow& r, uint64_t fingerprint);
// Rows of `modes` (rows of complete prompts always); groups shifted by group_offset. Throws
// InputError for another model's file, or when `prior` is set and the rows lack its prior.
std::vector<ProbeRow> read_probe_rows(const std::string& file, uint64_t fingerprint, const std::vector<std::string>& modes,
                                      const signals::PromptPrior* prior, int group_offset = 0);

// The prompt prior of every (problem, mode) prompt, from a prefill alone: the prior depends on the
// prompt only. on_problem(i) after problem i.
std::map<std::pair<int, std::string>, std::vector<float>> prompt_priors(
    const Model& model, const PromptFormat& fmt, const std::vector<LabelledPrompts>& data,
    const std::shared_ptr<const signals::PromptPrior>& prior, const ContextParams& cp,
    const std::function<void(int problem)>& on_problem = nullptr);
// Copies the feature file `in_file` to `out` with each row's prompt prior added; returns the rows.
size_t add_prior_to_rows(const std::string& in_file, std::ostream& out,
                         const std::map<std::pair<int, std::string>, std::vector<float>>& priors, uint64_t fingerprint,
                         uint64_t prior_id);

// The features of `spec` out of a row collected with every layer, the logits, the numbers and
// the count (and the prompt prior, kept apart so rows of older builds keep their layout).
std::vector<float> probe_inputs(const std::vector<float>& all, const signals::ProbeSpec& spec, int head_dim,
                                const std::vector<float>& prior = {});

struct ProbeFitOptions {
  int hidden = 32;          // MLP hidden width
  uint64_t seed = 1;
  bool final_only = false;  // learn from finished answers only (no 25/50/75% rows)
  double cut_fpr = 0.02;    // the early-cut threshold: this share of right answers' partial scores below it
  ProbeTrainOptions train;
};

struct ProbeFit {
  signals::ProbeMLP mlp;
  ProbeTrainReport report;
  double cut_below = 0;
  size_t n_rows = 0;  // rows trained on
};

// Trains the probe on `rows` read through `spec`. Throws InputError when the answers are all right
// or all wrong.
ProbeFit fit_probe(const std::vector<ProbeRow>& rows, const signals::ProbeSpec& spec, int head_dim, const ProbeFitOptions& o);

// AUROC of a trained probe on rows of other problems, per mode: the probe at each share, and
// MaxProb (the answer's mean max-probability, the first logit feature) at the end.
struct ProbeModeTest {
  std::string mode;
  size_t n = 0;                           // finished answers
  double max_prob = 0;                    // MaxProb's AUROC
  double max_prob_ece = 0, probe_ece = 0; // calibration error of MaxProb and of the final probe as P(correct)
  std::map<int, double> probe_by_share;   // share in percent (25, 50, 75, 100) -> the probe's AUROC
};
std::vector<ProbeModeTest> test_probe(const signals::ProbeMLP& mlp, const signals::ProbeSpec& spec, int head_dim,
                                      const std::vector<ProbeRow>& rows, const std::vector<std::string>& modes);

}  // namespace kvscope::training
