// Chat templates for the common model families, recognised from tokenizer.chat_template (or named).
#pragma once
#include <string>
#include <vector>

namespace kvscope::tok {

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
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
std::string apply_chat_template(ChatFormat f, const std::vector<ChatMessage>& msgs, bool add_generation_prompt,
                                const std::string& bos_text, const std::string& eos_text,
                                const std::string& reasoning_level = "");

}  // namespace kvscope::tok
