#include "reasoning/driver.h"

namespace kvscope::reasoning {

Splitter response_splitter(const ReasoningPlan& plan) {
  // Only a plan that reasons has thinking on (formats without a think block always reason first).
  return plan.thinking ? Splitter(plan.format, true) : Splitter(FormatKind::None, false);
}

void Driver::restart(const ReasoningPlan& plan) {
  plan_ = plan;
  split_ = response_splitter(plan);
  reasoning_.clear();
  content_.clear();
  fresh_ = {};
  attempt_reasoning_ = 0;
  cut_ = budget_cut_ = false;
}

void Driver::show(const Splitter::Delta& d) {
  reasoning_ += d.reasoning;
  content_ += d.content;
  fresh_.reasoning += d.reasoning;
  fresh_.content += d.content;
}

bool Driver::needs_cut() const {
  return !cut_ && plan_.budget >= 0 && attempt_reasoning_ >= plan_.budget && split_.in_reasoning();
}

Driver::Action Driver::on_token(const std::string& piece) {
  if (split_.in_reasoning()) ++reasoning_tokens_, ++attempt_reasoning_;
  show(split_.push(piece));
  return needs_cut() ? Action::Cut : Action::Continue;
}

void Driver::on_cut(const std::string& text) {
  budget_cut_ = budget_cut_ || needs_cut();
  cut_ = true;
  show(split_.push(text));
}

void Driver::finish() { show(split_.flush()); }

Splitter::Delta Driver::take() {
  Splitter::Delta d = std::move(fresh_);
  fresh_ = {};
  return d;
}

}  // namespace kvscope::reasoning
