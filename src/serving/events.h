// What the pipeline hands back while a job runs: typed events, in order, which each protocol
// renders its own way (chat and completions as chunks or one body, Responses as its items, the CLI
// as text). The pipeline never writes JSON or SSE.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "serving/job.h"

namespace kvscope::serving {

// One generated token's log-probability and the most likely alternatives at its position.
struct TokenLogprob {
  std::string piece;  // the token's bytes as it contributes to the text
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;
};

struct Usage {
  int prompt_tokens = 0, completion_tokens = 0;
  int reasoning_tokens = -1;  // completion_tokens_details.reasoning_tokens (-1: not reported)
};

// The attempts of one job: which step produced the current one. The engine adapter moves through
// them as the adaptive driver, the thinking budget and the answer-confidence retry decide; an
// upgrade or retry that is refused (a stream already sent text) leaves the state as it was.
enum class AttemptState : uint8_t {
  First,        // the job's first attempt, running as submitted
  BudgetCut,    // the thinking budget closed the reasoning; the answer follows
  EarlyAnswer,  // a check point cut the reasoning and forced the answer
  Upgraded,     // a check point restarted the question at a higher effort
  Retried,      // a low-confidence answer was retried at a higher effort
  AnswerContinued,  // stopped at the thinking budget with the reasoning already closed: the answer goes on
};
std::string_view attempt_state_name(AttemptState s);
// After these the reasoning is closed: no thinking budget applies to the rest of the attempt.
inline bool reasoning_closed(AttemptState s) {
  return s == AttemptState::BudgetCut || s == AttemptState::EarlyAnswer || s == AttemptState::AnswerContinued;
}

// Text the model wrote inside its reasoning (chat shows it as reasoning_content).
struct ReasoningDelta {
  std::string text;
  // The log-probabilities of the reasoning's tokens, when they were asked for (chat shows them apart
  // from the answer's: logprobs.kvscope_reasoning); a delta may carry them without text (a delimiter
  // still held back).
  std::optional<std::vector<TokenLogprob>> logprobs;
};
// Answer text, with the log-probabilities of the tokens that produced it: nullopt when they were
// not asked for, or for text the engine forced (a cut); present (maybe empty) otherwise, so a delta
// may carry log-probabilities without text (a token whose bytes are not yet whole UTF-8).
struct ContentDelta {
  std::string text;
  std::optional<std::vector<TokenLogprob>> logprobs;
  size_t text_offset = 0;  // where the delta's tokens start in the generated text (reasoning included)
};
// A piece of a tool call (OpenAI's delta.tool_calls[i]): the id and name come with its first piece,
// the arguments' JSON text in pieces after it. Reserved for tool calling.
struct ToolCallDelta {
  int index = 0;
  std::string id, name, arguments;
};
// The confidence probe's early warning, formed every N tokens; it rides on the delta after it.
struct ConfidenceUpdate {
  int tokens = 0;
  double p_correct = 0;
};
// The job ended: why, what it used. Always the last event.
struct Finished {
  FinishReason reason = FinishReason::Stop;
  Usage usage;
};

using Event = std::variant<ReasoningDelta, ContentDelta, ToolCallDelta, ConfidenceUpdate, Finished>;

}  // namespace kvscope::serving
