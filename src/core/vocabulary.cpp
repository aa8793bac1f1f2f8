#include "core/mode.h"
#include "core/stop_reason.h"

#include <ostream>

namespace kvscope {

std::string_view mode_name(Mode m) {
  switch (m) {
    case Mode::Fast: return "fast";
    case Mode::Mixed: return "mixed";
    case Mode::Slow: return "slow";
  }
  return "slow";
}

std::string_view level_name(Mode m) {
  switch (m) {
    case Mode::Fast: return "low";
    case Mode::Mixed: return "medium";
    case Mode::Slow: return "high";
  }
  return "high";
}

std::optional<Mode> parse_mode(std::string_view s) {
  if (s == "fast") return Mode::Fast;
  if (s == "mixed") return Mode::Mixed;
  if (s == "slow") return Mode::Slow;
  return std::nullopt;
}

std::string_view effort_name(Effort e) {
  switch (e) {
    case Effort::None: return "none";
    case Effort::Minimal: return "minimal";
    case Effort::Low: return "low";
    case Effort::Medium: return "medium";
    case Effort::High: return "high";
    case Effort::Auto: return "auto";
  }
  return "auto";
}

std::optional<Effort> parse_effort(std::string_view s) {
  for (Effort e : {Effort::None, Effort::Minimal, Effort::Low, Effort::Medium, Effort::High, Effort::Auto})
    if (s == effort_name(e)) return e;
  return std::nullopt;
}

std::string_view stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::None: return "none";
    case StopReason::Eos: return "eos";
    case StopReason::Stop: return "stop";
    case StopReason::Length: return "length";
    case StopReason::Context: return "context";
    case StopReason::Cancelled: return "cancelled";
    case StopReason::EarlyAnswer: return "early_answer";
  }
  return "none";
}

std::ostream& operator<<(std::ostream& os, StopReason r) { return os << stop_reason_name(r); }

}  // namespace kvscope
