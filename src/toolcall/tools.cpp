#include "toolcall/tools.h"

#include <cctype>

namespace kvscope::toolcall {

using ojson = nlohmann::ordered_json;

namespace {

[[noreturn]] void fail(const std::string& param, const std::string& what, const char* code = "invalid_value") {
  throw ToolError("Invalid '" + param + "': " + what, param, code);
}

bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (unsigned char c : n)
    if (!(std::isalnum(c) || c == '_' || c == '-')) return false;
  return true;
}

std::string checked_name(const ojson& v, const std::string& param) {
  if (!v.is_string()) fail(param, "expected a string", "invalid_type");
  const std::string n = v.get<std::string>();
  if (!valid_name(n)) fail(param, "'" + n.substr(0, 80) + "' is not a function name (1 to 64 of a-z, A-Z, 0-9, _ and -)");
  return n;
}

FunctionTool read_function(const ojson& f, const std::string& p) {
  if (!f.is_object()) fail(p, "expected an object", "invalid_type");
  FunctionTool t;
  if (!f.contains("name")) fail(p + ".name", "a function needs a name", "missing_required_parameter");
  t.name = checked_name(f["name"], p + ".name");
  if (f.contains("description") && !f["description"].is_null()) {
    if (!f["description"].is_string()) fail(p + ".description", "expected a string", "invalid_type");
    t.description = f["description"].get<std::string>();
  }
  if (f.contains("parameters") && !f["parameters"].is_null()) {
    if (!f["parameters"].is_object()) fail(p + ".parameters", "expected a JSON schema object", "invalid_type");
    t.parameters = f["parameters"];
  } else {
    t.parameters = ojson{{"type", "object"}, {"properties", ojson::object()}};
  }
  if (f.contains("strict") && !f["strict"].is_null()) {
    if (!f["strict"].is_boolean()) fail(p + ".strict", "expected a boolean", "invalid_type");
    t.strict = f["strict"].get<bool>();
  }
  return t;
}

}  // namespace

const FunctionTool* ToolSpec::find(const std::string& name) const {
  for (const auto& t : tools)
    if (t.name == name) return &t;
  return nullptr;
}

ToolSpec parse_tool_spec(const ojson* tools, const ojson* choice, const ojson* parallel, Api api) {
  ToolSpec s;
  if (tools && !tools->is_null()) {
    if (!tools->is_array()) fail("tools", "expected an array of tools", "invalid_type");
    for (size_t i = 0; i < tools->size(); ++i) {
      const std::string p = "tools[" + std::to_string(i) + "]";
      const ojson& t = (*tools)[i];
      if (!t.is_object()) fail(p, "expected an object", "invalid_type");
      if (!t.contains("type")) fail(p + ".type", "a tool needs a type", "missing_required_parameter");
      if (!t["type"].is_string()) fail(p + ".type", "expected a string", "invalid_type");
      const std::string type = t["type"].get<std::string>();
      if (type != "function")
        fail(p + ".type", "tool type '" + type.substr(0, 40) + "' is not supported (only 'function' tools are served)");
      FunctionTool f;
      if (api == Api::Chat) {
        if (!t.contains("function")) fail(p + ".function", "a function tool needs 'function'", "missing_required_parameter");
        f = read_function(t["function"], p + ".function");
      } else {
        f = read_function(t, p);
      }
      if (s.find(f.name)) fail(p + ".name", "function '" + f.name + "' is given twice");
      ojson fn = {{"name", f.name}};
      if (!f.description.empty()) fn["description"] = f.description;
      fn["parameters"] = f.parameters;
      s.template_tools.push_back(ojson{{"type", "function"}, {"function", fn}});
      s.tools.push_back(std::move(f));
    }
  }
  if (choice && !choice->is_null()) {
    if (choice->is_string()) {
      const std::string c = choice->get<std::string>();
      if (c == "auto") s.choice = ChoiceKind::Auto;
      else if (c == "none") s.choice = ChoiceKind::None;
      else if (c == "required") s.choice = ChoiceKind::Required;
      else fail("tool_choice", "'" + c.substr(0, 40) + "' (expected none, auto, required or a function)");
    } else if (choice->is_object()) {
      const std::string type = choice->contains("type") && (*choice)["type"].is_string() ? (*choice)["type"].get<std::string>() : "";
      if (type.empty()) fail("tool_choice.type", "expected 'function'");
      if (type != "function") fail("tool_choice.type", std::string("'").append(type.substr(0, 40)).append("' is not supported (only 'function')"));
      const ojson* holder = choice;
      std::string p = "tool_choice";
      if (api == Api::Chat) {
        if (!choice->contains("function") || !(*choice)["function"].is_object())
          fail("tool_choice.function", "expected {\"name\": ...}", "missing_required_parameter");
        holder = &(*choice)["function"];
        p += ".function";
      }
      if (!holder->contains("name")) fail(p + ".name", "the function to call needs a name", "missing_required_parameter");
      s.choice_name = checked_name((*holder)["name"], p + ".name");
      s.choice = ChoiceKind::Function;
    } else {
      fail("tool_choice", "expected a string or an object", "invalid_type");
    }
    if (s.forced() && s.tools.empty()) fail("tool_choice", "'" + std::string(s.choice == ChoiceKind::Required ? "required" : s.choice_name) + "' needs 'tools'");
    if (s.choice == ChoiceKind::Function && !s.find(s.choice_name))
      fail(api == Api::Chat ? "tool_choice.function.name" : "tool_choice.name", "no tool is named '" + s.choice_name + "'");
  }
  if (parallel && !parallel->is_null()) {
    if (!parallel->is_boolean()) fail("parallel_tool_calls", "expected a boolean", "invalid_type");
    s.parallel = parallel->get<bool>();
  }
  return s;
}

}  // namespace kvscope::toolcall
