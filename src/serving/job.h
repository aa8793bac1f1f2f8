// The serving layer's vocabulary: the reasoning modes and finish reasons a request and its answer
// carry. Strings from the wire are parsed into these enums once, at the edge
// (server/openai_protocol.cpp, cli/options.cpp); nothing past it compares strings for an effort, a
// mode or a finish reason. The typed request itself is server::GenRequest (server/protocol.h),
// which the HTTP parsers and the CLI's in-process runs (Server::run) build alike.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mode.h"
#include "core/stop_reason.h"
#include "reasoning/format.h"
#include "sampling/constraint.h"
#include "sampling/sampler.h"

namespace kvscope::serving {

// kvscope's own "reasoning" member: a fixed mode of the adaptive driver, or Auto (the difficulty
// estimate decides). The order is the metrics' (reasoning_started[auto, fast, mixed, slow]).
enum class ReasoningMode { Auto = 0, Fast = 1, Mixed = 2, Slow = 3 };
std::string_view reasoning_mode_name(ReasoningMode m);               // "auto" | "fast" | "mixed" | "slow"
std::optional<ReasoningMode> parse_reasoning_mode(std::string_view s);  // nullopt for anything else
std::optional<Mode> fixed_mode(ReasoningMode m);                     // nullopt for Auto
ReasoningMode reasoning_mode_of(Mode m);

// Why an answer ended, as the APIs report it (ToolCalls: the answer ended after a whole tool call).
enum class FinishReason : uint8_t { Stop, Length, ToolCalls, Cancelled };
std::string_view finish_reason_name(FinishReason r);  // OpenAI's spelling: "stop" | "length" | "tool_calls" | "cancelled"
std::optional<FinishReason> parse_finish_reason(std::string_view s);  // nullopt for anything else
// The engine's stop as the APIs see it: a stop string, EOS or a refused continuation is a stop; a
// token limit or a full context is a length.
FinishReason finish_reason_of(StopReason r, bool stop_string_matched);

}  // namespace kvscope::serving
