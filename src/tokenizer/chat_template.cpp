// Chat prompt formats, rendered the way llama.cpp's built-in templates render them (the BOS at the
// very start is left to the tokenizer's add_bos).
#include "tokenizer/chat_template.h"

#include "tokenizer/chat_tools.h"

#include "util/error.h"

namespace kvscope::tok {
namespace {

bool has(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

std::string trim(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

}  // namespace

ChatFormat detect_chat_format(const std::string& t) {
  if (has(t, "<|channel|>") && has(t, "<|start|>")) return ChatFormat::Harmony;
  if (has(t, "\xef\xbd\x9c" "User\xef\xbd\x9c")) return ChatFormat::DeepSeek;  // <｜User｜>
  if (has(t, "<|im_start|>")) return ChatFormat::ChatML;
  if (has(t, "<|start_header_id|>") && has(t, "<|end_header_id|>")) return ChatFormat::Llama3;
  if (t.rfind("mistral", 0) == 0 || has(t, "[INST]")) {
    if (has(t, "<<SYS>>")) return ChatFormat::Llama2;
    if (has(t, "[AVAILABLE_TOOLS]") || has(t, "system_message") || t.rfind("mistral", 0) == 0)
      return ChatFormat::Mistral;
    // Llama 2 templates without a system block and plain Mistral v0.1 both render [INST] ... [/INST].
    return has(t, "bos_token + '[INST]") ? ChatFormat::Llama2 : ChatFormat::Mistral;
  }
  if (has(t, "<start_of_turn>")) return ChatFormat::Gemma;  // gemma, gemma2, gemma3
  if (has(t, "<|assistant|>") && has(t, "<|end|>")) return ChatFormat::Phi3;
  if (has(t, "<|user|>") && !has(t, "<|end|>") && (has(t, "<|assistant|>") || has(t, "<|endoftext|>")))
    return ChatFormat::Zephyr;
  throw InputError("unknown chat template: " + t.substr(0, 60));
}

ChatFormat chat_format_from_name(const std::string& name) {
  if (name == "llama2") return ChatFormat::Llama2;
  if (name == "llama3") return ChatFormat::Llama3;
  if (name == "chatml") return ChatFormat::ChatML;
  if (name == "mistral") return ChatFormat::Mistral;
  if (name == "zephyr") return ChatFormat::Zephyr;
  if (name == "gemma") return ChatFormat::Gemma;
  if (name == "phi3") return ChatFormat::Phi3;
  if (name == "deepseek") return ChatFormat::DeepSeek;
  if (name == "harmony") return ChatFormat::Harmony;
  throw InputError("unknown chat format '" + name +
                   "' (known: llama2, llama3, chatml, mistral, zephyr, gemma, phi3, deepseek, harmony)");
}

const char* chat_format_name(ChatFormat f) {
  switch (f) {
    case ChatFormat::Llama2: return "llama2";
    case ChatFormat::Llama3: return "llama3";
    case ChatFormat::ChatML: return "chatml";
    case ChatFormat::Mistral: return "mistral";
    case ChatFormat::Zephyr: return "zephyr";
    case ChatFormat::Gemma: return "gemma";
    case ChatFormat::Phi3: return "phi3";
    case ChatFormat::DeepSeek: return "deepseek";
    case ChatFormat::Harmony: return "harmony";
  }
  return "?";
}

std::string apply_chat_template(ChatFormat f, const std::vector<ChatMessage>& msgs, bool add_generation_prompt,
                                const std::string& bos_text, const std::string& eos_text,
                                const std::string& reasoning_level, const nlohmann::ordered_json* tools) {
  for (const auto& m : msgs)
    if (m.role != "system" && m.role != "user" && m.role != "assistant" && m.role != "tool")
      throw InputError("unknown chat role '" + m.role + "' (expected system, user, assistant or tool)");
  const std::string eos = eos_text.empty() ? "</s>" : eos_text;
  std::string out;
  std::vector<ChatMessage> rewritten;
  if (render_with_tools(f, msgs, add_generation_prompt, eos, reasoning_level, tools, &out, &rewritten)) return out;
  if (!rewritten.empty())
    return apply_chat_template(f, rewritten, add_generation_prompt, bos_text, eos_text, reasoning_level, nullptr);
  switch (f) {
    case ChatFormat::ChatML:
      for (const auto& m : msgs) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      // Models trained with levels: a system message with the level after the conversation, so
      // that the conversation's KV is the same under every level.
      if (add_generation_prompt && !reasoning_level.empty())
        out += "<|im_start|>system\nReasoning: " + reasoning_level + "<|im_end|>\n";
      if (add_generation_prompt) out += "<|im_start|>assistant\n";
      break;
    case ChatFormat::Llama3:
      for (const auto& m : msgs)
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
      if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      break;
    case ChatFormat::Llama2: {
      // [INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST]{assistant}</s><s>[INST] {user} [/INST]
      bool inside = true;
      out += "[INST] ";
      for (const auto& m : msgs) {
        if (!inside) {
          inside = true;
          out += bos_text + "[INST] ";
        }
        if (m.role == "system") out += "<<SYS>>\n" + m.content + "\n<</SYS>>\n\n";
        else if (m.role == "user") out += m.content + " [/INST]";
        else {
          out += m.content + eos;
          inside = false;
        }
      }
      break;
    }
    case ChatFormat::Mistral: {
      // v3 style: [INST] {system}\n\n{user}[/INST] {assistant}</s>
      bool inside = false;
      for (const auto& m : msgs) {
        if (!inside) {
          out += "[INST] ";
          inside = true;
        }
        if (m.role == "system") out += m.content + "\n\n";
        else if (m.role == "user") out += m.content + "[/INST]";
        else {
          out += ' ';
          out += trim(m.content);
          out += eos;
          inside = false;
        }
      }
      break;
    }
    case ChatFormat::Zephyr:
      for (const auto& m : msgs) out += "<|" + m.role + "|>\n" + m.content + eos + "\n";
      if (add_generation_prompt) out += "<|assistant|>\n";
      break;
    case ChatFormat::Gemma: {
      // Gemma has no system turn: the system text opens the next user turn. The assistant is "model".
      std::string sys;
      for (const auto& m : msgs) {
        if (m.role == "system") {
          sys += trim(m.content);
          continue;
        }
        const bool model = m.role == "assistant";
        out += std::string("<start_of_turn>") + (model ? "model" : "user") + "\n";
        if (!model && !sys.empty()) {
          out += sys + "\n\n";
          sys.clear();
        }
        out += trim(m.content) + "<end_of_turn>\n";
      }
      if (add_generation_prompt) out += "<start_of_turn>model\n";
      break;
    }
    case ChatFormat::Phi3:
      for (const auto& m : msgs) out += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
      if (add_generation_prompt) out += "<|assistant|>\n";
      break;
    case ChatFormat::DeepSeek: {
      // {system}<｜User｜>{user}<｜Assistant｜>{assistant}<｜end▁of▁sentence｜>
      const std::string user = "\xef\xbd\x9c" "User\xef\xbd\x9c", asst = "\xef\xbd\x9c" "Assistant\xef\xbd\x9c";
      for (const auto& m : msgs) {
        if (m.role == "system") out += m.content;
        else if (m.role == "user") out += "<" + user + ">" + m.content;
        else out += "<" + asst + ">" + m.content + eos;
      }
      if (add_generation_prompt) out += "<" + asst + ">";
      break;
    }
    case ChatFormat::Harmony: {
      // gpt-oss: the system message carries the reasoning level; the caller's system text is the
      // developer's instructions; the assistant's earlier answers are final-channel messages.
      out += "<|start|>system<|message|>Reasoning: " + (reasoning_level.empty() ? std::string("medium") : reasoning_level) +
             "\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>";
      for (const auto& m : msgs) {
        if (m.role == "system") out += "<|start|>developer<|message|># Instructions\n\n" + m.content + "<|end|>";
        else if (m.role == "user") out += "<|start|>user<|message|>" + m.content + "<|end|>";
        else out += "<|start|>assistant<|channel|>final<|message|>" + m.content + "<|end|>";
      }
      if (add_generation_prompt) out += "<|start|>assistant";
      break;
    }
  }
  return out;
}

}  // namespace kvscope::tok
