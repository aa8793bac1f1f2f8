// The fast/slow controller: picks a reasoning mode from the initial difficulty
// estimate and watches the re-estimates taken while the answer is generated.
//
//   d > slow_above: slow;  fast_at_most < d <= slow_above: mixed;  d <= fast_at_most: fast;
//   confidence below min_confidence: slow, whatever d says (the spec's fault tolerance).
// Every check_every generated tokens the caller re-estimates d from the prompt's and the
// response's KV and calls observe():
//   - early answer: d fell by `drop` (30%) from the attempt's reference d and is now in the fast
//     band -> stop reasoning and force the answer (a thinking budget's cut), once per attempt;
//   - upgrade: d rose by `jump` (50%) and left the current mode's band -> restart in the next
//     slower mode (the caller reuses the prompt's cached KV, so only new tokens are computed).
// Requiring the band change as well keeps a tiny reference d (say 3 -> 5) from triggering switches.
// After an attempt in fast or mixed mode has answered, check_answer() reads the answer's confidence
// (mean max token probability, the MaxProb signal): below retry_below the question is retried in
// the next slower mode, its KV kept. kvscope's own rule (not in the original design), its default chosen on the
// validation split (docs/reasoning.md), 0 turns it off.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mode.h"
#include "reasoning/difficulty_mlp.h"

namespace kvscope::reasoning {

using kvscope::Mode;
using kvscope::mode_name;
using kvscope::parse_mode;

struct ControllerConfig {
  double fast_at_most = 25, slow_above = 75;
  double min_confidence = 0.60;
  int check_every = 5;
  double drop = 0.30, jump = 0.50;
  int cap_fast = 16, cap_mixed = 96, cap_slow = 192;  // generated tokens per attempt in each mode
  // The early answer is opt-in: on both embedded models cutting the reasoning when d fell cost
  // accuracy (2026-12-05, test n=1000: 83.6% with it, 89.6% without, for 4 fewer tokens).
  bool early_answer = false, upgrade = true;
  double retry_below = 0.98;  // answer confidence under which fast/mixed answers are retried slower
  int cap(Mode m) const { return m == Mode::Fast ? cap_fast : m == Mode::Mixed ? cap_mixed : cap_slow; }
  // Throws InputError naming the bad value (thresholds out of order or outside [0, 100], ...).
  void validate() const;
};

// What a switch did; a string only in reports (switch_name).
enum class SwitchKind { EarlyAnswer, Upgrade, Retry, EarlyCut, UpgradeRefused, RetryRefused };
// "early_answer" | "upgrade" | "retry" | "early_cut" | "upgrade_refused" | "retry_refused"
std::string_view switch_name(SwitchKind k);

struct ModeChoice {
  Mode mode = Mode::Slow;
  double difficulty = 0, confidence = 0;
  std::string reason;
};

class Controller {
 public:
  enum class Action { Continue, EarlyAnswer, Upgrade };
  struct Point {
    int attempt = 0, generated = 0;  // generated tokens in that attempt when estimated
    double difficulty = 0, confidence = 0;
  };
  struct Switch {
    int attempt = 0, generated = 0;
    SwitchKind action = SwitchKind::Upgrade;
    Mode from = Mode::Slow, to = Mode::Slow;
    std::string reason;
  };

  explicit Controller(ControllerConfig c = {});
  const ControllerConfig& config() const { return c_; }

  // The band rule plus the confidence fallback, without state.
  ModeChoice choose(const Estimate& e) const;
  // Starts the request in a mode: chosen from an estimate, forced by the caller (reasoning: slow),
  // or replayed from the decision cache. Resets the trace.
  void start(const ModeChoice& c);
  // A re-estimate after `generated` tokens of the current attempt; say what to do. After Upgrade the
  // controller is already in the new mode and a new attempt has begun. answer_started: the response
  // already holds the answer cue, so there is no reasoning left to cut and no early answer is given
  // (forcing the cue again would only append a second answer).
  Action observe(int generated, const Estimate& e, bool answer_started = false);

  // An attempt ended with an answer of this confidence (mean max token probability); true: the
  // controller moved to the next slower mode (switch "retry") and the caller should start it.
  bool check_answer(int generated, double answer_confidence);
  // The confidence probe predicts the running fast or mixed attempt wrong (p_correct below
  // `below`): move to the next slower mode (switch "early_cut"); false in slow mode.
  bool early_cut(int generated, double p_correct, double below);

  // Undo an upgrade the caller could not carry out (a stream that already sent text): back to m,
  // noted in the switches as "upgrade_refused".
  void refuse_upgrade(Mode m, const std::string& why);
  // The same for a retry (noted as "retry_refused").
  void refuse_retry(Mode m, const std::string& why);

  Mode mode() const { return mode_; }
  const ModeChoice& initial() const { return initial_; }
  int attempt() const { return attempt_; }
  bool answered_early() const { return early_done_; }
  const std::vector<Point>& trace() const { return trace_; }
  const std::vector<Switch>& switches() const { return switches_; }
  // {"initial_mode", "initial_difficulty", "confidence", "reason", "final_mode", "trace", "switches"}.
  nlohmann::json to_json() const;

 private:
  ControllerConfig c_;
  ModeChoice initial_;
  Mode mode_ = Mode::Slow;
  double ref_ = 0;  // the d the current attempt is judged against
  int attempt_ = 0;
  bool early_done_ = false;
  std::vector<Point> trace_;
  std::vector<Switch> switches_;
};

}  // namespace kvscope::reasoning
