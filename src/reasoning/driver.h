// The token-level reasoning state machine of one response: the split into reasoning and answer,
// the reasoning-token count and the thinking budget. Fixed-effort requests use it alone (the
// server's chat requests, which `kvscope run` and `eval` run too); adaptive runs through the
// AdaptiveDriver (adaptive_driver.h), which owns one. It consumes token events:
//
//   on_token(piece)  a generated token's text: counted as reasoning while the reasoning is open;
//                    returns Cut once the plan's thinking budget is spent with the reasoning open
//   on_cut(text)     the adapter wrote the plan's cut ("</think>", kvscope's "Answer:") or an early
//                    answer's cue: the response is in the answer from here on
//   restart(plan)    a new attempt (an upgrade, a retry) under another effort: the split starts over
//                    and the tokens spent so far stay counted
#pragma once
#include <string>

#include "reasoning/format.h"

namespace kvscope::reasoning {

class Driver {
 public:
  enum class Action { Continue, Cut };

  explicit Driver(const ReasoningPlan& plan) { restart(plan); }
  void restart(const ReasoningPlan& plan);

  Action on_token(const std::string& piece);
  // Text that is no new token (a decoder's held-back bytes flushed): split, not counted.
  void on_text(const std::string& text) { show(split_.push(text)); }
  void on_cut(const std::string& text);
  // Tokens of an attempt that was dropped (an upgrade's restart): all spent on the way.
  void on_dropped(int n) { reasoning_tokens_ += n; }
  void finish();  // the response ended: the held-back text is decided

  // The text shown so far, split, and what the last events added (take() clears it).
  Splitter::Delta take();
  const std::string& reasoning() const { return reasoning_; }
  const std::string& content() const { return content_; }

  const ReasoningPlan& plan() const { return plan_; }
  bool in_reasoning() const { return split_.in_reasoning(); }
  // The budget is spent and the reasoning still open: the adapter should write cut_text().
  bool needs_cut() const;
  bool budget_cut() const { return budget_cut_; }
  bool cut_done() const { return cut_; }
  int reasoning_tokens() const { return reasoning_tokens_; }      // over every attempt
  int attempt_reasoning_tokens() const { return attempt_reasoning_; }

 private:
  void show(const Splitter::Delta& d);
  ReasoningPlan plan_;
  Splitter split_{FormatKind::None, false};
  std::string reasoning_, content_;
  Splitter::Delta fresh_;
  int reasoning_tokens_ = 0, attempt_reasoning_ = 0;
  bool cut_ = false, budget_cut_ = false;
};

// Where a response under this plan starts: inside the reasoning, or (a think format with thinking
// off, a model without a format) in the answer.
Splitter response_splitter(const ReasoningPlan& plan);

}  // namespace kvscope::reasoning
