#include "reasoning/adaptive_driver.h"

#include <algorithm>

namespace kvscope::reasoning {

AdaptiveDriver::AdaptiveDriver(const AdaptiveConfig& c, const ModeChoice& initial, bool adaptive)
    : c_(c), adaptive_(adaptive), ctl_(c.controller), tokens_(ReasoningPlan{}) {
  ctl_.start(initial);
  if (!adaptive_) c_.checks = c_.retries = false;
  if (c_.controller.retry_below <= 0) c_.retries = false;
}

ReasoningPlan AdaptiveDriver::plan() const {
  ReasoningPlan p = plan_for_effort(c_.kind, effort_for_mode(c_.kind, mode()), c_.budgets);
  p.requested = true;
  return p;
}

int AdaptiveDriver::attempt_cap() const { return cap_; }

int AdaptiveDriver::answer_tokens() const {
  const int left = std::max(1, tokens_left());
  return format_of(c_.kind).mode_line() ? std::min(c_.answer_max_tokens, left) : left;
}

void AdaptiveDriver::begin_attempt() {
  // A dropped attempt (an upgrade, a retry, an early cut): every token it spent was reasoning on the
  // way to the answer the client gets, its answer included.
  if (attempts_ > 0) tokens_.on_dropped(attempt_tokens_ - tokens_.attempt_reasoning_tokens());
  ++attempts_;
  tokens_.restart(plan());
  stats_ = signals::LogitStats();
  text_.clear();
  g_ = attempt_tokens_ = 0;
  last_checked_ = -1;
  answering_ = answered_early_ = false;
  const int left = tokens_left();
  cap_ = format_of(c_.kind).mode_line() ? std::min(c_.controller.cap(mode()), left) : left;
}

void AdaptiveDriver::observe_logits(const float* logits, int n_vocab) {
  if (c_.retries && mode() != Mode::Slow) stats_.observe(logits, n_vocab);  // a slow answer is never retried
}

AdaptiveDriver::Action AdaptiveDriver::on_token(int32_t id, const std::string& piece) {
  ++total_;
  ++attempt_tokens_;
  if (!answering_) {
    ++g_;
    if (format_of(c_.kind).mode_line()) text_ += piece;
  }
  if (stats_.pending()) stats_.choose(id);
  const bool cut = tokens_.on_token(piece) == Driver::Action::Cut;
  return {cut && !answering_ ? Do::Cut : Do::Continue, mode()};
}

void AdaptiveDriver::on_eos() { ++eos_; }

bool AdaptiveDriver::started_answer() const {
  return format_of(c_.kind).mode_line() ? text_.find(c_.answer_cue) != std::string::npos : !tokens_.in_reasoning();
}

bool AdaptiveDriver::probe_due() const {
  const int every = c_.controller.check_every;
  // Not where the attempt ends anyway (its cap, its budget's cut): the engine draws no decision there.
  return adaptive_ && !answering_ && g_ > 0 && g_ % every == 0 && g_ != last_checked_ && g_ < cap_ &&
         !tokens_.needs_cut();
}

bool AdaptiveDriver::check_due() const { return c_.checks && probe_due(); }

AdaptiveDriver::Action AdaptiveDriver::restart(Mode from) {
  restart_from_ = from;
  return {Do::Restart, mode()};
}

AdaptiveDriver::Action AdaptiveDriver::on_estimate(const Estimate& e) {
  last_checked_ = g_;
  const Mode from = mode();
  switch (ctl_.observe(g_, e, started_answer())) {
    case Controller::Action::EarlyAnswer: return {Do::Cut, mode()};
    case Controller::Action::Upgrade: pending_retry_ = false; return restart(from);
    default: return {Do::Continue, mode()};
  }
}

AdaptiveDriver::Action AdaptiveDriver::on_probe(double p_correct, double below) {
  const Mode from = mode();
  if (!adaptive_ || from == Mode::Slow || started_answer() || !ctl_.early_cut(g_, p_correct, below)) return {Do::Continue, from};
  pending_retry_ = false;
  return restart(from);
}

void AdaptiveDriver::on_cut(const std::string& text) {
  tokens_.on_cut(text);
  answering_ = true;
  answered_early_ = !tokens_.budget_cut();
}

AdaptiveDriver::Action AdaptiveDriver::on_end(StopReason why) {
  const Mode from = mode();
  if (!c_.retries || from == Mode::Slow || why == StopReason::Context || why == StopReason::Cancelled || tokens_left() <= 0)
    return {Do::Done, from};
  answer_confidence_ = stats_.max_prob();
  if (!ctl_.check_answer(attempt_tokens_, answer_confidence_)) return {Do::Done, from};
  pending_retry_ = true;
  return restart(from);
}

void AdaptiveDriver::refuse(const std::string& why) {
  if (pending_retry_) {
    ctl_.refuse_retry(restart_from_, why);
    ++refused_retries_;
  } else {
    ctl_.refuse_upgrade(restart_from_, why);
    ++refused_upgrades_;
  }
}

nlohmann::json AdaptiveDriver::report() const {
  nlohmann::json j = ctl_.to_json();
  j["format"] = std::string(format_name(c_.kind));
  j["attempts"] = attempts_;
  j["answered_early"] = answered_early_;
  j["generated_total"] = generated_total();
  j["reasoning_tokens"] = tokens_.reasoning_tokens();
  if (answer_confidence_ >= 0) j["answer_confidence"] = answer_confidence_;
  return j;
}

}  // namespace kvscope::reasoning
