// The Responses API's request and response shapes, translated to and from chat completions.
#include "server/responses.h"

#include <algorithm>
#include <random>
#include <string_view>
#include <utility>
#include <variant>

#include "tokenizer/tokenizer.h"

namespace kvscope::server {

namespace {

std::string random_hex(size_t n) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += digits[rng() & 15];
  return s;
}

ApiError bad(const std::string& message, const std::string& param, const std::string& code = "invalid_value") {
  return invalid_request(message, param, code);
}

std::string text_of(const json& v, const std::string& param) {
  if (!v.is_string()) throw bad("'" + param + "' must be a string", param, "invalid_type");
  std::string s = v.get<std::string>();
  if (!tok::is_valid_utf8(s)) throw bad("'" + param + "' is not valid UTF-8", param);
  return s;
}

// A message item's content: a string, or parts of which only text is served.
std::string content_text(const json& c, const std::string& param) {
  if (c.is_string()) return text_of(c, param);
  if (!c.is_array()) throw bad("'" + param + "' must be a string or an array of content parts", param, "invalid_type");
  std::string out;
  for (size_t k = 0; k < c.size(); ++k) {
    const std::string pp = param + "[" + std::to_string(k) + "]";
    const json& part = c[k];
    if (!part.is_object()) throw bad("'" + pp + "' must be an object", pp, "invalid_type");
    const std::string type = part.value("type", std::string());
    if (type != "input_text" && type != "output_text" && type != "text")
      throw bad("'" + pp + "': content of type '" + type + "' is not supported (only text is served)", pp + ".type",
                "unsupported_parameter");
    if (!part.contains("text")) throw bad("'" + pp + ".text' is required", pp + ".text", "missing_required_parameter");
    out += text_of(part["text"], pp + ".text");
  }
  return out;
}

// input: a string (one user message) or a list of items; messages become chat messages, reasoning
// items a client echoes back are dropped (the chat template re-renders the history), function_call
// items become an assistant message's tool_calls and function_call_output items tool messages.
json parse_input(const json& in) {
  json msgs = json::array();
  if (in.is_string()) {
    msgs.push_back({{"role", "user"}, {"content", text_of(in, "input")}});
    return msgs;
  }
  if (!in.is_array()) throw bad("'input' must be a string or an array of input items", "input", "invalid_type");
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string p = "input[" + std::to_string(i) + "]";
    const json& item = in[i];
    if (!item.is_object()) throw bad("'" + p + "' must be an object", p, "invalid_type");
    const std::string type = item.value("type", std::string("message"));
    if (type == "reasoning") continue;
    auto required_text = [&](const char* k) {
      if (!item.contains(k)) throw bad("'" + p + "." + k + "' is required", p + "." + k, "missing_required_parameter");
      return text_of(item[k], p + "." + k);
    };
    if (type == "function_call") {
      json call = {{"id", required_text("call_id")}, {"type", "function"},
                   {"function", {{"name", required_text("name")}, {"arguments", required_text("arguments")}}}};
      // Consecutive calls are one assistant turn (parallel calls), as chat writes them.
      if (msgs.empty() || msgs.back()["role"] != "assistant" || !msgs.back().contains("tool_calls"))
        msgs.push_back({{"role", "assistant"}, {"content", nullptr}, {"tool_calls", json::array()}});
      msgs.back()["tool_calls"].push_back(std::move(call));
      continue;
    }
    if (type == "function_call_output") {
      const std::string id = required_text("call_id");
      if (!item.contains("output")) throw bad("'" + p + ".output' is required", p + ".output", "missing_required_parameter");
      msgs.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", content_text(item["output"], p + ".output")}});
      continue;
    }
    if (type != "message")
      throw bad("'" + p + "': items of type '" + type + "' are not supported (only message, reasoning, function_call and "
                "function_call_output)", p + ".type", "unsupported_parameter");
    const auto role = item.find("role");
    if (role == item.end() || !role->is_string()) throw bad("'" + p + ".role' must be a string", p + ".role", "invalid_type");
    std::string r = role->get<std::string>();
    if (r == "developer") r = "system";
    if (r != "system" && r != "user" && r != "assistant")
      throw bad("'" + p + ".role' must be user, assistant, system or developer (got '" + r + "')", p + ".role");
    const auto c = item.find("content");
    if (c == item.end()) throw bad("'" + p + ".content' is required", p + ".content", "missing_required_parameter");
    msgs.push_back({{"role", r}, {"content", content_text(*c, p + ".content")}});
  }
  if (msgs.empty()) throw bad("'input' has no message", "input");
  return msgs;
}

const json* field(const json& body, const char* k) {
  auto it = body.find(k);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

std::optional<StoredResponse> ResponseStore::get(uint64_t tenant, const std::string& id) const {
  std::lock_guard lk(mu_);
  auto it = map_.find(id);
  if (it == map_.end() || it->second.first.tenant != tenant) return std::nullopt;
  return it->second.first;
}

void ResponseStore::put(const std::string& id, StoredResponse r) {
  std::lock_guard lk(mu_);
  if (auto it = map_.find(id); it != map_.end()) {
    order_.erase(it->second.second);
    map_.erase(it);
  }
  order_.push_back(id);
  map_.emplace(id, std::make_pair(std::move(r), std::prev(order_.end())));
  while (map_.size() > capacity_) {
    map_.erase(order_.front());
    order_.pop_front();
  }
}

std::optional<StoredResponse> ResponseStore::erase(uint64_t tenant, const std::string& id) {
  std::lock_guard lk(mu_);
  auto it = map_.find(id);
  if (it == map_.end() || it->second.first.tenant != tenant) return std::nullopt;
  StoredResponse r = std::move(it->second.first);
  order_.erase(it->second.second);
  map_.erase(it);
  return r;
}

bool ResponseStore::uses_session(uint64_t tenant, const std::string& session) const {
  std::lock_guard lk(mu_);
  for (const auto& [id, e] : map_)
    if (e.first.tenant == tenant && e.first.session == session) return true;
  return false;
}

size_t ResponseStore::size() const {
  std::lock_guard lk(mu_);
  return map_.size();
}

namespace {

// text.format: plain text, or JSON output on chat's decoder (its response_format; null for text).
nlohmann::ordered_json text_format(const json& body, const nlohmann::ordered_json& ordered, ResponsesCall& c) {
  using ojson = nlohmann::ordered_json;
  ojson response_format;
  if (const json* t = field(body, "text")) {
    if (!t->is_object()) throw bad("'text' must be an object", "text", "invalid_type");
    if (const json* fmt = field(*t, "format")) {
      if (!fmt->is_object()) throw bad("'text.format' must be an object", "text.format", "invalid_type");
      const std::string type = fmt->value("type", std::string("text"));
      if (type == "json_object") {
        response_format = {{"type", "json_object"}};
      } else if (type == "json_schema") {
        const json* schema = field(*fmt, "schema");
        if (!schema || !schema->is_object())
          throw bad("'text.format.schema' must be a JSON schema object", "text.format.schema", "missing_required_parameter");
        ojson js = {{"schema", ordered["text"]["format"]["schema"]}, {"name", fmt->value("name", std::string("response"))}};
        if (const json* st = field(*fmt, "strict")) js["strict"] = *st;
        response_format = {{"type", "json_schema"}, {"json_schema", std::move(js)}};
      } else if (type != "text") {
        throw bad("'text.format.type' must be text, json_object or json_schema (got '" + type + "')", "text.format",
                  "unsupported_parameter");
      }
      c.text_format = *fmt;
    }
  }
  return response_format;
}

// Function tools in chat's shape: {"type":"function","name":..} -> {"type":"function","function":{..}}.
// Chat's parser checks them (names, schemas); other tool types are refused here by name.
void translate_tools(const json& body, const nlohmann::ordered_json& ordered, ResponsesCall& c, nlohmann::ordered_json& chat) {
  using ojson = nlohmann::ordered_json;
  if (const json* t = field(body, "tools")) {
    if (!t->is_array()) throw bad("'tools' must be an array", "tools", "invalid_type");
    ojson tools = ojson::array();
    for (size_t i = 0; i < t->size(); ++i) {
      const json& tool = (*t)[i];
      const std::string p = "tools[" + std::to_string(i) + "]";
      const std::string type = tool.is_object() ? tool.value("type", std::string()) : std::string();
      if (type != "function")
        throw bad("'" + p + "': tools of type '" + type + "' are not supported (only function tools)", p + ".type",
                  "unsupported_parameter");
      ojson fn = ojson::object();
      for (const char* k : {"name", "description", "parameters", "strict"})
        if (field(tool, k)) fn[k] = ordered["tools"][i][k];
      tools.push_back({{"type", "function"}, {"function", std::move(fn)}});
      c.tools.push_back(tool);
    }
    if (!tools.empty()) chat["tools"] = std::move(tools);
  }
  if (const json* tc = field(body, "tool_choice")) {
    c.tool_choice = *tc;
    if (tc->is_object() && tc->value("type", std::string()) == "function" && tc->contains("name"))
      chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", (*tc)["name"]}}}};
    else
      chat["tool_choice"] = *tc;
  }
  if (const json* pt = field(body, "parallel_tool_calls")) {
    chat["parallel_tool_calls"] = *pt;
    if (pt->is_boolean()) c.parallel_tool_calls = pt->get<bool>();
  }
  // The tool fields checked in this API's shape, so their errors name its places (tools[0].name,
  // not chat's tools[0].function.name); chat reads the translation again and finds nothing wrong.
  auto member = [&](const char* k) -> const ojson* {
    auto it = ordered.find(k);
    return it == ordered.end() || it->is_null() ? nullptr : &*it;
  };
  try {
    toolcall::parse_tool_spec(member("tools"), member("tool_choice"), member("parallel_tool_calls"), toolcall::Api::Responses);
  } catch (const toolcall::ToolError& e) {
    throw bad(e.what(), e.param, e.code);
  }
}

}  // namespace

ResponsesCall parse_responses_request(const nlohmann::ordered_json& ordered, const ResponseStore& store, uint64_t tenant) {
  if (!ordered.is_object()) throw invalid_request("the request body must be a JSON object");
  const json body = ordered;  // checked here; schemas are copied from `ordered`, in the client's order
  using ojson = nlohmann::ordered_json;
  ResponsesCall c;
  c.id = "resp_" + random_hex(32);
  ojson response_format = text_format(body, ordered, c);
  if (const json* tr = field(body, "truncation"); tr && *tr != "disabled")
    throw bad("'truncation' is not supported: only \"disabled\" (an over-long input is an error)", "truncation",
              "unsupported_parameter");
  if (const json* b = field(body, "background"); b && b->is_boolean() && b->get<bool>())
    throw bad("'background' is not supported: responses are generated while the request is open", "background",
              "unsupported_parameter");

  ojson chat = ojson::object();
  if (const json* m = field(body, "model")) chat["model"] = *m;
  if (const json* s = field(body, "stream")) {
    if (!s->is_boolean()) throw bad("'stream' must be a boolean", "stream", "invalid_type");
    c.stream = s->get<bool>();
  }
  if (const json* s = field(body, "store")) {
    if (!s->is_boolean()) throw bad("'store' must be a boolean", "store", "invalid_type");
    c.store = s->get<bool>();
  }
  if (const json* p = field(body, "previous_response_id")) {
    c.previous_id = text_of(*p, "previous_response_id");
    const auto prev = store.get(tenant, c.previous_id);
    if (!prev)
      throw ApiError(404, "invalid_request_error", "Previous response with id '" + c.previous_id + "' not found.",
                     "previous_response_id", "previous_response_not_found");
    c.conversation = prev->conversation;
    c.session = prev->session;
  }
  const json* in = field(body, "input");
  if (!in) throw bad("'input' is required", "input", "missing_required_parameter");
  for (auto& m : parse_input(*in)) c.conversation.push_back(std::move(m));

  ojson messages = ojson::array();
  if (const json* ins = field(body, "instructions")) {
    c.instructions = text_of(*ins, "instructions");
    // Instructions apply to this turn only: a follow-up gives its own (OpenAI's rule).
    if (!c.instructions.get<std::string>().empty()) messages.push_back({{"role", "system"}, {"content", c.instructions}});
  }
  for (const auto& m : c.conversation) messages.push_back(ojson(m));
  chat["messages"] = messages;

  if (const json* mo = field(body, "max_output_tokens")) {
    if (!mo->is_number_integer()) throw bad("'max_output_tokens' must be an integer", "max_output_tokens", "invalid_type");
    if (mo->get<int64_t>() < 1) throw bad("'max_output_tokens' must be at least 1", "max_output_tokens");
    c.max_output_tokens = *mo;
    chat["max_tokens"] = *mo;
  }
  for (const char* k : {"temperature", "top_p"}) {
    if (const json* v = field(body, k)) {
      if (!v->is_number()) throw bad(std::string("'") + k + "' must be a number", k, "invalid_type");
      chat[k] = *v;
      (std::string(k) == "temperature" ? c.temperature : c.top_p) = v->get<double>();
    }
  }
  if (const json* r = field(body, "reasoning")) {
    if (!r->is_object()) throw bad("'reasoning' must be an object", "reasoning", "invalid_type");
    if (const json* e = field(*r, "effort")) {
      c.effort = text_of(*e, "reasoning.effort");
      chat["reasoning_effort"] = c.effort;
    }
    if (const json* s = field(*r, "summary")) {
      const std::string v = text_of(*s, "reasoning.summary");
      if (v != "auto" && v != "concise" && v != "detailed")
        throw bad("'reasoning.summary' must be auto, concise or detailed (got '" + v.substr(0, 64) + "')", "reasoning.summary");
      c.summary = v;
    }
  }
  if (const json* md = field(body, "metadata")) {
    if (!md->is_object()) throw bad("'metadata' must be an object", "metadata", "invalid_type");
    if (md->size() > 16) throw bad("'metadata' has at most 16 keys", "metadata");
    for (const auto& [k, v] : md->items())
      if (!v.is_string()) throw bad("'metadata." + k + "' must be a string", "metadata", "invalid_type");
    c.metadata = *md;
  }
  translate_tools(body, ordered, c, chat);
  if (!response_format.is_null()) chat["response_format"] = std::move(response_format);
  // kvscope's own request fields pass through unchanged.
  for (const char* k : {"seed", "top_k", "min_p", "cache_salt", "chat_template_kwargs", "thinking_token_budget",
                        "reasoning_budget", "stop"})
    if (field(body, k)) chat[k] = ordered[k];
  if (c.stream) chat["stream"] = true, chat["stream_options"] = {{"include_usage", true}};
  // A stored chain keeps its KV pinned under one session, so each follow-up computes only its new
  // tokens; without storing there is no follow-up to pin for.
  if (c.store && c.session.empty()) c.session = "resp-" + c.id.substr(5);
  if (c.store) chat["session_id"] = c.session;
  c.chat = std::move(chat);
  return c;
}

// Chat's errors name the fields the Responses API spells otherwise by identity (protocol.h): they
// are worded here as this API's.
ApiError responses_error(const ApiError& e) { return e.in(Api::Responses); }

ResponsesWriter::ResponsesWriter(ResponsesCall call, std::string model, int64_t created)
    : call_(std::move(call)), model_(std::move(model)), created_(created), msg_id_("msg_" + random_hex(32)),
      rs_id_("rs_" + random_hex(32)) {
  response_ = base("in_progress");
}

json ResponsesWriter::base(const std::string& status) const {
  json j = {{"id", call_.id},
            {"object", "response"},
            {"created_at", created_},
            {"status", status},
            {"error", nullptr},
            {"incomplete_details", nullptr},
            {"instructions", call_.instructions},
            {"max_output_tokens", call_.max_output_tokens},
            {"model", model_},
            {"output", json::array()},
            {"parallel_tool_calls", call_.parallel_tool_calls},
            {"previous_response_id", call_.previous_id.empty() ? json(nullptr) : json(call_.previous_id)},
            {"reasoning", {{"effort", call_.effort}, {"summary", call_.summary}}},
            {"store", call_.store},
            {"temperature", call_.temperature},
            {"text", {{"format", call_.text_format}}},
            {"tool_choice", call_.tool_choice},
            {"tools", call_.tools},
            {"top_p", call_.top_p},
            {"truncation", "disabled"},
            {"usage", nullptr},
            {"metadata", call_.metadata.is_null() ? json::object() : call_.metadata}};
  return j;
}

void ResponsesWriter::set_usage(const Usage& u, const json& ext) {
  if (!ext.is_null()) ext_ = ext;
  const int in = u.prompt_tokens, out = u.completion_tokens, reasoning = std::max(0, u.reasoning_tokens);
  int cached = 0;
  if (ext_.is_object()) cached = ext_.value("prompt_tokens_cached", 0);
  usage_ = {{"input_tokens", in},
            {"input_tokens_details", {{"cached_tokens", cached}}},
            {"output_tokens", out},
            {"output_tokens_details", {{"reasoning_tokens", reasoning}}},
            {"total_tokens", in + out}};
}

json ResponsesWriter::from_result(const std::string& reasoning, const std::string& text, FinishReason reason,
                                  const Usage& usage, const json& ext, const std::vector<toolcall::ToolCall>* calls) {
  reasoning_ = reasoning;
  text_ = text;
  finish_reason_ = reason;
  set_usage(usage, ext);
  output_ = json::array();
  if (!reasoning_.empty()) output_.push_back(reasoning_item("completed"));
  const bool any_call = calls && !calls->empty();
  if (!text_.empty() || !any_call)
    output_.push_back({{"id", msg_id_}, {"type", "message"}, {"role", "assistant"}, {"status", finish_reason_ == FinishReason::Length ? "incomplete" : "completed"},
                       {"content", json::array({{{"type", "output_text"}, {"text", text_}, {"annotations", json::array()}, {"logprobs", json::array()}}})}});
  if (any_call)
    for (const auto& c : *calls) {
      calls_.push_back({"fc_" + random_hex(32), c.id, c.name, c.arguments, static_cast<int>(output_.size())});
      output_.push_back(call_item(calls_.back(), "completed"));
    }
  return complete();
}

json& ResponsesWriter::complete() {
  const bool incomplete = finish_reason_ == FinishReason::Length;
  response_ = base(incomplete ? "incomplete" : "completed");
  if (incomplete) response_["incomplete_details"] = {{"reason", "max_output_tokens"}};
  response_["output"] = output_;
  response_["usage"] = usage_;
  if (!ext_.is_null()) response_["kvscope"] = ext_;
  return response_;
}

std::string ResponsesWriter::event(const std::string& type, json fields) {
  fields["type"] = type;
  fields["sequence_number"] = seq_++;
  return "event: " + type + "\ndata: " + dump(fields) + "\n\n";
}

std::string ResponsesWriter::start() {
  std::string out = event("response.created", {{"response", base("in_progress")}});
  out += event("response.in_progress", {{"response", base("in_progress")}});
  return out;
}

// The reasoning item: the text as its content (reasoning_text), and as its one summary part when a
// summary was asked for (kvscope does not shorten it: the summary is the reasoning itself).
json ResponsesWriter::reasoning_item(const char* status) const {
  const bool done = std::string_view(status) == "completed";
  json item = {{"id", rs_id_}, {"type", "reasoning"}, {"summary", json::array()}, {"content", json::array()}, {"status", status}};
  if (done) {
    item["content"].push_back({{"type", "reasoning_text"}, {"text", reasoning_}});
    if (summarize()) item["summary"].push_back({{"type", "summary_text"}, {"text", reasoning_}});
  }
  return item;
}

std::string ResponsesWriter::open_reasoning() {
  rs_open_ = true;
  rs_index_ = n_items_++;
  std::string out = event("response.output_item.added", {{"output_index", rs_index_}, {"item", reasoning_item("in_progress")}});
  out += event("response.content_part.added", {{"item_id", rs_id_}, {"output_index", rs_index_}, {"content_index", 0},
                                               {"part", {{"type", "reasoning_text"}, {"text", ""}}}});
  if (summarize())
    out += event("response.reasoning_summary_part.added", {{"item_id", rs_id_}, {"output_index", rs_index_}, {"summary_index", 0},
                                                           {"part", {{"type", "summary_text"}, {"text", ""}}}});
  return out;
}

std::string ResponsesWriter::close_reasoning() {
  rs_open_ = false;
  const json item = reasoning_item("completed");
  output_.push_back(item);
  std::string out = event("response.reasoning_text.done",
                          {{"item_id", rs_id_}, {"output_index", rs_index_}, {"content_index", 0}, {"text", reasoning_}});
  out += event("response.content_part.done",
               {{"item_id", rs_id_}, {"output_index", rs_index_}, {"content_index", 0}, {"part", item["content"][0]}});
  if (summarize()) {
    out += event("response.reasoning_summary_text.done",
                 {{"item_id", rs_id_}, {"output_index", rs_index_}, {"summary_index", 0}, {"text", reasoning_}});
    out += event("response.reasoning_summary_part.done",
                 {{"item_id", rs_id_}, {"output_index", rs_index_}, {"summary_index", 0}, {"part", item["summary"][0]}});
  }
  out += event("response.output_item.done", {{"output_index", rs_index_}, {"item", item}});
  return out;
}

std::string ResponsesWriter::open_message() {
  msg_open_ = true;
  msg_index_ = n_items_++;
  json item = {{"id", msg_id_}, {"type", "message"}, {"role", "assistant"}, {"status", "in_progress"}, {"content", json::array()}};
  std::string out = event("response.output_item.added", {{"output_index", msg_index_}, {"item", item}});
  out += event("response.content_part.added",
               {{"item_id", msg_id_}, {"output_index", msg_index_}, {"content_index", 0},
                {"part", {{"type", "output_text"}, {"text", ""}, {"annotations", json::array()}, {"logprobs", json::array()}}}});
  return out;
}

std::string ResponsesWriter::close_message() {
  msg_open_ = false;
  const json part = {{"type", "output_text"}, {"text", text_}, {"annotations", json::array()}, {"logprobs", json::array()}};
  const json item = {{"id", msg_id_}, {"type", "message"}, {"role", "assistant"},
                     {"status", finish_reason_ == FinishReason::Length ? "incomplete" : "completed"}, {"content", json::array({part})}};
  output_.push_back(item);
  std::string out = event("response.output_text.done", {{"item_id", msg_id_}, {"output_index", msg_index_}, {"content_index", 0},
                                                        {"text", text_}, {"logprobs", json::array()}});
  out += event("response.content_part.done", {{"item_id", msg_id_}, {"output_index", msg_index_}, {"content_index", 0}, {"part", part}});
  out += event("response.output_item.done", {{"output_index", msg_index_}, {"item", item}});
  return out;
}

json ResponsesWriter::call_item(const Call& c, const char* status) {
  return {{"id", c.item_id}, {"type", "function_call"}, {"status", status}, {"arguments", c.arguments},
          {"call_id", c.call_id}, {"name", c.name}};
}

std::string ResponsesWriter::close_calls() {
  std::string out;
  for (auto& c : calls_) {
    if (!c.open) continue;
    c.open = false;
    const json item = call_item(c, "completed");
    output_.push_back(item);
    out += event("response.function_call_arguments.done",
                 {{"item_id", c.item_id}, {"output_index", c.output_index}, {"arguments", c.arguments}});
    out += event("response.output_item.done", {{"output_index", c.output_index}, {"item", item}});
  }
  return out;
}

std::string ResponsesWriter::on_event(const serving::Event& ev, const json& ext) {
  std::string out;
  if (const auto* tc = std::get_if<serving::ToolCallDelta>(&ev)) {
    // A call's first piece opens its function_call item (after any text before it); the rest are
    // argument deltas.
    if (tc->index >= static_cast<int>(calls_.size())) {
      if (rs_open_) out += close_reasoning();
      if (msg_open_) out += close_message();
      calls_.push_back({"fc_" + random_hex(32), tc->id, tc->name, "", n_items_++});
      calls_.back().open = true;
      out += event("response.output_item.added", {{"output_index", calls_.back().output_index}, {"item", call_item(calls_.back(), "in_progress")}});
    }
    Call& c = calls_[static_cast<size_t>(std::min<int>(tc->index, static_cast<int>(calls_.size()) - 1))];
    if (!tc->arguments.empty()) {
      c.arguments += tc->arguments;
      out += event("response.function_call_arguments.delta",
                   {{"item_id", c.item_id}, {"output_index", c.output_index}, {"delta", tc->arguments}});
    }
    return out;
  }
  if (const auto* r = std::get_if<serving::ReasoningDelta>(&ev); r && !r->text.empty()) {
    if (!rs_open_) out += open_reasoning();
    reasoning_ += r->text;
    out += event("response.reasoning_text.delta",
                 {{"item_id", rs_id_}, {"output_index", rs_index_}, {"content_index", 0}, {"delta", r->text}});
    if (summarize())
      out += event("response.reasoning_summary_text.delta",
                   {{"item_id", rs_id_}, {"output_index", rs_index_}, {"summary_index", 0}, {"delta", r->text}});
  } else if (const auto* t = std::get_if<serving::ContentDelta>(&ev); t && !t->text.empty()) {
    if (rs_open_) out += close_reasoning();
    if (!msg_open_) out += open_message();
    text_ += t->text;
    out += event("response.output_text.delta", {{"item_id", msg_id_}, {"output_index", msg_index_}, {"content_index", 0},
                                                {"delta", t->text}, {"logprobs", json::array()}});
  } else if (const auto* f = std::get_if<serving::Finished>(&ev)) {
    finish_reason_ = f->reason;
    set_usage(f->usage, ext);
  }
  return out;
}

std::string ResponsesWriter::finish() {
  std::string out;
  if (rs_open_) out += close_reasoning();
  // An empty answer is still one message; an answer that only calls tools has none.
  if (!msg_open_ && msg_index_ < 0 && calls_.empty()) out += open_message();
  if (msg_open_) out += close_message();
  out += close_calls();
  const json& r = complete();
  out += event(finish_reason_ == FinishReason::Length ? "response.incomplete" : "response.completed", {{"response", r}});
  return out;
}

json ResponsesWriter::conversation() const {
  json c = call_.conversation;
  json turn = {{"role", "assistant"}, {"content", text_}};
  // The calls, so a follow-up's function_call_output items answer them in the history.
  if (!calls_.empty()) {
    turn["tool_calls"] = json::array();
    for (const auto& k : calls_)
      turn["tool_calls"].push_back({{"id", k.call_id}, {"type", "function"}, {"function", {{"name", k.name}, {"arguments", k.arguments}}}});
  }
  c.push_back(std::move(turn));
  return c;
}

}  // namespace kvscope::server
