// Why a generation ended. Strings only at the CLI/JSON edge (stop_reason_name); OpenAI's
// finish_reason is derived from it in the server.
#pragma once
#include <string_view>

namespace kvscope {

enum class StopReason {
  None,         // still running
  Eos,          // the model wrote an end-of-generation token
  Stop,         // a stop string, or a token outside a request's allowed continuation
  Length,       // max_tokens reached
  Context,      // the sequence filled its context
  Cancelled,    // cancelled by the client or at shutdown
  EarlyAnswer,  // adaptive reasoning cut the reasoning short and forced the answer
};

std::string_view stop_reason_name(StopReason r);  // "eos", "stop", "length", "context", "cancelled", "early_answer"

}  // namespace kvscope
