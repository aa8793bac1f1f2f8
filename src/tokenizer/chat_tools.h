// Internal to the tokenizer module: the tool-aware renderings behind apply_chat_template.
#pragma once
#include <string>
#include <vector>

#include "tokenizer/chat_template.h"

namespace kvscope::tok {

// For a conversation with tools, tool calls or tool results: ChatML, Llama3 and Mistral render it
// whole into *out (true); other families get *rewritten, the same conversation with the tools in the
// system text and calls and results as JSON, to render as usual (false). A conversation without any
// of them: false, nothing written.
bool render_with_tools(ChatFormat f, const std::vector<ChatMessage>& msgs, bool add_generation_prompt, const std::string& eos,
                       const std::string& reasoning_level, const nlohmann::ordered_json* tools, std::string* out,
                       std::vector<ChatMessage>* rewritten);

}  // namespace kvscope::tok
