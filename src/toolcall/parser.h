// Tool calls in a model's text, per family (one parser class per format, registered by name), read
// incrementally: feed the text as it is generated, get the content to show and the tool-call deltas
// to stream (OpenAI's delta.tool_calls: index, id, name, argument fragments). Text that may be the
// start of a call marker is held back until it is known not to be one.
//
// Formats and the models whose output they were written against (docs/tool-calling.md):
//   hermes   <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>, repeated for parallel calls
//            (Hermes 2 Pro / Hermes 3, Qwen2.5-Instruct, Qwen3, QwQ)
//   llama3   {"name": "f", "parameters": {...}} as the whole answer, or after <|python_tag|>; several
//            calls separated by ';' (Llama 3.1 / 3.2 / 3.3 Instruct)
//   mistral  [TOOL_CALLS] [{"name": "f", "arguments": {...}, "id": "abcDEF123"}] (Mistral 7B Instruct
//            v0.3, Nemo without the space) and [TOOL_CALLS]f[ARGS]{...} (Mistral Small 3.2, Devstral)
//   generic  the whole answer is {"tool_calls": [{"name": "f", "arguments": {...}}]}, {"tool_call": {...}}
//            or {"response": "text"} (llama.cpp's generic format, for templates without a tool format)
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "toolcall/tools.h"

namespace kvscope::toolcall {

enum class ToolFormat : uint8_t { Hermes, Llama3, Mistral, Generic };

// From a Jinja chat template's text (tokenizer.chat_template): the markers its tool section writes.
ToolFormat detect_tool_format(const std::string& chat_template);
// "hermes" (also "qwen", "qwen2.5", "qwen3"), "llama3", "mistral", "generic"; throws InputError listing
// the known names.
ToolFormat tool_format_from_name(const std::string& name);
const char* tool_format_name(ToolFormat f);

// One streamed piece of a call. The first delta of a call carries its id and name (arguments may
// still be empty); later ones carry argument fragments only. Fragments of one call, concatenated,
// are its arguments (a JSON text).
struct ToolCallDelta {
  int index = 0;
  std::string id;
  std::string name;
  std::string arguments;
};
struct ParseDelta {
  std::string content;
  std::vector<ToolCallDelta> calls;
  bool empty() const { return content.empty() && calls.empty(); }
};
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // the model's JSON text for the arguments ("{}" when it wrote none)
};

// Makes call ids. Default: "call_" + 24 random alphanumerics (OpenAI's shape); Mistral's templates
// need exactly 9 alphanumerics, which the mistral parser makes unless the model wrote one.
using IdMaker = std::function<std::string(ToolFormat, int index)>;
std::string random_call_id(ToolFormat f, uint64_t seed);

class ToolCallParser {
 public:
  virtual ~ToolCallParser() = default;
  // The next piece of generated text; returns what became final.
  ParseDelta feed(std::string_view text);
  // Generation ended: flushes held text. A call cut off before its name is known is returned as
  // content; one cut off in its arguments is kept with the arguments written so far.
  ParseDelta finish();
  // Everything so far (the non-streamed message).
  const std::string& content() const { return content_; }
  const std::vector<ToolCall>& calls() const { return calls_; }
  ToolFormat format() const { return format_; }
  // A copy in the same state (a constraint tries a token on it before the token is drawn).
  virtual std::unique_ptr<ToolCallParser> clone() const = 0;
  // The text read may be inside a call whose name is not known yet (the next bytes may name it).
  // False only where no call can begin within a token's bytes: plain content, arguments.
  virtual bool naming() const = 0;

 protected:
  ToolCallParser(ToolFormat f, IdMaker ids);
  virtual void run(bool at_end) = 0;  // consumes buf_ as far as it can
  // Helpers for the families.
  void emit_content(std::string_view s);
  int begin_call(std::string name, std::string id = "");  // returns the call's index
  void emit_arguments(std::string_view s);
  std::string buf_;  // fed text not consumed yet
  ToolFormat format_;

 private:
  IdMaker ids_;
  ParseDelta out_;
  std::string content_;
  std::vector<ToolCall> calls_;
  std::string held_ws_;  // whitespace after a call, shown only if more content follows
};

// A parser for the format; ids from `ids` (default: random ids seeded from the clock).
std::unique_ptr<ToolCallParser> make_tool_call_parser(ToolFormat f, IdMaker ids = nullptr);

// What a forced call (tool_choice required or a named function) decodes under: `prefix` is written
// first (for hermes "<tool_call>\n", for mistral "[TOOL_CALLS]" which is a control token there), then
// a JSON text under `schema`, then `suffix`. With parallel calls allowed, mistral and generic take an
// array of calls; hermes and llama3 one call per prefix/schema/suffix round. The arguments follow
// each function's parameters schema ($defs of each tool are moved under distinct names); the schema
// is for sampling/json_schema.h (the name comes first, so alternatives are told apart by it).
struct ForcedCall {
  std::string prefix;
  nlohmann::ordered_json schema;
  std::string suffix;
};
ForcedCall forced_call(const ToolSpec& spec, ToolFormat f);

}  // namespace kvscope::toolcall
