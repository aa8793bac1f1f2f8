// Tool calls in auto mode (tool_choice "auto"): the model decides whether to call, and once the
// family's parser has read a call's name, the arguments are decoded under that function's
// parameters schema (sampling/json_schema.h), so they always parse, as with a forced call.
//
// Before and after a call's arguments nothing is masked: content, markers and whitespace are the
// model's own. The arguments follow the name as the formats write them: `"name": "f"` then
// `, "arguments": {...}` (or "parameters", Llama 3's key; whitespace between the tokens free), or
// Mistral's `f[ARGS]{...}`. A model that writes the arguments before the name is not constrained
// (no family does). Tools whose schema the engine cannot serve are left unconstrained in auto mode
// (a forced call refuses them with a 400).
#pragma once
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "sampling/constraint.h"
#include "sampling/json_schema.h"
#include "toolcall/parser.h"
#include "toolcall/tools.h"

namespace kvscope::toolcall {

// Each tool's parameters compiled once per request (shared by its choices); tools the schema
// engine refuses are absent.
using CallSchemas = std::map<std::string, std::shared_ptr<const JsonSchema>>;
CallSchemas compile_call_schemas(const ToolSpec& spec);

class AutoCallConstraint final : public TokenConstraint {
 public:
  // pieces: the tokens' bytes as constrained decoding sees them (control tokens empty); marks: each
  // token's text as the tool parser reads it (control tokens such as [TOOL_CALLS] as themselves).
  AutoCallConstraint(std::shared_ptr<const TokenPieces> pieces, std::shared_ptr<const std::vector<std::string>> marks,
                     std::shared_ptr<const CallSchemas> schemas, ToolFormat format);
  bool mask(float* logits, int n_vocab) override;
  void accept(int32_t token) override;
  bool done() const override { return false; }  // the model may write on after its calls

  // The bytes from a call's name to the end of its arguments: the join to the arguments (JSON
  // families), then the schema's cursor; after that any byte.
  struct Tail {
    enum class Ph : uint8_t { Join, Args, Released };
    Ph ph = Ph::Join;
    uint8_t tok = 0;       // Join: 0 ',' 1 the key 2 ':' 3 before the value
    uint8_t pos = 0;       // bytes of the key read
    uint8_t keys = 3;      // keys still possible: 1 "arguments", 2 "parameters"
    uint8_t ws = 0;        // whitespace bytes in the join
    SchemaCursor cur;
    bool push(unsigned char c);
    bool push(std::string_view s) {
      for (unsigned char c : s)
        if (!push(c)) return false;
      return true;
    }
  };

 private:
  const std::string& text_of(int32_t id) const;
  // The tail for a call that has just begun (nullopt: the tool has no schema here). `last`: the byte
  // that made the name known (']' of Mistral's [ARGS]: the arguments come next, no join).
  std::optional<Tail> tail_for(const ToolCallParser& p, unsigned char last) const;
  // Whether a token drawn in free text keeps a call that it names within the schema.
  bool free_token_ok(const std::string& text) const;

  std::shared_ptr<const TokenPieces> pieces_;
  std::shared_ptr<const std::vector<std::string>> marks_;
  std::shared_ptr<const CallSchemas> schemas_;
  std::unique_ptr<ToolCallParser> parser_;  // reads what was drawn, as the exchange's parser does
  std::optional<Tail> tail_;                // inside a call's join or arguments
};

}  // namespace kvscope::toolcall
