// Conversations with tools, rendered as the families' own Jinja templates render them (checked
// against Hugging Face's rendering of Qwen2.5-7B-Instruct, Qwen3-0.6B, Llama-3.1-8B-Instruct and
// Mistral-7B-Instruct-v0.3 in tests/tokenizer/chat_tools_test.cpp).
#include <cctype>
#include <cstdio>

#include "tokenizer/chat_template.h"
#include "tokenizer/chat_tools.h"
#include "util/error.h"
#include "util/hash.h"

namespace kvscope::tok {

using ojson = nlohmann::ordered_json;

namespace {

void py_string(const std::string& s, std::string& out) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void py_dump(const ojson& v, int indent, int level, std::string& out) {
  const auto newline = [&](int l) {
    out += '\n';
    out.append(static_cast<size_t>(indent * l), ' ');
  };
  if (v.is_object() || v.is_array()) {
    const bool obj = v.is_object();
    if (v.empty()) {
      out += obj ? "{}" : "[]";
      return;
    }
    out += obj ? '{' : '[';
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out += indent >= 0 ? "," : ", ";
      first = false;
      if (indent >= 0) newline(level + 1);
      if (obj) {
        py_string(it.key(), out);
        out += ": ";
      }
      py_dump(*it, indent, level + 1, out);
    }
    if (indent >= 0) newline(level);
    out += obj ? '}' : ']';
  } else if (v.is_string()) {
    py_string(v.get<std::string>(), out);
  } else {
    out += v.dump();  // numbers, true, false, null: the same text in both
  }
}

std::string trim(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// A call's arguments as the object they hold; text that is not JSON stays a string.
ojson arguments_of(const ChatToolCall& c) {
  if (c.arguments.empty()) return ojson::object();
  try {
    return ojson::parse(c.arguments);
  } catch (const ojson::exception&) {
    return ojson(c.arguments);
  }
}

// Mistral's templates pair calls and results by ids of exactly 9 letters and digits; other ids (an
// OpenAI client's "call_...") map to 9 characters by their hash, the same for the call and its result.
std::string mistral_id(const std::string& id) {
  bool ok = id.size() == 9;
  for (unsigned char c : id) ok = ok && std::isalnum(c);
  if (ok) return id;
  static const char kAlnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  uint64_t h = util::fnv1a(id);
  std::string out;
  for (int i = 0; i < 9; ++i, h /= 62) out += kAlnum[h % 62];
  return out;
}

const ojson& function_of(const ojson& tool, size_t i) {
  if (!tool.is_object() || !tool.contains("function") || !tool["function"].is_object() || !tool["function"].contains("name") ||
      !tool["function"]["name"].is_string())
    throw InputError("tools[" + std::to_string(i) + "] must be {\"type\": \"function\", \"function\": {\"name\": ...}}");
  return tool["function"];
}

std::string chatml(const std::vector<ChatMessage>& msgs, bool gen, const std::string& level, const ojson* tools) {
  std::string out;
  const bool sys0 = !msgs.empty() && msgs[0].role == "system";
  if (tools) {
    out += "<|im_start|>system\n";
    if (sys0) out += msgs[0].content + "\n\n";
    out += "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function "
           "signatures within <tools></tools> XML tags:\n<tools>";
    for (size_t i = 0; i < tools->size(); ++i) {
      function_of((*tools)[i], i);
      out += '\n';
      out += py_json((*tools)[i]);
    }
    out += "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
           "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
           "<args-json-object>}\n</tool_call><|im_end|>\n";
  } else if (sys0) {
    out += "<|im_start|>system\n" + msgs[0].content + "<|im_end|>\n";
  }
  for (size_t i = sys0 ? 1 : 0; i < msgs.size(); ++i) {
    const ChatMessage& m = msgs[i];
    if (m.role == "tool") {
      if (i == 0 || msgs[i - 1].role != "tool") out += "<|im_start|>user";
      out += "\n<tool_response>\n" + m.content + "\n</tool_response>";
      if (i + 1 == msgs.size() || msgs[i + 1].role != "tool") out += "<|im_end|>\n";
      continue;
    }
    out += "<|im_start|>" + m.role + "\n" + m.content;
    for (size_t k = 0; k < m.tool_calls.size(); ++k) {
      if (k > 0 || !m.content.empty()) out += "\n";
      out += "<tool_call>\n{\"name\": \"" + m.tool_calls[k].name + "\", \"arguments\": " + py_json(arguments_of(m.tool_calls[k])) +
             "}\n</tool_call>";
    }
    out += "<|im_end|>\n";
  }
  // Models trained with reasoning levels: the level's system turn, as without tools.
  if (gen && !level.empty()) out += "<|im_start|>system\nReasoning: " + level + "<|im_end|>\n";
  if (gen) out += "<|im_start|>assistant\n";
  return out;
}

std::string llama31(const std::vector<ChatMessage>& all, bool gen, const ojson* tools) {
  std::string out;
  size_t at = 0;
  std::string system;
  if (!all.empty() && all[0].role == "system") system = trim(all[at++].content);
  if (tools) {
    out += "<|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\n"
           "Today Date: 26 Jul 2024\n\n" +
           system + "<|eot_id|>";
    // The tools go into the first user turn (the template's default, tools_in_user_message).
    if (at == all.size()) throw InputError("llama3 chat template: tools need a first user message to go into");
    out += "<|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON for a "
           "function call with its proper arguments that best answers the given prompt.\n\nRespond in the format "
           "{\"name\": function name, \"parameters\": dictionary of argument name and its value}.Do not use variables.\n\n";
    for (size_t i = 0; i < tools->size(); ++i) {
      function_of((*tools)[i], i);
      out += py_json((*tools)[i], 4) + "\n\n";
    }
    out += trim(all[at++].content) + "<|eot_id|>";
  } else if (at == 1) {
    out += "<|start_header_id|>system<|end_header_id|>\n\n" + system + "<|eot_id|>";
  }
  for (; at < all.size(); ++at) {
    const ChatMessage& m = all[at];
    if (m.role == "tool") {
      // The template writes string content through tojson (a string is iterable in Jinja): quoted.
      out += "<|start_header_id|>ipython<|end_header_id|>\n\n" + py_json(ojson(m.content)) + "<|eot_id|>";
    } else if (!m.tool_calls.empty()) {
      if (m.tool_calls.size() != 1)
        throw InputError("llama3 chat template: an assistant message carries one tool call (Llama 3.1 makes no parallel calls)");
      out += "<|start_header_id|>assistant<|end_header_id|>\n\n{\"name\": \"" + m.tool_calls[0].name +
             "\", \"parameters\": " + py_json(arguments_of(m.tool_calls[0])) + "}<|eot_id|>";
    } else {
      out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
    }
  }
  if (gen) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

std::string mistral_v03(const std::vector<ChatMessage>& all, const std::string& eos, const ojson* tools) {
  size_t at = 0;
  const bool has_system = !all.empty() && all[0].role == "system";
  const std::string system = has_system ? all[at++].content : "";
  size_t last_user = all.size();
  for (size_t i = at; i < all.size(); ++i)
    if (all[i].role == "user") last_user = i;
  std::string out;
  for (size_t i = at; i < all.size(); ++i) {
    const ChatMessage& m = all[i];
    if (m.role == "user") {
      if (tools && i == last_user) {
        out += "[AVAILABLE_TOOLS] [";
        for (size_t t = 0; t < tools->size(); ++t) {
          out += "{\"type\": \"function\", \"function\": {";
          bool first = true;
          for (const auto& [key, val] : function_of((*tools)[t], t).items()) {
            if (key == "return") continue;
            if (!first) out += ", ";
            first = false;
            // Strings go in as they are (the template does not escape them); other values as JSON.
            out += '"';
            out += key;
            out += "\": ";
            if (val.is_string()) {
              out += '"';
              out += val.get<std::string>();
              out += '"';
            } else {
              out += py_json(val);
            }
          }
          out += "}}";
          out += t + 1 < tools->size() ? ", " : "]";
        }
        out += "[/AVAILABLE_TOOLS]";
      }
      // The system text goes with the user turn only when that turn ends the conversation.
      if (i + 1 == all.size() && has_system) out += "[INST] " + system + "\n\n" + m.content + "[/INST]";
      else out += "[INST] " + m.content + "[/INST]";
    } else if (!m.tool_calls.empty()) {
      out += "[TOOL_CALLS] [";
      for (size_t k = 0; k < m.tool_calls.size(); ++k) {
        ojson fn = ojson::object();
        fn["name"] = m.tool_calls[k].name;
        fn["arguments"] = arguments_of(m.tool_calls[k]);
        std::string j = py_json(fn);
        j.pop_back();
        out += j + ", \"id\": \"" + mistral_id(m.tool_calls[k].id) + "\"}";
        out += k + 1 < m.tool_calls.size() ? ", " : "]" + eos;
      }
    } else if (m.role == "assistant") {
      out += ' ';
      out += trim(m.content);
      out += eos;
    } else if (m.role == "tool") {
      if (m.tool_call_id.empty()) throw InputError("mistral chat template: a tool message needs its tool_call_id");
      out += "[TOOL_RESULTS] {\"content\": " + m.content + ", \"call_id\": \"" + mistral_id(m.tool_call_id) + "\"}[/TOOL_RESULTS]";
    } else {
      throw InputError("mistral chat template: a system message may only open the conversation");
    }
  }
  return out;
}

// Families without a tool format of their own: tools in the system text, calls and results as JSON.
std::vector<ChatMessage> generic_tools(const std::vector<ChatMessage>& msgs, const ojson* tools) {
  std::vector<ChatMessage> out;
  if (tools) {
    std::string text = "You can call these functions:\n";
    for (size_t i = 0; i < tools->size(); ++i) text += py_json(function_of((*tools)[i], i)) + "\n";
    text += "\nTo call functions, answer with only {\"tool_calls\": [{\"name\": <function name>, \"arguments\": "
            "<arguments object>}]}.";
    if (!msgs.empty() && msgs[0].role == "system") out.push_back({"system", msgs[0].content + "\n\n" + text, {}, ""});
    else out.push_back({"system", text, {}, ""});
  }
  for (size_t i = 0; i < msgs.size(); ++i) {
    if (i == 0 && tools && msgs[0].role == "system") continue;
    ChatMessage m = msgs[i];
    if (!m.tool_calls.empty()) {
      ojson calls = ojson::array();
      for (const auto& c : m.tool_calls) {
        ojson one = ojson::object();
        one["name"] = c.name;
        one["arguments"] = arguments_of(c);
        calls.push_back(one);
      }
      ojson wrap = ojson::object();
      wrap["tool_calls"] = calls;
      if (!m.content.empty()) m.content += '\n';
      m.content += py_json(wrap);
      m.tool_calls.clear();
    } else if (m.role == "tool") {
      ojson r = ojson::object();
      r["tool_call_id"] = m.tool_call_id;
      r["content"] = m.content;
      ojson wrap = ojson::object();
      wrap["tool_response"] = r;
      m = ChatMessage{"user", py_json(wrap), {}, ""};
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

std::string py_json(const ojson& v, int indent) {
  std::string out;
  py_dump(v, indent, 0, out);
  return out;
}

bool render_with_tools(ChatFormat f, const std::vector<ChatMessage>& msgs, bool gen, const std::string& eos,
                       const std::string& level, const ojson* tools, std::string* out, std::vector<ChatMessage>* rewritten) {
  if (tools && !tools->is_null() && !tools->is_array()) throw InputError("chat template: tools must be an array");
  if (tools && (tools->is_null() || tools->empty())) tools = nullptr;
  bool toolish = tools != nullptr;
  for (const auto& m : msgs) toolish = toolish || m.role == "tool" || !m.tool_calls.empty();
  if (!toolish) return false;
  switch (f) {
    case ChatFormat::ChatML: *out = chatml(msgs, gen, level, tools); return true;
    case ChatFormat::Llama3: *out = llama31(msgs, gen, tools); return true;
    case ChatFormat::Mistral: *out = mistral_v03(msgs, eos, tools); return true;
    default: *rewritten = generic_tools(msgs, tools); return false;
  }
}

}  // namespace kvscope::tok
