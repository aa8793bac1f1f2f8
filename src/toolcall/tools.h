// OpenAI function tools as a request carries them: `tools`, `tool_choice`, `parallel_tool_calls`
// (chat completions and the Responses API), read and checked once at the edge, and the JSON schema
// a forced call decodes under (tool_choice "required" or a named function), for the schema engine
// in sampling/json_schema.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace kvscope::toolcall {

// A request's tool fields are wrong: a 400 naming the field (`param`, e.g. "tools[1].function.name")
// with OpenAI's error code ("invalid_type", "invalid_value", "missing_required_parameter").
class ToolError : public InputError {
 public:
  ToolError(const std::string& message, std::string param, std::string code)
      : InputError(message), param(std::move(param)), code(std::move(code)) {}
  std::string param, code;
};

struct FunctionTool {
  std::string name;                   // [A-Za-z0-9_-]{1,64}, as OpenAI requires
  std::string description;            // "" when absent
  nlohmann::ordered_json parameters;  // a JSON schema object; {"type":"object","properties":{}} when absent
  bool strict = false;                // accepted; arguments are always decoded under the schema when forced
};

enum class ChoiceKind : uint8_t {
  Auto,      // the model decides; calls are detected in its text
  None,      // no call: the tools are still shown to the model (as OpenAI does), no call is parsed
  Required,  // at least one call to any tool
  Function,  // one call to the named function
};

// Which request shape the fields come from: chat's {"type":"function","function":{...}} and
// {"type":"function","function":{"name":..}}, or the Responses API's flat {"type":"function","name":..}.
enum class Api : uint8_t { Chat, Responses };

struct ToolSpec {
  std::vector<FunctionTool> tools;
  ChoiceKind choice = ChoiceKind::Auto;
  std::string choice_name;        // ChoiceKind::Function: the function's name
  bool parallel = true;           // parallel_tool_calls
  // The tools in chat's shape ({"type":"function","function":{name, description, parameters}}), in
  // the request's order, for the chat template's `tools` variable.
  nlohmann::ordered_json template_tools = nlohmann::ordered_json::array();
  bool active() const { return !tools.empty(); }
  bool forced() const { return choice == ChoiceKind::Required || choice == ChoiceKind::Function; }
  const FunctionTool* find(const std::string& name) const;
};

// Reads the three fields (each may be null: absent). Throws ToolError naming the field: a tool that is
// not a function, a name OpenAI would refuse or given twice, parameters that are not an object, a
// tool_choice naming no tool or given without tools, a non-boolean parallel_tool_calls.
// Unsupported tool types (web_search, file_search ...) are refused by name.
ToolSpec parse_tool_spec(const nlohmann::ordered_json* tools, const nlohmann::ordered_json* tool_choice,
                         const nlohmann::ordered_json* parallel_tool_calls, Api api = Api::Chat);

}  // namespace kvscope::toolcall
