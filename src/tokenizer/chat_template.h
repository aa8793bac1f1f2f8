// Chat templates for the common model families, recognised from tokenizer.chat_template (or named).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvscope::tok {

// A call an assistant message made (OpenAI's message.tool_calls[i]).
struct ChatToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text; rendered as the object it holds (as vLLM and llama.cpp pass it)
};

struct ChatMessage {
  ChatMessage() = default;
  ChatMessage(std::string r, std::string c, std::vector<ChatToolCall> calls = {}, std::string call_id = "")
      : role(std::move(r)), content(std::move(c)), tool_calls(std::move(calls)), tool_call_id(std::move(call_id)) {}
  std::string role;  // system | user | assistant | tool
  std::string content;
  std::vector<ChatToolCall> tool_calls;  // assistant
  std::string tool_call_id;              // tool: the call this is the result of
};

enum class ChatFormat { Llama2, Llama3, ChatML, Mistral, Zephyr, Gemma, Phi3, DeepSeek, Harmony };

// Identifies the family from a Jinja template's text; throws InputError("unknown chat template: ...")
// quoting the start of the template when no family matches.
ChatFormat detect_chat_format(const std::string& jinja_template);
// "llama2","llama3","chatml","mistral","zephyr","gemma","phi3","deepseek" (DeepSeek-V3/R1),
// "harmony" (gpt-oss)
ChatFormat chat_format_from_name(const std::string& name);
const char* chat_format_name(ChatFormat f);

// Renders messages to a prompt string (special tokens as text, to be encoded with parse_special).
// add_generation_prompt appends the assistant header. reasoning_level: the "Reasoning:" line of a
// system message: harmony's (low|medium|high; "" = medium), and ChatML's for models trained with
// levels (a system turn after the conversation, before the assistant header; "" = none); others
// ignore it.
// tools: the request's function tools in chat's shape ([{"type":"function","function":{...}}], the
// template's `tools` variable); null or empty: none. With tools, tool calls or tool results, ChatML
// renders as Qwen2.5 / Qwen3 do (<tools> in the system turn, <tool_call> and <tool_response>), Llama3
// as Llama 3.1 does (tools in the first user turn, the ipython role), Mistral as Mistral 7B Instruct
// v0.3 does ([AVAILABLE_TOOLS], [TOOL_CALLS], [TOOL_RESULTS]); the other families get the tools as
// JSON in the system text, calls as {"tool_calls": [...]} and results as user turns (the generic
// format of toolcall/parser.h). docs/tool-calling.md lists the differences from the real templates.
std::string apply_chat_template(ChatFormat f, const std::vector<ChatMessage>& msgs, bool add_generation_prompt,
                                const std::string& bos_text, const std::string& eos_text,
                                const std::string& reasoning_level = "", const nlohmann::ordered_json* tools = nullptr);

// JSON text as Python's json.dumps(v, ensure_ascii=False) writes it (", " and ": " between items, or
// one item a line under `indent`): Hugging Face templates' `tojson`, which tool prompts are written in.
std::string py_json(const nlohmann::ordered_json& v, int indent = -1);

}  // namespace kvscope::tok
