// OpenAI's wire protocol: request parsing with validation (every problem becomes an ApiError with
// OpenAI's status, type and param), and the JSON of responses, stream chunks and errors.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/mode.h"
#include "sampling/json_schema.h"
#include "sampling/sampler.h"
#include "serving/events.h"
#include "serving/job.h"
#include "tokenizer/chat_template.h"
#include "toolcall/tools.h"

namespace kvscope::server {

using json = nlohmann::json;

// Request fields the APIs spell differently: chat completions' messages, max_tokens,
// max_completion_tokens, response_format and reasoning_effort are the Responses API's input,
// max_output_tokens (both), text.format and reasoning.effort. An error names such a field by
// identity, and the API that answers words it (ApiError::in), so a Responses client reads its own
// parameter names in the message and in `param`.
enum class Field : uint8_t { Messages, MaxTokens, MaxCompletionTokens, ResponseFormat, ReasoningEffort };
enum class Api : uint8_t { Chat, Responses };  // chat completions and completions word alike
const char* field_name(Field f, Api api);
// The field a chat request key names (nullopt: one both APIs spell alike, or none of the above).
std::optional<Field> field_of_key(std::string_view key);

// A field in an error: its identity and, for chat, what follows its name (messages[2].content).
// The Responses API drops the path: chat's message indices count the instructions and earlier
// turns, not the client's input items.
struct FieldRef {
  Field field;
  std::string path;
  bool quoted = true;  // written as 'name'
  std::string in(Api api) const;
  std::string param(Api api) const { return FieldRef{field, path, false}.in(api); }  // as an error's `param`
};
inline FieldRef quoted(Field f, std::string path = "") { return {f, std::move(path), true}; }
inline FieldRef named(Field f, std::string path = "") { return {f, std::move(path), false}; }

// An error's text: literal pieces and fields, worded per API.
class FieldText {
 public:
  FieldText() = default;
  FieldText(std::string s) { parts_.emplace_back(std::move(s)); }
  FieldText(const char* s) : FieldText(std::string(s)) {}
  FieldText(FieldRef f) { parts_.emplace_back(std::move(f)); }
  friend FieldText operator+(FieldText a, const FieldText& b) {
    a.parts_.insert(a.parts_.end(), b.parts_.begin(), b.parts_.end());
    return a;
  }
  std::string in(Api api) const;

 private:
  std::vector<std::variant<std::string, FieldRef>> parts_;
};

// An error answered to the client as {"error":{"message","type","param","code"}}. what() and param
// are chat's wording; an error built from FieldText and a FieldRef param is worded again by in().
struct ApiError : std::runtime_error {
  ApiError(int status, std::string type, const std::string& message, std::string param = "", std::string code = "")
      : std::runtime_error(message), status(status), type(std::move(type)), param(std::move(param)), code(std::move(code)) {}
  ApiError(int status, std::string type, FieldText message, FieldRef field, std::string code)
      : std::runtime_error(message.in(Api::Chat)), status(status), type(std::move(type)), param(field.param(Api::Chat)),
        code(std::move(code)), words_(std::make_shared<const FieldText>(std::move(message))), field_(std::move(field)) {}
  // A 400 whose message names such a field, about a parameter both APIs spell alike.
  static ApiError about(const std::string& param, FieldText message, std::string code) {
    ApiError e(400, "invalid_request_error", message.in(Api::Chat), param, std::move(code));
    e.words_ = std::make_shared<const FieldText>(std::move(message));
    return e;
  }
  int status;
  std::string type, param, code;
  // This error as `api` words it (itself when nothing in it depends on the API).
  ApiError in(Api api) const;

 private:
  std::shared_ptr<const FieldText> words_;  // null: plain text, the same in every API
  std::optional<FieldRef> field_;
};
ApiError invalid_request(const std::string& message, const std::string& param = "", const std::string& code = "");
ApiError invalid_request(FieldText message, FieldRef param, const std::string& code);
json error_body(const ApiError& e);
// JSON text safe for any string content: invalid UTF-8 (a token's partial bytes) becomes U+FFFD.
std::string dump(const json& j);

enum class Endpoint { Completions, Chat };

inline constexpr int kMaxChoices = 64;  // `n` at most
inline constexpr int kMaxPrompts = 64;  // prompts of one completions request at most
const char* endpoint_name(Endpoint e);

struct GenRequest {
  Endpoint endpoint = Endpoint::Completions;
  std::string model;                     // "" when not given
  std::string prompt;                    // completions with a text prompt
  std::vector<int32_t> prompt_tokens;    // completions with a token-id prompt
  bool token_prompt = false;
  // Completions with several prompts: the second and later ones (text, or token ids with
  // token_prompt), each answered by its own n choices.
  std::vector<std::string> more_prompts;
  std::vector<std::vector<int32_t>> more_prompt_tokens;
  std::vector<tok::ChatMessage> messages;  // chat
  int max_tokens = 0;                    // 0: not given (the endpoint's default applies)
  Field max_tokens_field = Field::MaxTokens;  // the name it came under (max_completion_tokens on chat)
  int n = 1;                             // choices, each sampled with seed + its index
  bool json_object = false;              // response_format {"type": "json_object"}: the output is a JSON object
  // response_format with a JSON schema: where it sits (OpenAI's json_schema.schema, or llama.cpp's
  // json_object form with a schema), and the schema compiled (by the server, from the body in its order).
  enum class SchemaAt : uint8_t { None, JsonSchema, Schema } schema_at = SchemaAt::None;
  std::shared_ptr<const JsonSchema> schema;
  // Chat's tools, tool_choice and parallel_tool_calls (null: no tools offered). Read by the server
  // from the body in its order, as a schema is.
  std::shared_ptr<const toolcall::ToolSpec> tools;
  SamplingParams sampling;
  std::vector<std::string> stop;
  bool stream = false, include_usage = false;
  int logprobs = -1;                     // top alternatives per token; -1: no logprobs
  std::string session_id, cache_salt;
  std::optional<serving::ReasoningMode> reasoning;  // kvscope's "reasoning" member (none: as prompted)
  // Reasoning as the ecosystem asks for it (reasoning/format.h maps them onto the model's format).
  std::optional<Effort> effort;          // reasoning_effort
  std::optional<bool> enable_thinking;   // chat_template_kwargs.enable_thinking
  std::optional<int> thinking_budget;    // thinking_token_budget (vLLM) or reasoning_budget (llama.cpp)
  bool reasoning_requested() const { return effort || enable_thinking || thinking_budget; }
  // Local runs (kvscope run -n): max_tokens is cut to what the context leaves instead of refused.
  bool fit_context = false;
  // One request per prompt, in order (this one alone when it has one prompt).
  std::vector<GenRequest> split_prompts() const;
};

// Parses and validates a request body (already known to be valid UTF-8 JSON). Throws ApiError.
GenRequest parse_gen_request(const json& body, Endpoint e);

using serving::FinishReason;
using serving::TokenLogprob;
using serving::Usage;
json usage_json(const Usage& u);

// Response bodies. `ext` is the kvscope extension object (omitted when null).
json logprobs_json(Endpoint e, const std::vector<TokenLogprob>& lp, size_t text_offset0);
// reasoning: the chat message's reasoning_content (a string or null; no pointer: the field is left out).
json completion_body(Endpoint e, const std::string& id, int64_t created, const std::string& model, const std::string& text,
                     FinishReason finish_reason, const json& logprobs, const Usage& usage, const json& ext,
                     const json* reasoning = nullptr);
// One stream chunk; no finish_reason gives null. For chat, `first` sends the role; reasoning text
// goes to delta.reasoning_content (a chunk carries reasoning or content).
json chunk_body(Endpoint e, const std::string& id, int64_t created, const std::string& model, const std::string& text,
                std::optional<FinishReason> finish_reason, const json& logprobs, bool first, bool include_usage,
                const json& ext, const std::string& reasoning = "");
// The usage-only chunk of stream_options.include_usage (choices empty).
json usage_chunk(Endpoint e, const std::string& id, int64_t created, const std::string& model, const Usage& usage,
                 const json& ext);
std::string new_response_id(Endpoint e);

}  // namespace kvscope::server
