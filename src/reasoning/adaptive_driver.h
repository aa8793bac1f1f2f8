// The one adaptive driver: the state machine of an adaptive reasoning request, run by both
// adapters — the Context loop (run, eval, train-difficulty: adaptive_generate.cpp) and the server's
// engine requests (server/reasoning_run.cpp). It owns every decision; an adapter only feeds it
// events and carries out the actions it returns:
//
//   event                                  action
//   begin_attempt()                        the adapter renders plan() and feeds its prompt
//   observe_logits(l, n), on_token(id, s)  Cut: the thinking budget is spent, reasoning open
//   check_due() -> on_estimate(d)          Cut: early answer;  Restart(mode): upgrade
//   on_probe(p, below)                     Restart(mode): the confidence probe's early cut
//   on_cut(text)                           (the adapter wrote the cut: "</think>", "Answer:")
//   on_end(stop, left)                     Restart(mode): answer-confidence retry;  Done
//   refuse(why)                            the adapter could not restart (a stream already sent
//                                          text, the prompt does not fit): noted, mode kept
//
// Re-estimates fall every check_every sampled tokens of an attempt, after the K/V of the last
// token is computed and before the next is drawn, while the reasoning is open and tokens are left
// (not at a budget or cap, where the attempt ends anyway). Both adapters take them at that point,
// so the same greedy question gives the same text and the same trace on either.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "core/stop_reason.h"
#include "reasoning/controller.h"
#include "reasoning/driver.h"
#include "reasoning/format.h"
#include "signals/coe_scores.h"

namespace kvscope::reasoning {

struct AdaptiveConfig {
  ControllerConfig controller;
  FormatKind kind = FormatKind::Kvscope;
  EffortBudgets budgets;
  int max_tokens = 256;          // sampled tokens over every attempt
  int answer_max_tokens = 8;     // kvscope: tokens after a forced "Answer:"; think formats: the rest
  bool checks = true;            // re-estimate while generating (auto with an estimator)
  bool retries = true;           // the answer-confidence retry (auto; controller.retry_below > 0 too)
  std::string answer_cue = "Answer:";  // kvscope: the text that shows the model began its answer
};

class AdaptiveDriver {
 public:
  enum class Do { Continue, Cut, Restart, Done };
  struct Action {
    Do what = Do::Continue;
    Mode mode = Mode::Slow;  // Restart: the new attempt's mode
  };

  // initial: the decision (estimate, cache, or a requested mode); adaptive false: a requested mode,
  // no checks and no retries whatever the config says.
  AdaptiveDriver(const AdaptiveConfig& c, const ModeChoice& initial, bool adaptive);

  const AdaptiveConfig& config() const { return c_; }
  Mode mode() const { return ctl_.mode(); }
  const ModeChoice& initial() const { return ctl_.initial(); }
  // The current attempt's plan (think formats: its think block and budget; kvscope: its mode line).
  ReasoningPlan plan() const;
  // Tokens the attempt may sample before any cut: kvscope's mode cap within what is left; others:
  // what is left (their budget cuts the thinking).
  int attempt_cap() const;
  // Tokens an answer after a cut may take: kvscope's answer_max_tokens, at most what is left (at least 1).
  int answer_tokens() const;
  int tokens_left() const { return c_.max_tokens - total_; }

  void begin_attempt();
  void observe_logits(const float* logits, int n_vocab);  // the logits the next token is drawn from
  Action on_token(int32_t id, const std::string& piece);  // a sampled token (not EOS) and its text
  void on_eos();                                           // the model ended (EOS drawn, counted)
  void on_text(const std::string& held) { tokens_.on_text(held); }  // a decoder's held-back bytes
  // A check point of the running attempt: the probe's early cut may look (probe_due) and, with
  // re-estimates on, the difficulty estimate is due (check_due).
  bool probe_due() const;
  bool check_due() const;
  Action on_estimate(const Estimate& e);
  Action on_probe(double p_correct, double below);
  void on_cut(const std::string& text);
  Action on_end(StopReason why);
  void refuse(const std::string& why);
  void finish() { tokens_.finish(); }

  int attempt() const { return ctl_.attempt(); }
  int attempts() const { return attempts_; }
  int generated() const { return g_; }             // sampled in the attempt before its answer
  int attempt_tokens() const { return attempt_tokens_; }
  int total() const { return total_; }             // sampled over every attempt, EOS not counted (the engine's count)
  int generated_total() const { return total_ + eos_; }  // EOS counted: the cost
  bool answering() const { return answering_; }
  bool answered_early() const { return answered_early_; }
  bool budget_cut() const { return tokens_.budget_cut(); }
  double answer_confidence() const { return answer_confidence_; }  // < 0: none taken
  int refused_upgrades() const { return refused_upgrades_; }
  int refused_retries() const { return refused_retries_; }
  // The token-level split of the running (last) attempt: reasoning, content, reasoning tokens.
  Driver& tokens() { return tokens_; }
  const Driver& tokens() const { return tokens_; }
  const Controller& controller() const { return ctl_; }

  // The controller's decision and trace, the format, attempts, tokens: kvscope.reasoning's core.
  nlohmann::json report() const;

 private:
  bool started_answer() const;
  Action restart(Mode to);
  AdaptiveConfig c_;
  bool adaptive_;
  Controller ctl_;
  Driver tokens_;
  signals::LogitStats stats_;  // the attempt's MaxProb for the retry
  std::string text_;           // the attempt's text (kvscope: to notice the model's own cue)
  Mode restart_from_ = Mode::Slow;
  bool pending_retry_ = false;  // the last Restart was a retry (refuse() undoes the right one)
  int g_ = 0, last_checked_ = -1, attempt_tokens_ = 0, total_ = 0, eos_ = 0, attempts_ = 0, cap_ = 0;
  int refused_upgrades_ = 0, refused_retries_ = 0;
  bool answering_ = false, answered_early_ = false;
  double answer_confidence_ = -1;
};

}  // namespace kvscope::reasoning
