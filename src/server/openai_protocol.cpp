#include "server/protocol.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace kvscope::server {

ApiError invalid_request(const std::string& message, const std::string& param, const std::string& code) {
  return ApiError(400, "invalid_request_error", message, param, code);
}

ApiError invalid_request(FieldText message, FieldRef param, const std::string& code) {
  return ApiError(400, "invalid_request_error", std::move(message), std::move(param), code);
}

const char* field_name(Field f, Api api) {
  const bool r = api == Api::Responses;
  switch (f) {
    case Field::Messages: return r ? "input" : "messages";
    case Field::MaxTokens: return r ? "max_output_tokens" : "max_tokens";
    case Field::MaxCompletionTokens: return r ? "max_output_tokens" : "max_completion_tokens";
    case Field::ResponseFormat: return r ? "text.format" : "response_format";
    case Field::ReasoningEffort: return r ? "reasoning.effort" : "reasoning_effort";
  }
  return "?";
}

std::optional<Field> field_of_key(std::string_view key) {
  for (Field f : {Field::Messages, Field::MaxTokens, Field::MaxCompletionTokens, Field::ResponseFormat, Field::ReasoningEffort})
    if (key == field_name(f, Api::Chat)) return f;
  return std::nullopt;
}

std::string FieldRef::in(Api api) const {
  std::string s = field_name(field, api);
  if (api == Api::Chat) s += path;
  return quoted ? "'" + s + "'" : s;
}

std::string FieldText::in(Api api) const {
  std::string out;
  for (const auto& p : parts_) {
    if (const auto* s = std::get_if<std::string>(&p)) out += *s;
    else out += std::get<FieldRef>(p).in(api);
  }
  return out;
}

ApiError ApiError::in(Api api) const {
  if (!words_) return *this;
  return ApiError(status, type, words_->in(api), field_ ? field_->param(api) : param, code);
}

json error_body(const ApiError& e) {
  auto opt = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  return {{"error", {{"message", e.what()}, {"type", e.type}, {"param", opt(e.param)}, {"code", opt(e.code)}}}};
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

const char* endpoint_name(Endpoint e) { return e == Endpoint::Chat ? "chat.completions" : "completions"; }

namespace {

// Typed field access: absent and null both mean "not given"; a wrong type is a 400 naming the field.
class Fields {
 public:
  explicit Fields(const json& j) : j_(j) {}
  const json* get(const char* k) const {
    auto it = j_.find(k);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  bool has(const char* k) const { return get(k) != nullptr; }

  std::string str(const char* k, const std::string& dflt = "") const {
    const json* v = get(k);
    if (!v) return dflt;
    if (!v->is_string()) throw fail(k, " must be a string", "invalid_type");
    return v->get<std::string>();
  }
  bool boolean(const char* k, bool dflt) const {
    const json* v = get(k);
    if (!v) return dflt;
    if (!v->is_boolean()) throw fail(k, " must be a boolean", "invalid_type");
    return v->get<bool>();
  }
  double number(const char* k, double dflt, double lo, double hi) const {
    const json* v = get(k);
    if (!v) return dflt;
    if (!v->is_number()) throw fail(k, " must be a number", "invalid_type");
    const double d = v->get<double>();
    if (!(d >= lo && d <= hi))
      throw fail(k, " must be between " + fmt(lo) + " and " + fmt(hi), "invalid_value");
    return d;
  }
  int64_t integer(const char* k, int64_t dflt, int64_t lo, int64_t hi) const {
    const json* v = get(k);
    if (!v) return dflt;
    if (!v->is_number_integer()) throw fail(k, " must be an integer", "invalid_type");
    // Unsigned values above INT64_MAX read as negative through get<int64_t>; compare as unsigned.
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi))
      throw fail(k, " must be between " + std::to_string(lo) + " and " + std::to_string(hi), "invalid_value");
    const int64_t i = v->get<int64_t>();
    if (i < lo || i > hi)
      throw fail(k, " must be between " + std::to_string(lo) + " and " + std::to_string(hi), "invalid_value");
    return i;
  }

  // A 400 about key k: worded per API when k is a field the APIs spell differently.
  static ApiError fail(const char* k, const std::string& rest, const char* code) {
    if (const auto fld = field_of_key(k)) return invalid_request(FieldText(quoted(*fld)) + rest, named(*fld), code);
    return invalid_request(std::string("'") + k + "'" + rest, k, code);
  }

 private:
  static std::string fmt(double d) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", d);
    return b;
  }
  const json& j_;
};

// Every string that reaches the tokenizer is checked again here, whatever the JSON parser did.
std::string checked_text(const json& v, const std::string& param) {
  std::string s = v.get<std::string>();
  if (!tok::is_valid_utf8(s)) throw invalid_request("'" + param + "' is not valid UTF-8", param, "invalid_encoding");
  return s;
}

// OpenAI's {"token id": bias} with biases in [-100, 100], or llama.cpp's [[id, bias], ...] where
// false bans the token. Ids are checked against the vocabulary once the model is known.
void parse_logit_bias(const json& lb, std::vector<std::pair<int32_t, float>>& out) {
  auto bad = [](const std::string& why) { return invalid_request("'logit_bias' " + why, "logit_bias", "invalid_value"); };
  auto id_of = [&](const json& k) -> int32_t {
    int64_t id = -1;
    if (k.is_number_integer()) {
      id = k.get<int64_t>();
    } else if (k.is_string()) {
      const std::string t = k.get<std::string>();
      if (t.empty() || t.size() > 10 || t.find_first_not_of("0123456789") != std::string::npos)
        throw bad("keys must be token ids (got '" + t.substr(0, 32) + "')");
      id = std::stoll(t);
    } else {
      throw bad("ids must be integers");
    }
    if (id < 0 || id > INT32_MAX) throw bad("token id " + std::to_string(id) + " is out of range");
    return static_cast<int32_t>(id);
  };
  auto bias_of = [&](const json& v) -> float {
    if (v.is_boolean() && !v.get<bool>()) return -std::numeric_limits<float>::infinity();
    if (!v.is_number()) throw bad("values must be numbers between -100 and 100");
    const double b = v.get<double>();
    if (!(b >= -100 && b <= 100)) throw bad("values must be between -100 and 100");
    return static_cast<float>(b);
  };
  if (lb.size() > 4096) throw bad("has more than 4096 entries");
  if (lb.is_object()) {
    for (const auto& [k, v] : lb.items()) out.emplace_back(id_of(json(k)), bias_of(v));
  } else if (lb.is_array()) {
    for (const auto& e : lb) {
      if (!e.is_array() || e.size() != 2) throw bad("as an array holds [token id, bias] pairs");
      out.emplace_back(id_of(e[0]), bias_of(e[1]));
    }
  } else {
    throw invalid_request("'logit_bias' must be an object of token id to bias", "logit_bias", "invalid_type");
  }
}

void reject_unsupported(const Fields& f, Endpoint e) {
  auto unsupported = [](const char* k, const std::string& why) {
    throw invalid_request(std::string("'") + k + "' is not supported: " + why, k, "unsupported_parameter");
  };
  if (e == Endpoint::Completions) {
    if (f.integer("best_of", 1, INT32_MIN, INT32_MAX) != 1) unsupported("best_of", "only best_of=1 is served");
    if (f.boolean("echo", false)) unsupported("echo", "the prompt is not echoed");
    if (f.has("suffix")) unsupported("suffix", "insertion is not implemented");
  } else {
    // The legacy function-calling fields (before `tools`) are not served; `tools` is.
    if (const json* t = f.get("functions"); t && !(t->is_array() && t->empty())) unsupported("functions", "use 'tools'");
    if (f.has("function_call")) unsupported("function_call", "use 'tool_choice'");
  }
}

std::vector<tok::ChatMessage> parse_messages(const json* m) {
  // Every error names messages (or a place in them): the Responses API words it as its input.
  auto bad = [](const std::string& path, const std::string& rest, const char* code) {
    return invalid_request(FieldText(quoted(Field::Messages, path)) + rest, named(Field::Messages, path), code);
  };
  auto text = [&](const json& v, const std::string& path) {
    std::string s = v.get<std::string>();
    if (!tok::is_valid_utf8(s)) throw bad(path, " is not valid UTF-8", "invalid_encoding");
    return s;
  };
  if (!m) throw bad("", " is required", "missing_required_parameter");
  if (!m->is_array()) throw bad("", " must be an array", "invalid_type");
  if (m->empty()) throw bad("", " must not be empty", "invalid_value");
  std::vector<tok::ChatMessage> out;
  for (size_t i = 0; i < m->size(); ++i) {
    const std::string p = "[" + std::to_string(i) + "]";
    const json& msg = (*m)[i];
    if (!msg.is_object()) throw bad(p, " must be an object", "invalid_type");
    auto role = msg.find("role");
    if (role == msg.end() || !role->is_string()) throw bad(p + ".role", " must be a string", "invalid_type");
    std::string r = role->get<std::string>();
    if (r == "developer") r = "system";  // OpenAI's newer name for the system role
    if (r != "system" && r != "user" && r != "assistant" && r != "tool")
      throw bad(p + ".role", " must be system, user, assistant or tool (got '" + r + "')", "invalid_value");
    // An assistant turn that called tools, and the tool results that answer it: the chat template
    // renders both (its tool_calls and tool_call_id).
    std::vector<tok::ChatToolCall> calls;
    if (auto tc = msg.find("tool_calls"); tc != msg.end() && !tc->is_null()) {
      if (r != "assistant") throw bad(p + ".tool_calls", " is only allowed on an assistant message", "invalid_value");
      if (!tc->is_array()) throw bad(p + ".tool_calls", " must be an array", "invalid_type");
      for (size_t k = 0; k < tc->size(); ++k) {
        const json& call = (*tc)[k];
        const std::string cp = p + ".tool_calls[" + std::to_string(k) + "]";
        const json* fn = call.is_object() && call.contains("function") ? &call["function"] : nullptr;
        if (!fn || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string())
          throw invalid_request(FieldText(quoted(Field::Messages, cp)) +
                                    " must be {\"id\":..,\"type\":\"function\",\"function\":{\"name\":..,\"arguments\":..}}",
                                named(Field::Messages, cp + ".function.name"), "invalid_value");
        tok::ChatToolCall c;
        c.name = text((*fn)["name"], cp + ".function.name");
        if (auto a = fn->find("arguments"); a != fn->end() && !a->is_null()) {
          // Clients send the JSON text; a few send the object itself.
          c.arguments = a->is_string() ? text(*a, cp + ".function.arguments") : a->dump();
          if (!json::accept(c.arguments)) throw bad(cp + ".function.arguments", " must be a JSON text", "invalid_value");
        } else {
          c.arguments = "{}";
        }
        if (auto id = call.find("id"); id != call.end() && id->is_string()) c.id = text(*id, cp + ".id");
        calls.push_back(std::move(c));
      }
    }
    std::string call_id;
    if (r == "tool") {
      auto id = msg.find("tool_call_id");
      if (id == msg.end() || !id->is_string())
        throw bad(p + ".tool_call_id", " is required on a tool message (the id of the call it answers)", "missing_required_parameter");
      call_id = text(*id, p + ".tool_call_id");
    }
    auto c = msg.find("content");
    std::string content;
    if (c == msg.end() || c->is_null()) {
      if (r != "assistant") throw bad(p + ".content", " is required", "missing_required_parameter");
    } else if (c->is_string()) {
      content = text(*c, p + ".content");
    } else if (c->is_array()) {
      // Content parts: text only.
      for (size_t k = 0; k < c->size(); ++k) {
        const json& part = (*c)[k];
        const std::string pp = p + ".content[" + std::to_string(k) + "]";
        if (!part.is_object() || part.value("type", std::string()) != "text" || !part.contains("text") || !part["text"].is_string())
          throw bad(pp, " must be a {\"type\":\"text\",\"text\":...} part (only text is served)", "invalid_value");
        content += text(part["text"], pp + ".text");
      }
    } else {
      throw bad(p + ".content", " must be a string or an array of text parts", "invalid_type");
    }
    out.emplace_back(r, content, std::move(calls), std::move(call_id));
  }
  return out;
}

void parse_prompt(const json* p, GenRequest& g) {
  if (!p) throw invalid_request("'prompt' is required", "prompt", "missing_required_parameter");
  const json* one = p;
  auto token_ids = [](const json& a) {
    std::vector<int32_t> ids;
    if (a.empty()) throw invalid_request("'prompt' must not be empty", "prompt", "invalid_value");
    for (const auto& t : a) {
      if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX)
        throw invalid_request("'prompt' as tokens must be an array of non-negative integers", "prompt", "invalid_type");
      ids.push_back(static_cast<int32_t>(t.get<int64_t>()));
    }
    return ids;
  };
  if (p->is_array()) {
    if (p->empty()) throw invalid_request("'prompt' must not be empty", "prompt", "invalid_value");
    if ((*p)[0].is_number_integer()) {
      g.token_prompt = true;
      g.prompt_tokens = token_ids(*p);
      return;
    }
    if (p->size() > static_cast<size_t>(kMaxPrompts))
      throw invalid_request("'prompt' holds at most " + std::to_string(kMaxPrompts) + " prompts", "prompt", "invalid_value");
    if ((*p)[0].is_array()) {  // several prompts as token ids
      g.token_prompt = true;
      for (size_t i = 0; i < p->size(); ++i) {
        if (!(*p)[i].is_array())
          throw invalid_request("'prompt' must be all strings or all arrays of token ids", "prompt", "invalid_type");
        (i == 0 ? g.prompt_tokens : g.more_prompt_tokens.emplace_back()) = token_ids((*p)[i]);
      }
      return;
    }
    for (size_t i = 1; i < p->size(); ++i) {
      if (!(*p)[i].is_string()) throw invalid_request("'prompt' must be all strings or all arrays of token ids", "prompt", "invalid_type");
      g.more_prompts.push_back(checked_text((*p)[i], "prompt"));
    }
    one = &(*p)[0];
  }
  if (!one->is_string()) throw invalid_request("'prompt' must be a string, an array of strings, an array of token ids or an array of token-id arrays", "prompt", "invalid_type");
  g.prompt = checked_text(*one, "prompt");
}

}  // namespace

std::vector<GenRequest> GenRequest::split_prompts() const {
  std::vector<GenRequest> out;
  GenRequest first = *this;
  first.more_prompts.clear();
  first.more_prompt_tokens.clear();
  out.push_back(first);
  for (const auto& text : more_prompts) {
    out.push_back(first);
    out.back().prompt = text;
  }
  for (const auto& ids : more_prompt_tokens) {
    out.push_back(first);
    out.back().prompt_tokens = ids;
  }
  return out;
}

namespace {

// response_format: JSON output, with or without a schema (compiled later, from the body in order).
void parse_response_format(Fields& f, GenRequest& g) {
  if (const json* rf = f.get("response_format")) {
    if (!rf->is_object() || !rf->contains("type") || !(*rf)["type"].is_string())
      throw invalid_request(FieldText(quoted(Field::ResponseFormat)) + " must be an object with a string 'type'",
                            named(Field::ResponseFormat), "invalid_type");
    const std::string type = (*rf)["type"].get<std::string>();
    if (type == "json_schema") {  // OpenAI's {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}
      const json* js = Fields(*rf).get("json_schema");
      if (!js || !js->is_object() || !js->contains("schema"))
        throw invalid_request(FieldText(quoted(Field::ResponseFormat)) + " json_schema needs a 'json_schema' object with a 'schema'",
                              named(Field::ResponseFormat), "invalid_value");
      g.schema_at = GenRequest::SchemaAt::JsonSchema;
    } else if (type == "json_object") {
      g.json_object = true;
      if (rf->contains("schema")) g.schema_at = GenRequest::SchemaAt::Schema;  // llama.cpp's form
    } else if (type != "text") {
      throw invalid_request(FieldText(quoted(Field::ResponseFormat)) + " type must be text, json_object or json_schema (got '" +
                                type.substr(0, 64) + "')",
                            named(Field::ResponseFormat), "invalid_value");
    }
  }
}

void parse_sampling(Fields& f, SamplingParams& s) {
  // OpenAI's defaults: plain temperature-1 sampling over the full distribution.
  s.temperature = static_cast<float>(f.number("temperature", 1.0, 0.0, 2.0));
  s.top_p = static_cast<float>(f.number("top_p", 1.0, 0.0, 1.0));
  if (s.top_p <= 0) throw invalid_request("'top_p' must be greater than 0", "top_p", "invalid_value");
  s.top_k = static_cast<int>(f.integer("top_k", 0, 0, INT32_MAX));
  s.min_p = static_cast<float>(f.number("min_p", 0.0, 0.0, 1.0));
  s.presence_penalty = static_cast<float>(f.number("presence_penalty", 0.0, -2.0, 2.0));
  s.frequency_penalty = static_cast<float>(f.number("frequency_penalty", 0.0, -2.0, 2.0));
  s.repeat_penalty = static_cast<float>(f.number("repetition_penalty", 1.0, 1e-3, 100.0));
  if (f.has("seed")) {
    s.seed = static_cast<uint64_t>(f.integer("seed", 0, INT64_MIN, INT64_MAX));
  } else {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    s.seed = rng();
  }
  if (const json* lb = f.get("logit_bias")) parse_logit_bias(*lb, s.logit_bias);
  try {
    s.validate();
  } catch (const InputError& err) {
    throw invalid_request(err.what(), "", "invalid_value");
  }
}

// kvscope's "reasoning" mode and the ecosystem's effort, enable_thinking and budget: at most one way.
void parse_reasoning(Fields& f, GenRequest& g) {
  if (const std::string r = f.str("reasoning"); !r.empty() && !(g.reasoning = serving::parse_reasoning_mode(r)))
    throw invalid_request("'reasoning' must be one of auto, fast, mixed, slow (got '" + r + "')", "reasoning",
                          "invalid_value");
  if (g.reasoning && g.token_prompt)
    throw invalid_request("'reasoning' needs a text prompt (the mode line is added to the text)", "reasoning",
                          "invalid_value");
  if (const json* re = f.get("reasoning_effort")) {
    if (!re->is_string())
      throw invalid_request(FieldText(quoted(Field::ReasoningEffort)) + " must be a string", named(Field::ReasoningEffort), "invalid_type");
    g.effort = parse_effort(re->get<std::string>());
    if (!g.effort)
      throw invalid_request(FieldText(quoted(Field::ReasoningEffort)) + " must be one of none, minimal, low, medium, high, auto (got '" +
                                re->get<std::string>() + "')",
                            named(Field::ReasoningEffort), "invalid_value");
  }
  if (const json* kw = f.get("chat_template_kwargs")) {
    if (!kw->is_object()) throw invalid_request("'chat_template_kwargs' must be an object", "chat_template_kwargs", "invalid_type");
    if (const auto it = kw->find("enable_thinking"); it != kw->end() && !it->is_null()) {
      if (!it->is_boolean())
        throw invalid_request("'chat_template_kwargs.enable_thinking' must be a boolean", "chat_template_kwargs", "invalid_type");
      g.enable_thinking = it->get<bool>();
    }
  }
  for (const char* k : {"thinking_token_budget", "reasoning_budget"}) {
    if (!f.has(k)) continue;
    if (g.thinking_budget)
      throw invalid_request("give one of 'thinking_token_budget' and 'reasoning_budget'", k, "invalid_value");
    const int64_t b = f.integer(k, -1, INT64_MIN, INT32_MAX);
    if (b < -1)
      throw invalid_request(std::string("'") + k + "' must be -1 (unbounded), 0 (no thinking) or a positive number of tokens (got " +
                                std::to_string(b) + ")",
                            k, "invalid_value");
    g.thinking_budget = static_cast<int>(b);
  }
  if (g.reasoning && g.reasoning_requested())
    throw ApiError::about("reasoning",
                          FieldText("'reasoning' (kvscope's fast|mixed|slow|auto) cannot be combined with ") +
                              named(Field::ReasoningEffort) + ", enable_thinking or a thinking budget",
                          "invalid_value");
}

}  // namespace

GenRequest parse_gen_request(const json& body, Endpoint e) {
  if (!body.is_object()) throw invalid_request("the request body must be a JSON object");
  Fields f(body);
  GenRequest g;
  g.endpoint = e;
  g.model = f.str("model");
  reject_unsupported(f, e);
  g.n = static_cast<int>(f.integer("n", 1, 1, kMaxChoices));
  parse_response_format(f, g);
  if (e == Endpoint::Chat)
    g.messages = parse_messages(f.get("messages"));
  else
    parse_prompt(f.get("prompt"), g);

  const bool mct = e == Endpoint::Chat && f.has("max_completion_tokens");
  const char* mt = mct ? "max_completion_tokens" : "max_tokens";
  if (f.has(mt)) {
    const int64_t n = f.integer(mt, 0, INT64_MIN, INT64_MAX);
    const Field mf = mct ? Field::MaxCompletionTokens : Field::MaxTokens;
    if (n <= 0) throw invalid_request(FieldText(quoted(mf)) + " must be at least 1", named(mf), "invalid_value");
    g.max_tokens = static_cast<int>(std::min<int64_t>(n, INT32_MAX));  // the context check names it
    g.max_tokens_field = mf;
  }
  parse_sampling(f, g.sampling);

  if (const json* st = f.get("stop")) {
    if (st->is_string()) {
      g.stop.push_back(checked_text(*st, "stop"));
    } else if (st->is_array()) {
      if (st->size() > 16) throw invalid_request("'stop' has at most 16 strings", "stop", "invalid_value");
      for (const auto& x : *st) {
        if (!x.is_string()) throw invalid_request("'stop' must be a string or an array of strings", "stop", "invalid_type");
        g.stop.push_back(checked_text(x, "stop"));
      }
    } else {
      throw invalid_request("'stop' must be a string or an array of strings", "stop", "invalid_type");
    }
  }

  g.stream = f.boolean("stream", false);
  if (const json* so = f.get("stream_options")) {
    if (!so->is_object()) throw invalid_request("'stream_options' must be an object", "stream_options", "invalid_type");
    if (!g.stream) throw invalid_request("'stream_options' is only allowed with stream: true", "stream_options", "invalid_value");
    Fields sf(*so);
    g.include_usage = sf.boolean("include_usage", false);
  }

  if (e == Endpoint::Completions) {
    if (f.has("logprobs")) g.logprobs = static_cast<int>(f.integer("logprobs", 0, 0, 5));
  } else {
    const bool lp = f.boolean("logprobs", false);
    const int top = static_cast<int>(f.integer("top_logprobs", 0, 0, 20));
    if (f.has("top_logprobs") && !lp)
      throw invalid_request("'top_logprobs' requires 'logprobs' to be true", "top_logprobs", "invalid_value");
    if (lp) g.logprobs = top;
  }
  g.session_id = f.str("session_id");
  g.cache_salt = f.str("cache_salt");
  parse_reasoning(f, g);
  if (!tok::is_valid_utf8(g.session_id) || g.session_id.size() > 256)
    throw invalid_request("'session_id' must be valid UTF-8 of at most 256 bytes", "session_id", "invalid_value");
  return g;
}

json usage_json(const Usage& u) {
  json j = {{"prompt_tokens", u.prompt_tokens}, {"completion_tokens", u.completion_tokens}, {"total_tokens", u.prompt_tokens + u.completion_tokens}};
  if (u.reasoning_tokens >= 0) j["completion_tokens_details"] = {{"reasoning_tokens", u.reasoning_tokens}};
  return j;
}

json logprobs_json(Endpoint e, const std::vector<TokenLogprob>& lp, size_t text_offset0) {
  if (e == Endpoint::Chat) {
    auto bytes = [](const std::string& s) {
      json b = json::array();
      for (unsigned char c : s) b.push_back(int(c));
      return b;
    };
    json content = json::array();
    for (const auto& t : lp) {
      json top = json::array();
      for (const auto& [p, l] : t.top) top.push_back({{"token", p}, {"logprob", l}, {"bytes", bytes(p)}});
      content.push_back({{"token", t.piece}, {"logprob", t.logprob}, {"bytes", bytes(t.piece)}, {"top_logprobs", top}});
    }
    return {{"content", content}, {"refusal", nullptr}};
  }
  json tokens = json::array(), lps = json::array(), tops = json::array(), offs = json::array();
  size_t off = text_offset0;
  for (const auto& t : lp) {
    tokens.push_back(t.piece);
    lps.push_back(t.logprob);
    json top = json::object();
    for (const auto& [p, l] : t.top) top[p] = l;  // nlohmann's object keys are exact bytes; dump() repairs invalid ones
    tops.push_back(top);
    offs.push_back(off);
    off += t.piece.size();
  }
  return {{"tokens", tokens}, {"token_logprobs", lps}, {"top_logprobs", tops}, {"text_offset", offs}};
}

json completion_body(Endpoint e, const std::string& id, int64_t created, const std::string& model, const std::string& text,
                     FinishReason finish_reason, const json& logprobs, const Usage& usage, const json& ext,
                     const json* reasoning) {
  const std::string fr(serving::finish_reason_name(finish_reason));
  json choice;
  json j;
  if (e == Endpoint::Chat) {
    json msg = {{"role", "assistant"}, {"content", text}, {"refusal", nullptr}};
    if (reasoning) msg["reasoning_content"] = *reasoning;
    choice = {{"index", 0},
              {"message", msg},
              {"logprobs", logprobs},
              {"finish_reason", fr}};
    j = {{"id", id}, {"object", "chat.completion"}, {"created", created}, {"model", model}};
  } else {
    choice = {{"text", text}, {"index", 0}, {"logprobs", logprobs}, {"finish_reason", fr}};
    j = {{"id", id}, {"object", "text_completion"}, {"created", created}, {"model", model}};
  }
  j["choices"] = json::array({choice});
  j["system_fingerprint"] = "kvscope";
  j["usage"] = usage_json(usage);
  if (!ext.is_null()) j["kvscope"] = ext;
  return j;
}

json chunk_body(Endpoint e, const std::string& id, int64_t created, const std::string& model, const std::string& text,
                std::optional<FinishReason> finish_reason, const json& logprobs, bool first, bool include_usage,
                const json& ext, const std::string& reasoning) {
  const json fr = finish_reason ? json(std::string(serving::finish_reason_name(*finish_reason))) : json(nullptr);
  json choice;
  json j;
  if (e == Endpoint::Chat) {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!reasoning.empty()) delta["reasoning_content"] = reasoning;
    else if (first || !text.empty() || !finish_reason) delta["content"] = text;
    choice = {{"index", 0}, {"delta", delta}, {"logprobs", logprobs}, {"finish_reason", fr}};
    j = {{"id", id}, {"object", "chat.completion.chunk"}, {"created", created}, {"model", model}};
  } else {
    choice = {{"text", text}, {"index", 0}, {"logprobs", logprobs}, {"finish_reason", fr}};
    j = {{"id", id}, {"object", "text_completion"}, {"created", created}, {"model", model}};
  }
  j["system_fingerprint"] = "kvscope";
  j["choices"] = json::array({choice});
  if (include_usage) j["usage"] = nullptr;  // as OpenAI: every chunk carries usage: null, the last one the counts
  if (!ext.is_null()) j["kvscope"] = ext;
  return j;
}

json usage_chunk(Endpoint e, const std::string& id, int64_t created, const std::string& model, const Usage& usage,
                 const json& ext) {
  json j = {{"id", id},
            {"object", e == Endpoint::Chat ? "chat.completion.chunk" : "text_completion"},
            {"created", created},
            {"model", model},
            {"system_fingerprint", "kvscope"},
            {"choices", json::array()},
            {"usage", usage_json(usage)}};
  if (!ext.is_null()) j["kvscope"] = ext;
  return j;
}

std::string new_response_id(Endpoint e) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char b[40];
  std::snprintf(b, sizeof b, "%016llx%08llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng() & 0xffffffffULL));
  return std::string(e == Endpoint::Chat ? "chatcmpl-" : "cmpl-") + b;
}

}  // namespace kvscope::server
