#include "reasoning/controller.h"

#include <cstdio>

#include "util/error.h"

namespace kvscope::reasoning {

void ControllerConfig::validate() const {
  auto bad = [](const std::string& what) { throw InputError("reasoning controller: " + what); };
  if (!(fast_at_most >= 0 && fast_at_most <= slow_above && slow_above <= 100))
    bad("thresholds must satisfy 0 <= fast <= slow <= 100");
  if (!(min_confidence >= 0 && min_confidence <= 1)) bad("minimum confidence must be in [0, 1]");
  if (check_every < 1) bad("re-estimation interval must be at least 1 token");
  if (!(drop > 0 && drop < 1)) bad("early-answer drop must be in (0, 1)");
  if (!(jump > 0)) bad("upgrade jump must be positive");
  if (cap_fast < 1 || cap_mixed < 1 || cap_slow < 1) bad("token caps must be at least 1");
  if (!(retry_below >= 0 && retry_below <= 1)) bad("answer-confidence retry threshold must be in [0, 1]");
}

std::string_view switch_name(SwitchKind k) {
  switch (k) {
    case SwitchKind::EarlyAnswer: return "early_answer";
    case SwitchKind::Upgrade: return "upgrade";
    case SwitchKind::Retry: return "retry";
    case SwitchKind::EarlyCut: return "early_cut";
    case SwitchKind::UpgradeRefused: return "upgrade_refused";
    case SwitchKind::RetryRefused: return "retry_refused";
  }
  return "?";
}

Controller::Controller(ControllerConfig c) : c_(c) { c_.validate(); }

namespace {
std::string fmt(const char* f, double a, double b) {
  char buf[96];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}
}  // namespace

ModeChoice Controller::choose(const Estimate& e) const {
  ModeChoice m;
  m.difficulty = e.difficulty;
  m.confidence = e.confidence;
  if (e.confidence < c_.min_confidence) {
    m.mode = Mode::Slow;
    m.reason = fmt("confidence %.2f < %.2f: fall back to slow", e.confidence, c_.min_confidence);
  } else if (e.difficulty > c_.slow_above) {
    m.mode = Mode::Slow;
    m.reason = fmt("d=%.1f > %.0f", e.difficulty, c_.slow_above);
  } else if (e.difficulty > c_.fast_at_most) {
    m.mode = Mode::Mixed;
    m.reason = fmt("%.0f < d=%.1f", c_.fast_at_most, e.difficulty) + fmt(" <= %.0f", c_.slow_above, 0);
  } else {
    m.mode = Mode::Fast;
    m.reason = fmt("d=%.1f <= %.0f", e.difficulty, c_.fast_at_most);
  }
  return m;
}

void Controller::start(const ModeChoice& c) {
  initial_ = c;
  mode_ = c.mode;
  ref_ = c.difficulty;
  attempt_ = 0;
  early_done_ = false;
  trace_.clear();
  switches_.clear();
}

Controller::Action Controller::observe(int generated, const Estimate& e, bool answer_started) {
  trace_.push_back({attempt_, generated, e.difficulty, e.confidence});
  const double d = e.difficulty;
  if (c_.early_answer && !early_done_ && !answer_started && mode_ != Mode::Fast && d <= (1.0 - c_.drop) * ref_ &&
      d <= c_.fast_at_most) {
    early_done_ = true;
    switches_.push_back({attempt_, generated, SwitchKind::EarlyAnswer, mode_, mode_,
                         fmt("d fell from %.1f to %.1f", ref_, d) + fmt(" (>= %.0f%%)", c_.drop * 100, 0)});
    return Action::EarlyAnswer;
  }
  const double band_top = mode_ == Mode::Fast ? c_.fast_at_most : c_.slow_above;
  if (c_.upgrade && mode_ != Mode::Slow && d >= (1.0 + c_.jump) * ref_ && d > band_top) {
    const Mode to = mode_ == Mode::Fast ? Mode::Mixed : Mode::Slow;
    switches_.push_back({attempt_, generated, SwitchKind::Upgrade, mode_, to,
                         fmt("d rose from %.1f to %.1f", ref_, d) + fmt(" (>= +%.0f%%)", c_.jump * 100, 0)});
    mode_ = to;
    ref_ = d;
    ++attempt_;
    early_done_ = false;
    return Action::Upgrade;
  }
  return Action::Continue;
}

bool Controller::check_answer(int g, double answer_confidence) {
  if (mode_ == Mode::Slow || !(answer_confidence < c_.retry_below)) return false;
  const Mode to = mode_ == Mode::Fast ? Mode::Mixed : Mode::Slow;
  char why[96];
  std::snprintf(why, sizeof why, "answer confidence %.3f < %.3f", answer_confidence, c_.retry_below);
  switches_.push_back({attempt_, g, SwitchKind::Retry, mode_, to, why});
  mode_ = to;
  ++attempt_;
  early_done_ = false;
  return true;
}

bool Controller::early_cut(int g, double p_correct, double below) {
  if (mode_ == Mode::Slow) return false;
  const Mode to = mode_ == Mode::Fast ? Mode::Mixed : Mode::Slow;
  char why[96];
  std::snprintf(why, sizeof why, "probe P(correct) %.3f < %.3f", p_correct, below);
  switches_.push_back({attempt_, g, SwitchKind::EarlyCut, mode_, to, why});
  mode_ = to;
  ++attempt_;
  early_done_ = false;
  return true;
}

void Controller::refuse_upgrade(Mode m, const std::string& why) {
  const int g = trace_.empty() ? 0 : trace_.back().generated;
  switches_.push_back({attempt_, g, SwitchKind::UpgradeRefused, mode_, m, why});
  mode_ = m;
  --attempt_;
}

void Controller::refuse_retry(Mode m, const std::string& why) {
  const int g = switches_.empty() ? 0 : switches_.back().generated;
  switches_.push_back({attempt_, g, SwitchKind::RetryRefused, mode_, m, why});
  mode_ = m;
  --attempt_;
}

nlohmann::json Controller::to_json() const {
  nlohmann::json tr = nlohmann::json::array(), sw = nlohmann::json::array();
  for (const auto& p : trace_)
    tr.push_back({{"attempt", p.attempt}, {"generated", p.generated}, {"difficulty", p.difficulty},
                  {"confidence", p.confidence}});
  for (const auto& s : switches_)
    sw.push_back({{"attempt", s.attempt}, {"generated", s.generated}, {"action", std::string(switch_name(s.action))},
                  {"from", std::string(mode_name(s.from))}, {"to", std::string(mode_name(s.to))}, {"reason", s.reason}});
  return {{"initial_mode", std::string(mode_name(initial_.mode))},
          {"initial_difficulty", initial_.difficulty},
          {"confidence", initial_.confidence},
          {"reason", initial_.reason},
          {"final_mode", std::string(mode_name(mode_))},
          {"trace", tr},
          {"switches", sw}};
}

}  // namespace kvscope::reasoning
