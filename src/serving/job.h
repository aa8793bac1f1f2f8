// The serving layer's typed job: what a protocol adapter (completions, chat, Responses, the CLI)
// hands the pipeline once it has parsed its input. Strings from the wire are parsed into these
// enums once, at the edge (server/openai_protocol.cpp, cli/options.cpp); nothing past it compares
// strings for an effort, a mode or a finish reason.
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

// Why an answer ended, as the APIs report it. ToolCalls is reserved for tool calling (the model
// wrote a complete call; nothing produces it yet).
enum class FinishReason : uint8_t { Stop, Length, ToolCalls, Cancelled };
std::string_view finish_reason_name(FinishReason r);  // OpenAI's spelling: "stop" | "length" | "tool_calls" | "cancelled"
std::optional<FinishReason> parse_finish_reason(std::string_view s);  // nullopt for anything else
// The engine's stop as the APIs see it: a stop string, EOS or a refused continuation is a stop; a
// token limit or a full context is a length.
FinishReason finish_reason_of(StopReason r, bool stop_string_matched);

// One tool the client offers (tool calling; carried, not yet acted on by the pipeline).
struct ToolSpec {
  std::string name, description;
  std::string parameters_json;  // the JSON Schema of the arguments, as the client sent it
};

// A typed request for generation.
struct Job {
  std::vector<int32_t> prompt;  // rendered, ready for the engine (an adaptive run renders its own)
  SamplingParams sampling;
  // Reasoning as asked: the ecosystem's effort (Auto: the difficulty estimate picks one of the
  // format's efforts), or kvscope's mode. At most one of them is set.
  std::optional<Effort> effort;
  std::optional<ReasoningMode> mode;
  reasoning::ReasoningPlan plan;     // the format's plan for the effort (think block, budget)
  std::vector<std::string> stop;     // stop strings, matched on the decoded text
  int max_tokens = 0;                // over every attempt
  int context = 0;                   // the engine's sequence limit
  int logprobs = -1;                 // top alternatives per token; -1: none
  std::shared_ptr<TokenConstraint> constraint;  // JSON output (and, later, a tool call's grammar)
  std::vector<ToolSpec> tools;       // offered tools (empty: none)
  uint64_t cache_salt = 0;
  std::string session;               // the engine session key ("" none)
};

}  // namespace kvscope::serving
