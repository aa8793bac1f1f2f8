// Adaptive generation on one Context: estimate the question's difficulty from its KV, pick a
// mode, generate with re-estimates every few tokens, answer early or restart in a slower mode as
// the controller says. The question's KV stays cached across a restart (Context::truncate), so
// an upgrade computes only the new mode line and the new answer.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/context.h"
#include "reasoning/controller.h"
#include "reasoning/difficulty_features.h"
#include "reasoning/difficulty_mlp.h"
#include "reasoning/format.h"
#include "sampling/sampler.h"

namespace kvscope::reasoning {

// How a model is told the mode and how an answer is forced; the defaults fit tinygsm models
// ("Question: ...\nMode: slow\n" ... "Answer: 42").
struct ReasoningFormat {
  std::string mode_line = "Mode: {mode}\n";  // appended to the question; {mode} is fast|mixed|slow
  std::string answer_cue = "Answer:";         // appended when reasoning is cut short
  int answer_max_tokens = 8;                  // tokens allowed after the cue
  // The first token after the cue must start a number. A run cut mid-sentence is off the model's
  // training distribution, and it may go on with the sentence instead of answering.
  bool numeric_answer = true;
  // question + mode line (a newline is put between them when the question lacks one).
  std::string prompt(const std::string& question, Mode m) const;
};

// An observer the driver consults while an attempt generates: the learned confidence probe's
// early cut (reasoning/early_cut.h). begin() before each attempt's prompt is fed, token() after
// each sampled token (its logits still valid), and cut() at every check point of a fast or mixed
// attempt: true predicts a wrong answer, so the attempt is dropped and the question restarted in
// the next slower mode (switch "early_cut").
class AttemptMonitor {
 public:
  virtual ~AttemptMonitor() = default;
  virtual KVTap* tap() = 0;  // observes the attempt's K/V next to the driver's own tap
  virtual void begin(int prompt_len) = 0;
  virtual void token(const float* logits, int n_vocab, int32_t id) = 0;
  // p_correct, threshold: the score behind the decision and its bound (for the trace).
  virtual bool cut(Mode mode, int generated, double& p_correct, double& threshold) = 0;
};

struct AdaptiveOptions {
  ControllerConfig controller;
  ReasoningFormat format;
  std::optional<Mode> forced;           // a fixed mode (reasoning: fast|mixed|slow): no estimate
  std::optional<ModeChoice> cached;     // a decision from the decision cache: no initial estimate
  int max_tokens = 256;                 // generated tokens over every attempt
  bool runtime_checks = true;           // re-estimate while generating (false: initial decision only)
  bool want_features = false;           // pool the question's features even without an estimator
  // Training probes: at every check point of a forced-mode run, the pooled features and the text
  // the model gives when the answer is forced right there. The probe leaves no trace in the run.
  std::function<void(int generated, const std::vector<float>& features, const std::string& forced_text)> on_checkpoint;
  // Reasoning formats other than the embedded model's (reasoning/format.h). The controller's modes
  // are efforts of the format (think formats: fast = no thinking, mixed = medium, slow = high);
  // `render` gives a mode's prompt (the chat template with that effort's think block), and
  // `question_tokens` the part every attempt shares (the tap's window; its KV is kept across
  // attempts). An early answer, or a think block that reaches `budgets`' medium budget, is cut by
  // the format's cut text ("</think>") and the model answers in the rest of max_tokens.
  FormatKind kind = FormatKind::Kvscope;
  std::function<std::vector<int32_t>(Mode)> render;
  std::vector<int32_t> question_tokens;
  EffortBudgets budgets;
  AttemptMonitor* monitor = nullptr;    // early cut (not owned)
};

struct AdaptiveResult {
  std::string text;             // the final attempt (forced cue and answer included)
  std::vector<int32_t> tokens;  // its tokens
  int generated_total = 0;      // tokens generated over every attempt (EOS counted): the cost
  StopReason stop_reason = StopReason::None;  // Eos | Length | Context | EarlyAnswer
  ModeChoice initial;
  Mode final_mode = Mode::Slow;
  std::vector<float> initial_features;  // empty when no tap ran
  nlohmann::json report;        // controller trace and switches, timings
  double estimate_ms = 0, prompt_ms = 0, gen_ms = 0;
  double answer_confidence = 0;  // the last fast or mixed attempt's mean max token probability (0: none)
  std::string reasoning, content;  // the final attempt's text split by the format (content: the answer)
  int reasoning_tokens = 0;        // tokens generated inside the reasoning, over every attempt
};

// question: the prompt before the mode line (BOS is added). mlp may be null for forced-mode runs;
// spec says which features the tap pools (the difficulty file's). Throws InputError when auto
// mode has no estimator, LimitError when the prompt does not fit the context.
AdaptiveResult generate_adaptive(Context& ctx, const std::string& question, const SamplingParams& sp,
                                 const FeatureSpec& spec, const DifficultyMLP* mlp, const AdaptiveOptions& o);

}  // namespace kvscope::reasoning
