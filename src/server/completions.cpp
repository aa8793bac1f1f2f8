// POST /v1/completions and /v1/chat/completions: validation, tokenization, admission, then the
// response written as the engine produces tokens: an SSE stream, or one JSON body. A client that
// hangs up is noticed on the next write (a silent request writes heartbeats: SSE comments, or
// JSON-insignificant spaces), and its engine request is cancelled so its blocks return to the pool.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "reasoning/user_spans.h"
#include "sampling/constraint.h"
#include "server/exchange.h"
#include "util/error.h"

namespace kvscope::server {

namespace {

// A logit bias changes what a mode writes, so a cached decision names it.
std::string bias_key(const SamplingParams& sp) {
  if (sp.logit_bias.empty()) return "";
  std::string b;
  for (const auto& [id, v] : sp.logit_bias) b += std::to_string(id) + ":" + std::to_string(v) + ",";
  return ";bias=" + std::to_string(hash_bytes(b, 0));
}

}  // namespace


std::vector<std::pair<int, int>> Server::Impl::user_spans(const GenRequest& g, const std::vector<int32_t>& prompt) const {
  if (g.endpoint != Endpoint::Chat) return {};
  std::vector<std::string> users;
  for (const auto& m : g.messages)
    if (m.role == "user") users.push_back(m.content);
  // The embedded model without a template reads the last user turn, as plain text.
  if (bare_questions() && !users.empty()) users.erase(users.begin(), users.end() - 1);
  return reasoning::user_token_spans(*model, prompt, users, !bare_questions());
}

json Server::Impl::score_anomaly(const std::vector<int32_t>& prompt, uint64_t salt, const std::vector<std::pair<int, int>>& user_spans) {
  const int n = static_cast<int>(prompt.size());
  signals::ProbeFeatures tap(model->hparams(), kv_profile->spec(), 0, n);
  // The per-token parts score each prompt token (the user-content part: each token of the users'
  // text) as its K/V is written (or read back from the prefix cache), keeping only the largest
  // distances.
  std::unique_ptr<signals::TokenTap> tok, usr;
  std::unique_ptr<signals::TapFanout> fan;
  std::vector<KVTap*> taps{&tap};
  if (!kv_profile->token.empty()) {
    tok = std::make_unique<signals::TokenTap>(model->hparams(), kv_profile->layers, &kv_profile->token, 0, n);
    taps.push_back(tok.get());
  }
  if (!kv_profile->user.empty()) {
    usr = std::make_unique<signals::TokenTap>(model->hparams(), kv_profile->layers, &kv_profile->user, user_spans);
    taps.push_back(usr.get());
  }
  if (taps.size() > 1) fan = std::make_unique<signals::TapFanout>(taps, model.get());
  Request r;
  r.prompt = prompt;
  r.max_tokens = 1;
  r.cache_salt = salt;  // the prompt's KV stays cached for the request itself
  r.sampling.temperature = 0;
  r.tap = fan ? static_cast<KVTap*>(fan.get()) : &tap;
  r.tap_cached_prefix = true;  // a prompt served from the prefix cache is read back for the tap
  RequestId id;
  {
    std::lock_guard lk(live_mu);
    id = engine->submit(std::move(r));
    live.insert(id);
  }
  const Completion c = engine->wait(id);
  {
    std::lock_guard lk(live_mu);
    live.erase(id);
  }
  live_cv.notify_all();
  if (c.stop_reason == StopReason::Cancelled || tap.n_tokens() == 0)
    throw ApiError(503, "server_error", "the server is shutting down", "", "unavailable");
  const double pooled = kv_profile->score(signals::prompt_vector(tap));
  const double user = usr ? usr->top_mean(kv_profile->user_topk) : 0;
  const int markers = usr ? signals::special_tokens_in(model->tokenizer(), prompt, user_spans) : 0;
  const double score = kv_profile->combine(pooled, tok ? tok->max_distance() : 0, tok ? tok->count_score() : 0, user, markers);
  const bool anomalous = score > kv_profile->threshold;
  metrics.anomaly.observe(score);
  if (anomalous) metrics.anomalous_prompts.fetch_add(1, std::memory_order_relaxed);
  const double limit = opt.reject_anomalous > 0 ? opt.reject_anomalous : kv_profile->threshold;
  if (opt.reject_anomalous >= 0 && score > limit) {
    metrics.rejected_anomalous.fetch_add(1, std::memory_order_relaxed);
    char msg[256];
    std::snprintf(msg, sizeof msg,
                  "prompt rejected as anomalous: its KV anomaly score %.3f is above the threshold %.3f "
                  "(--reject-anomalous); it does not look like the traffic this model's KV profile was built from",
                  score, limit);
    throw ApiError(400, "invalid_request_error", msg, "prompt", "anomalous_prompt");
  }
  json out = {{"score", score}, {"threshold", kv_profile->threshold}, {"anomalous", anomalous}, {"tokens", tap.n_tokens()}};
  if (tok) {
    // The two parts as they enter the score (each divided by its normal-traffic reference), and
    // where the farthest token is.
    out["pooled"] = pooled / kv_profile->pooled_ref;
    out["token"] = tok->max_distance() / kv_profile->token_ref;
    out["counts"] = tok->count_score() / kv_profile->count_ref;
    out["token_position"] = tok->argmax();
  }
  if (usr) {
    // The user-content part as it enters the score, how many user tokens it read, and where the
    // farthest of them is (null: no user text, e.g. a raw completion).
    if (!tok) out["pooled"] = pooled / kv_profile->pooled_ref;
    out["user"] = user / kv_profile->user_ref;
    out["user_tokens"] = usr->n_tokens();
    out["user_markers"] = markers;  // special tokens the user typed (each adds marker_weight)
    out["user_position"] = usr->argmax() >= 0 ? json(usr->argmax()) : json(nullptr);
  }
  return out;
}

std::shared_ptr<const TokenPieces> Server::Impl::token_pieces() const {
  std::call_once(pieces_once, [this] {
    const tok::Tokenizer& tk = model->tokenizer();
    std::vector<std::string> p(static_cast<size_t>(tk.n_vocab()));
    for (int id = 0; id < tk.n_vocab(); ++id)
      if (!tk.is_eog(id)) p[static_cast<size_t>(id)] = tk.token_to_piece(id);  // control tokens write nothing
    pieces = std::make_shared<const TokenPieces>(std::move(p));
  });
  return pieces;
}

std::shared_ptr<const std::vector<std::string>> Server::Impl::control_marks() const {
  std::call_once(marks_once, [this] {
    const tok::Tokenizer& tk = model->tokenizer();
    std::vector<std::string> m(static_cast<size_t>(tk.n_vocab()));
    for (int id = 0; id < tk.n_vocab(); ++id)
      if (!tk.is_eog(id) && tk.token_to_piece(id).empty()) m[static_cast<size_t>(id)] = tk.token_to_piece(id, true);
    marks = std::make_shared<const std::vector<std::string>>(std::move(m));
  });
  return marks;
}

std::vector<int32_t> Server::Impl::tokenize(const GenRequest& g, const reasoning::ReasoningPlan* plan) const {
  const tok::Tokenizer& tk = model->tokenizer();
  if (g.endpoint == Endpoint::Completions) {
    if (g.token_prompt) {
      for (int32_t t : g.prompt_tokens)
        if (t >= tk.n_vocab())
          throw invalid_request("token id " + std::to_string(t) + " in 'prompt' is outside the vocabulary of " +
                                    std::to_string(tk.n_vocab()),
                                "prompt", "invalid_value");
      return g.prompt_tokens;
    }
    if (plan) {  // the user's text stays plain; the think block is the engine's
      auto ids = tk.encode(g.prompt, true, false);
      const auto sfx = tk.encode(plan->prompt_suffix(), false, true);
      ids.insert(ids.end(), sfx.begin(), sfx.end());
      return ids;
    }
    return tk.encode(g.prompt, true, false);  // user text: special-token spellings stay plain text
  }
  if (bare_questions()) return tk.encode(prompt_text(g, plan), true, false);  // user text, as trained
  const auto& v = tk.vocab();
  auto text_of = [&](int id) { return id >= 0 && id < tk.n_vocab() ? v.tokens[id] : std::string(); };
  const std::string prompt = prompt_text(g, plan);
  // Templates that spell out BOS themselves must not get a second one.
  const bool has_bos = v.bos >= 0 && !text_of(v.bos).empty() && prompt.rfind(text_of(v.bos), 0) == 0;
  return tk.encode(prompt, !has_bos, true);
}

std::string Server::Impl::prompt_text(const GenRequest& g, const reasoning::ReasoningPlan* plan) const {
  if (g.endpoint == Endpoint::Completions) return g.prompt + (plan ? plan->prompt_suffix() : "");
  if (bare_questions()) {
    // The embedded model (no chat template) was trained on a bare question: the last user turn.
    std::string q;
    for (const auto& m : g.messages)
      if (m.role == "user") q = m.content;
    return q.empty() || q.back() == '\n' ? q : q + "\n";
  }
  const tok::Tokenizer& tk = model->tokenizer();
  const auto& v = tk.vocab();
  auto text_of = [&](int id) { return id >= 0 && id < tk.n_vocab() ? v.tokens[id] : std::string(); };
  // Without a plan a levels model's prompt is the conversation alone: the question an adaptive run
  // estimates from, which every level's prompt continues.
  const bool question_only = !plan && reasoning::format_of(reasoning.kind).level_after_conversation();
  const std::string level = plan && !plan->system_line().empty() ? plan->level_name() : "";
  // Offered tools are shown to the model even with tool_choice "none" (as OpenAI does).
  return tok::apply_chat_template(chat_format, g.messages, !question_only, text_of(v.bos), text_of(v.eos), level,
                                  g.tools ? &g.tools->template_tools : nullptr) +
         (plan ? plan->prompt_suffix() : "");
}

// The request's reasoning on the model's format: its effort, budget and enable_thinking become the
// exchange's plan; kvscope's "reasoning" modes become efforts on a format that has them.
void Server::Impl::plan_reasoning(Exchange& x, Endpoint ep) {
  GenRequest& g = x.g;
  // Reasoning formats: the request's effort, budget and enable_thinking on the model's format.
  const reasoning::FormatKind kind = reasoning.kind;
  const reasoning::Format& fm = reasoning::format_of(kind);
  // kvscope's "reasoning" modes on a format with efforts are its efforts for them (effort_for_mode;
  // levels: low, medium, high); a model without a format gets the mode lines, as the first reasoner did.
  if (g.reasoning && fm.reasons() && !fm.mode_line()) {
    if (g.effort)
      throw ApiError::about("reasoning", FieldText("give one of 'reasoning' and ") + quoted(Field::ReasoningEffort), "invalid_value");
    const auto fixed = serving::fixed_mode(*g.reasoning);
    g.effort = fixed ? fm.effort_for_mode(*fixed) : Effort::Auto;
    g.reasoning.reset();
  }
  if (!g.reasoning) {
    reasoning::PlanRequest pr{g.effort, g.enable_thinking, g.thinking_budget};
    if (!g.reasoning_requested() && opt.reasoning_budget && ep == Endpoint::Chat) pr.budget = opt.reasoning_budget;
    try {
      x.plan = reasoning::plan(kind, pr, opt.effort_budgets);
    } catch (const InputError& e) {
      if (g.effort) throw invalid_request(FieldText(e.what()), named(Field::ReasoningEffort), "unsupported_value");
      throw invalid_request(e.what(), g.thinking_budget ? "thinking_token_budget" : "chat_template_kwargs", "unsupported_value");
    }
    if (fm.reasons() && g.reasoning_requested() && g.token_prompt)
      throw invalid_request("reasoning options need a text prompt (the engine writes the think block after it)",
                            g.effort ? "reasoning_effort" : "prompt", "invalid_value");  // completions only: no Responses wording
    if (g.effort == Effort::Auto && !fm.mode_line() && !reasoning.difficulty)
      throw invalid_request(FieldText(named(Field::ReasoningEffort)) + " 'auto' needs a difficulty estimator for this model (reasoning format '" +
                                std::string(fm.name()) +
                                "'): start the server with --difficulty FILE (kvscope train-difficulty --data FILE.jsonl)",
                            named(Field::ReasoningEffort), "unsupported_value");
    // A completion asked for no reasoning continues the raw text: no think block, no split, no count.
    if (ep == Endpoint::Completions && !x.plan.requested) x.plan = reasoning::ReasoningPlan{};
    // The embedded model's levels are its mode lines: the adaptive run carries them (and auto).
    if (fm.mode_line() && g.reasoning_requested() && !g.token_prompt)
      g.reasoning = g.effort == Effort::Auto ? serving::ReasoningMode::Auto : serving::reasoning_mode_of(x.plan.mode);
  } else if (fm.mode_line()) {
    if (const auto fixed = serving::fixed_mode(*g.reasoning))
      x.plan = reasoning::plan_for_effort(kind, fm.effort_for_mode(*fixed));
    x.plan.requested = true;
  }
}

// The exchange's prompt tokens: rendered with its plan, or by an adaptive run (auto on a think
// format, or kvscope's modes), which renders each attempt's prompt itself.
void Server::Impl::render_prompt(Exchange& x, Endpoint ep) {
  GenRequest& g = x.g;
  const reasoning::FormatKind kind = reasoning.kind;
  // auto on a format other than the embedded model's: the adaptive run chooses among its efforts.
  const bool think_auto = g.effort == Effort::Auto && !reasoning::format_of(kind).mode_line();
  if (think_auto) {
    ReasoningRun::FormatHooks hooks;
    hooks.kind = kind;
    hooks.question_tokens = tokenize(g);  // the prompt before any think block: what the estimate pools
    hooks.render = [this, gc = g, kind](Mode m) {
      const auto pl = reasoning::plan_for_effort(kind, reasoning::effort_for_mode(kind, m), reasoning.budgets);
      return tokenize(gc, &pl);
    };
    const auto& c = reasoning.controller;
    const std::string key = "effort=auto;format=" + std::string(reasoning::format_name(kind)) +
                            ";fast=" + std::to_string(c.fast_at_most) + ";slow=" + std::to_string(c.slow_above) +
                            ";conf=" + std::to_string(c.min_confidence) + ";temp=" + std::to_string(g.sampling.temperature) +
                            ";max=" + std::to_string(g.max_tokens) + bias_key(g.sampling) + ";endpoint=" + endpoint_name(ep);
    x.rr = std::make_unique<ReasoningRun>(reasoning, *engine, serving::ReasoningMode::Auto, prompt_text(g), x.salt, key,
                                           nullptr, hooks);
    x.prompt = x.rr->prompt();
    x.plan = x.rr->attempt_plan();
    metrics.reasoning_started[0].fetch_add(1, std::memory_order_relaxed);
  }
  x.split_output = ep == Endpoint::Chat && x.plan.format != reasoning::FormatKind::None;
  if (x.split_output) x.split = x.fresh_splitter();
  if (x.split_output && g.logprobs >= 0) x.lp_split = x.fresh_splitter();
  if (x.plan.format != reasoning::FormatKind::None && !x.rr) x.tracker = &x.own_tracker.emplace(x.plan);
  if (think_auto) return;  // the adaptive run rendered it
  if (g.reasoning) {
    // Chat: the last user message is the question; the reasoning text (question + mode line) takes
    // its place and the chat template renders the conversation around it.
    std::string question;
    ReasoningRun::Render render;
    if (g.endpoint == Endpoint::Chat) {
      int last_user = -1;
      for (size_t i = 0; i < g.messages.size(); ++i)
        if (g.messages[i].role == "user") last_user = static_cast<int>(i);
      if (last_user < 0 || g.messages[last_user].content.empty())
        throw invalid_request(FieldText("'reasoning' needs a user message (the question)"), named(Field::Messages), "invalid_value");
      question = g.messages[last_user].content;
      render = [this, msgs = g.messages, last_user](const std::string& text) {
        GenRequest c;
        c.endpoint = Endpoint::Chat;
        c.messages = msgs;
        c.messages[last_user].content = text;
        return tokenize(c);
      };
    } else {
      if (g.prompt.empty()) throw invalid_request("the prompt is empty", "prompt", "invalid_value");
      question = g.prompt;
    }
    // What decides the mode besides the question: the thresholds and the generation parameters.
    const auto& c = reasoning.controller;
    const std::string key = "reasoning=" + std::string(serving::reasoning_mode_name(*g.reasoning)) + ";fast=" + std::to_string(c.fast_at_most) +
                            ";slow=" + std::to_string(c.slow_above) + ";conf=" + std::to_string(c.min_confidence) +
                            ";temp=" + std::to_string(g.sampling.temperature) + ";max=" + std::to_string(g.max_tokens) +
                            bias_key(g.sampling);
    x.rr = std::make_unique<ReasoningRun>(reasoning, *engine, *g.reasoning, question, x.salt,
                                           key + ";endpoint=" + (g.endpoint == Endpoint::Chat ? "chat" : "text"), render);
    x.prompt = x.rr->prompt();
    metrics.reasoning_started[static_cast<int>(*g.reasoning)].fetch_add(1, std::memory_order_relaxed);
  } else {
    const bool with_plan = x.plan.format != reasoning::FormatKind::None && (ep == Endpoint::Chat || x.plan.requested);
    x.prompt = tokenize(g, with_plan ? &x.plan : nullptr);
  }
}

// Chat's tool fields, read from the body in its order (a function's parameters are decoded in the
// order their properties are written).
void Server::Impl::parse_tools(const std::string& raw, const json& body, GenRequest& g) const {
  bool any = false;
  for (const char* k : {"tools", "tool_choice", "parallel_tool_calls"})
    if (auto it = body.find(k); it != body.end() && !it->is_null()) any = true;
  if (!any) return;
  const auto ordered = nlohmann::ordered_json::parse(raw);
  auto member = [&](const char* k) -> const nlohmann::ordered_json* {
    auto it = ordered.find(k);
    return it == ordered.end() || it->is_null() ? nullptr : &*it;
  };
  try {
    auto spec = toolcall::parse_tool_spec(member("tools"), member("tool_choice"), member("parallel_tool_calls"));
    if (spec.active()) g.tools = std::make_shared<const toolcall::ToolSpec>(std::move(spec));
  } catch (const toolcall::ToolError& e) {
    throw invalid_request(e.what(), e.param, e.code);
  }
}

// One prompt's exchange: its tokens, reasoning plan, limits and anomaly score. n_total: the
// request's choices over all its prompts (n_prompts).
std::shared_ptr<Exchange> Server::Impl::prepare_exchange(const json& request_body, GenRequest one, Endpoint ep,
                                                         uint64_t tenant, int n_total, size_t n_prompts) {
  auto x = std::make_shared<Exchange>();
  x->srv = this;
  x->body = request_body;
  x->g = std::move(one);
  GenRequest& g = x->g;
  x->salt = g.cache_salt.empty() ? tenant : hash_bytes(g.cache_salt, tenant ^ 0x9e3779b97f4a7c15ULL);
  x->tenant = tenant;
  plan_reasoning(*x, ep);
  render_prompt(*x, ep);
  const int n_prompt = static_cast<int>(x->prompt.size());
  const int limit = engine->max_seq_tokens();
  // Chat names its messages (a Responses client reads "input"), completions its prompt.
  auto prompt_error = [&](std::string message, const char* code) {
    return ep == Endpoint::Chat ? invalid_request(FieldText(std::move(message)), named(Field::Messages), code)
                                : invalid_request(message, "prompt", code);
  };
  if (n_prompt == 0) throw prompt_error("the prompt is empty", "invalid_value");
  if (n_prompt >= limit)
    throw prompt_error("This model's maximum context length is " + std::to_string(limit) + " tokens, however the prompt has " +
                           std::to_string(n_prompt) + " tokens (at least one must be left to generate)",
                       "context_length_exceeded");
  int max_tokens = g.max_tokens;
  if (max_tokens == 0)  // reasoning requests are bounded by the mode's token cap instead
    max_tokens = opt.default_max_tokens > 0 && !x->rr ? std::min(opt.default_max_tokens, limit - n_prompt)
                 : ep == Endpoint::Chat || x->rr ? limit - n_prompt
                                                 : std::min(16, limit - n_prompt);
  if (g.fit_context) max_tokens = std::min(max_tokens, limit - n_prompt);
  if (static_cast<int64_t>(n_prompt) + max_tokens > limit)
    throw invalid_request("This model's maximum context length is " + std::to_string(limit) + " tokens, however you requested " +
                              std::to_string(int64_t(n_prompt) + max_tokens) + " tokens (" + std::to_string(n_prompt) +
                              " in the prompt, " + std::to_string(max_tokens) + " for the completion)",
                          named(g.max_tokens_field), "context_length_exceeded");

  // Choices are independent samples of one prompt; a session or an adaptive run follows one sequence.
  if (n_total > 1 && (x->rr || !g.session_id.empty()))
    throw invalid_request(std::string(n_prompts > 1 ? "several prompts are" : "'n' > 1 is") + " not supported with " +
                              (x->rr ? "a reasoning run (an 'auto' effort, or any effort or 'reasoning' mode on a kvscope-format model)"
                                     : "a session"),
                          n_prompts > 1 ? "prompt" : "n", "unsupported_parameter");
  if (g.tools && g.tools->choice != toolcall::ChoiceKind::None) prepare_tools(*x);
  // JSON output and a forced call's arguments: on a reasoning model only the answer after the
  // reasoning is constrained (Exchange::new_constraint).
  x->new_constraint();
  // KV anomaly: scored (and, with --reject-anomalous, refused) before the request is admitted.
  if (kv_profile) x->anomaly = score_anomaly(x->prompt, x->salt, kv_profile->user.empty() ? std::vector<std::pair<int, int>>{} : user_spans(g, x->prompt));
  x->max_tokens = max_tokens;
  x->limit = limit;
  return x;
}

// Tool calling on an exchange: the family's call parser, and for a forced call (tool_choice required
// or a named function) its opening marker after the prompt and the schema its JSON is decoded under,
// so the arguments always parse.
void Server::Impl::prepare_tools(Exchange& x) {
  const GenRequest& g = x.g;
  if (bare_questions())
    throw invalid_request("'tools' needs a model with a chat template (this model has none to show them)", "tools",
                          "unsupported_parameter");
  // Output constraints cover every generated token: a JSON answer leaves no room for a call.
  if (g.json_object || g.schema)
    throw invalid_request(FieldText(quoted(Field::ResponseFormat)) + " JSON output cannot be combined with 'tools' (use tool_choice 'none')",
                          named(Field::ResponseFormat), "unsupported_parameter");
  x.tool_format = tool_format;
  x.new_tool_parser();
  if (!g.tools->forced()) {
    // Once the parser reads a call's name its arguments are constrained; on a reasoning model only
    // after the reasoning (Exchange::new_constraint gates it).
    x.auto_schemas = std::make_shared<const toolcall::CallSchemas>(toolcall::compile_call_schemas(*g.tools));
    return;
  }
  // An adaptive run renders each attempt's prompt itself, and an attempt without thinking would need
  // the marker in its prompt: a forced call takes a fixed effort.
  if (x.rr)
    throw ApiError::about("tool_choice",
                          FieldText("tool_choice '" + std::string(g.tools->choice == toolcall::ChoiceKind::Required ? "required" : "function") +
                                    "' is not supported with an adaptive reasoning run: give a fixed ") +
                              named(Field::ReasoningEffort) + " (none, low, medium or high), or use tool_choice 'auto'",
                          "unsupported_parameter");
  x.forced = toolcall::forced_call(*g.tools, tool_format);
  try {
    x.forced_schema = std::make_shared<const JsonSchema>(x.forced->schema);
  } catch (const InputError& e) {
    throw invalid_request(std::string("'tools': a function's parameters cannot be decoded: ") + e.what(), "tools",
                          "unsupported_value");
  }
  // A response that starts in its reasoning gets the marker where the reasoning ends (marker_step).
  if (!x.fresh_splitter().answering()) return;
  // The marker is written as the model would: control tokens ([TOOL_CALLS]) as themselves.
  const auto pre = model->tokenizer().encode(x.forced->prefix, false, true);
  x.prompt.insert(x.prompt.end(), pre.begin(), pre.end());
}

// Submits a choice's first request (its admission slot is already taken).
void Server::Impl::launch_exchange(Exchange& e, uint64_t tenant) {
  Request r;
  r.prompt = e.prompt;
  r.sampling = e.g.sampling;
  if (e.rr) {
    e.rr->begin(e.max_tokens, e.g.stream);
    if (e.plan.format != reasoning::FormatKind::None) e.tracker = &e.rr->driver().tokens();
  }
  // The mode's cap and the thinking budget: budget_step closes the reasoning there and goes on.
  r.max_tokens = e.attempt_tokens();
  r.cache_salt = e.salt;  // the constraint (e.constraint) goes on in submit(), with every attempt's request
  // Sessions are per tenant: the same id under another key is another session.
  if (!e.g.session_id.empty()) r.session_id = session_key(tenant, e.g.session_id);
  if (kv_tier && e.choice % e.g.n == 0) e.tier_tokens = tier_prefetch(r.prompt, r.cache_salt, r.session_id, e.tier_computing);
  e.submit(std::move(r));
}

void Server::Impl::handle_generation(const httplib::Request& req, httplib::Response& res, Endpoint ep) {
  const Started s = start_generation(origin_of(req), ep);
  if (s.stream) {
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
  }
  respond(res, s.x, s.choices, s.stream);
}

Server::Impl::Origin Server::Impl::origin_of(const httplib::Request& req) const {
  return {req.body, tenant_salt(req), req.has_header("X-Session-Id") ? req.get_header_value("X-Session-Id") : std::string()};
}

Server::Impl::Started Server::Impl::start_generation(const Origin& origin, Endpoint ep) {
  require_serving();
  const json request_body = parse_json_body(origin.body);
  GenRequest whole = parse_gen_request(request_body, ep);
  apply_session_header(origin.session_header, whole);
  if (!whole.model.empty() && whole.model != model_id)
    throw ApiError(404, "invalid_request_error", "The model '" + whole.model + "' does not exist", "model", "model_not_found");
  if (whole.schema_at != GenRequest::SchemaAt::None) {
    // Compiled from the body as written: an object's properties are generated in the schema's order.
    const auto ordered = nlohmann::ordered_json::parse(origin.body);
    // The two parses keep different copies of a repeated key (the last, the first): look, don't assume.
    auto member = [](const nlohmann::ordered_json* o, const char* k) -> const nlohmann::ordered_json* {
      return o && o->is_object() && o->contains(k) ? &(*o)[k] : nullptr;
    };
    const auto* rf = member(&ordered, "response_format");
    const auto* schema = whole.schema_at == GenRequest::SchemaAt::JsonSchema ? member(member(rf, "json_schema"), "schema") : member(rf, "schema");
    if (!schema)
      throw invalid_request(FieldText(quoted(Field::ResponseFormat)) + " is given more than once", named(Field::ResponseFormat),
                            "invalid_value");
    try {
      whole.schema = std::make_shared<const JsonSchema>(*schema);
    } catch (const InputError& e) {
      throw invalid_request(FieldText(quoted(Field::ResponseFormat)) + ": " + e.what(), named(Field::ResponseFormat),
                            "unsupported_value");
    }
  }
  if (ep == Endpoint::Chat) parse_tools(origin.body, request_body, whole);
  return launch_generation(std::move(whole), request_body, origin.tenant, ep);
}

Server::Impl::Started Server::Impl::launch_generation(GenRequest whole, const json& request_body, uint64_t tenant, Endpoint ep) {
  try {
    whole.sampling.validate_vocab(model->tokenizer().n_vocab());
  } catch (const InputError& e) {
    throw invalid_request(e.what(), "logit_bias", "invalid_value");
  }
  const std::vector<GenRequest> prompts = whole.split_prompts();
  const int n_total = static_cast<int>(prompts.size()) * whole.n;  // choices, prompt-major as OpenAI numbers them
  if (n_total > opt.max_queue)
    throw invalid_request("'n' times the prompts (" + std::to_string(n_total) + ") is above the server's --max-queue of " +
                              std::to_string(opt.max_queue),
                          prompts.size() > 1 ? "prompt" : "n", "invalid_value");

  std::vector<std::shared_ptr<Exchange>> leaders;  // each prompt's choice 0
  for (const GenRequest& one : prompts) leaders.push_back(prepare_exchange(request_body, one, ep, tenant, n_total, prompts.size()));
  const std::shared_ptr<Exchange> x = leaders[0];
  const GenRequest& g = x->g;

  // Admission: a bounded number in flight (each choice counts); the rest are told to come back.
  if (metrics.in_flight.fetch_add(n_total) + n_total > opt.max_queue) {
    metrics.in_flight.fetch_sub(n_total);
    throw ApiError(429, "rate_limit_error",
                   "the server is at capacity (" + std::to_string(opt.max_queue) + " requests in flight); retry later", "",
                   "queue_full");
  }
  const std::string resp_id = new_response_id(ep);
  const int64_t created_s =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (size_t k = 0; k < leaders.size(); ++k) {
    leaders[k]->resp_id = resp_id;
    leaders[k]->created = created_s;
    leaders[k]->choice = static_cast<int>(k) * g.n;
  }
  auto launch = [this, tenant](Exchange& e) { launch_exchange(e, tenant); };
  std::shared_ptr<Choices> choices;
  if (n_total > 1) {
    choices = std::make_shared<Choices>();
    choices->launch = launch;
    choices->per_prompt = g.n;
    for (const auto& leader : leaders)
      for (int j = 0; j < g.n; ++j) choices->xs.push_back(j == 0 ? leader : leader->clone_for_choice(j, leader->choice + j));
    choices->bodies.resize(n_total);
    choices->ended.assign(n_total, false);
  }
  size_t launched = 0;
  try {
    for (; launched < leaders.size(); ++launched) launch(*leaders[launched]);
  } catch (...) {
    // The leaders already running are cancelled by their releaser; the slots of the rest are given back.
    for (size_t k = 0; k < launched; ++k) leaders[k]->abandon();
    metrics.in_flight.fetch_sub(n_total - static_cast<int>(launched));
    throw;
  }
  metrics.requests_total.fetch_add(1, std::memory_order_relaxed);
  for (const auto& leader : leaders) metrics.prompt_tokens.fetch_add(static_cast<int64_t>(leader->prompt.size()), std::memory_order_relaxed);
  {
    TenantMetrics& tm = metrics.tenant(tenant);
    tm.requests_total.fetch_add(1, std::memory_order_relaxed);
    for (const auto& leader : leaders) tm.prompt_tokens.fetch_add(leader->prompt.size(), std::memory_order_relaxed);
  }
  return {x, choices, g.stream};
}

}  // namespace kvscope::server
