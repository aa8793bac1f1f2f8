// kvscope eval's measurement as a library call: every problem answered at each fixed mode and,
// optionally, by the adaptive run; tallied overall and by steps, with the answer confidences'
// calibration and auto's decision counts. The answers come from a callback (the CLI's runs the
// server's pipeline in-process), so the bookkeeping is tested without a model.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/mode.h"
#include "core/stop_reason.h"
#include "tinygsm/tinygsm.h"

namespace kvscope::training {

// Right answers and tokens spent over n answers.
struct Tally {
  int n = 0, correct = 0;
  long tokens = 0;
  double accuracy() const { return n ? double(correct) / n : 0.0; }
  double mean_tokens() const { return n ? double(tokens) / n : 0.0; }
  nlohmann::json json() const { return {{"n", n}, {"correct", correct}, {"accuracy", accuracy()}, {"mean_tokens", mean_tokens()}}; }
};

struct EvalAnswer {
  std::string text;     // the final attempt's whole text (reasoning, delimiters, a forced cut, answer)
  std::string content;  // the answer part
  long tokens = 0;      // generated over every attempt, EOS counted
  int prompt_tokens = 0;
  StopReason stop = StopReason::None;
  // kvscope.reasoning: for the adaptive run its initial_mode, final_mode (or mode), switches,
  // confidence and estimate_ms are read.
  nlohmann::json reasoning = nlohmann::json::object();
  double max_prob = -1, kv_probe = -1;  // the answer's confidences, as kvscope.signals gives them (-1: none)
};

// ask(item, mode): the answer at a fixed mode, or by the adaptive run for nullopt.
using AskFn = std::function<EvalAnswer(const tinygsm::Item&, std::optional<Mode>)>;

struct TinygsmEvalOptions {
  std::vector<Mode> modes;        // fixed modes, each run on every problem
  bool with_auto = false;         // and the adaptive run after them
  bool answer_in_text = false;    // read the answer from the whole text (the embedded model's cue), else the content
  double min_confidence = 0;      // the controller's: an initial estimate less sure than this is a fallback
  std::ostream* details = nullptr;  // one JSON line per answer
  // After each problem: problems done, and the right answers of auto (when it runs) or the last mode.
  std::function<void(int done, int correct)> on_problem;
};

// The modes run interleaved, problem by problem, and each mode's wall_s is the sum of its own runs,
// so a machine that changes speed mid-run weighs on every mode alike. Returns, per mode name
// (fast, mixed, slow, auto): n, correct, accuracy, mean_tokens, mean_prompt_tokens (fixed modes),
// wall_s, gen_tok_s, by_steps, the confidences' means and expected calibration errors
// (mean_max_prob/ece_max_prob, mean_kv_probe/ece_kv_probe), and speedup_vs_slow when slow ran; auto
// adds initial_modes, final_modes, early_answers, upgrades, retries, early_cuts,
// low_confidence_fallbacks, mean_estimate_ms and blind_mix_accuracy (the best mix of two fixed modes,
// chosen without looking at the question, that spends auto's mean tokens).
nlohmann::json evaluate_tinygsm(const std::vector<tinygsm::Item>& items, const AskFn& ask, const TinygsmEvalOptions& o);

}  // namespace kvscope::training
