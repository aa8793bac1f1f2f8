#include <array>

#include "serving/events.h"
#include "serving/job.h"

namespace kvscope::serving {

namespace {

// Each enum's spellings, indexed by its value.
constexpr std::array<std::string_view, 4> kReasoningModes{"auto", "fast", "mixed", "slow"};
constexpr std::array<std::string_view, 4> kFinishReasons{"stop", "length", "tool_calls", "cancelled"};
constexpr std::array<std::string_view, 6> kAttemptStates{"first",    "budget_cut", "early_answer",
                                                         "upgraded", "retried",    "answer_continued"};

template <class E, size_t N>
std::optional<E> by_name(const std::array<std::string_view, N>& names, std::string_view s) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}

}  // namespace

std::string_view reasoning_mode_name(ReasoningMode m) { return kReasoningModes.at(static_cast<size_t>(m)); }
std::optional<ReasoningMode> parse_reasoning_mode(std::string_view s) { return by_name<ReasoningMode>(kReasoningModes, s); }

// Fast, Mixed and Slow follow Auto in the order of Mode's values.
std::optional<Mode> fixed_mode(ReasoningMode m) {
  if (m == ReasoningMode::Auto) return std::nullopt;
  return static_cast<Mode>(static_cast<int>(m) - 1);
}
ReasoningMode reasoning_mode_of(Mode m) { return static_cast<ReasoningMode>(static_cast<int>(m) + 1); }

std::string_view finish_reason_name(FinishReason r) { return kFinishReasons.at(static_cast<size_t>(r)); }
std::optional<FinishReason> parse_finish_reason(std::string_view s) { return by_name<FinishReason>(kFinishReasons, s); }

FinishReason finish_reason_of(StopReason r, bool stop_string_matched) {
  if (stop_string_matched || r == StopReason::Eos || r == StopReason::Stop) return FinishReason::Stop;
  if (r == StopReason::Cancelled) return FinishReason::Cancelled;
  return FinishReason::Length;  // max_tokens, the context, an early answer's cut
}

std::string_view attempt_state_name(AttemptState s) { return kAttemptStates.at(static_cast<size_t>(s)); }

}  // namespace kvscope::serving
