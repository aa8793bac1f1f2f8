// The attempts of one exchange: submitting them to the engine, the signals tap, and the steps that
// follow an attempt's end (a check point's action, the thinking budget's cut, the retry).
#include <algorithm>
#include <cmath>

#include "server/exchange.h"

namespace kvscope::server {

void Exchange::count_attempt(const std::vector<int32_t>& toks, const std::string& forced) {
  if (!tracker || rr) return;
  tok::StreamDecoder dec(srv->model->tokenizer());
  for (int32_t t : toks) tracker->on_token(dec.push(t));
  tracker->on_text(dec.flush());
  if (!forced.empty()) tracker->on_cut(forced);
}

reasoning::Splitter::Delta Exchange::shown(const std::string& piece, bool final) {
  reasoning::Splitter::Delta d;
  if (!split) {
    d.content = piece;
  } else {
    d = split->push(piece);
    if (final) {
      auto f = split->flush();
      d.reasoning += f.reasoning;
      d.content += f.content;
    }
  }
  if (tool_parser) {
    toolcall::ParseDelta pd;
    auto take = [&](toolcall::ParseDelta p) {
      pd.content += p.content;
      for (auto& c : p.calls) pd.calls.push_back(std::move(c));
    };
    if (forced && !forced_prefix_fed) {
      forced_prefix_fed = true;
      take(tool_parser->feed(forced->prefix));
    }
    take(tool_parser->feed(d.content));
    if (final) {
      if (forced) take(tool_parser->feed(forced->suffix));
      take(tool_parser->finish());
    }
    d.content = std::move(pd.content);
    for (auto& c : pd.calls) pending_calls.push_back(std::move(c));
  }
  reasoning_text += d.reasoning;
  content_text += d.content;
  return d;
}

void Exchange::new_constraint() {
  constraint.reset();
  gate.reset();
  marker_pending = false;
  std::shared_ptr<TokenConstraint> c;
  if (forced_schema) c = std::make_shared<SchemaConstraint>(srv->token_pieces(), forced_schema);
  else if (g.schema) c = std::make_shared<SchemaConstraint>(srv->token_pieces(), g.schema);
  else if (g.json_object) c = std::make_shared<JsonConstraint>(srv->token_pieces(), true);
  else if (auto_schemas)
    c = std::make_shared<toolcall::AutoCallConstraint>(srv->token_pieces(), srv->control_marks(), auto_schemas, tool_format);
  if (!c) return;
  reasoning::Splitter split0 = fresh_splitter();
  if (split0.answering()) {  // no reasoning first: every token is the answer's
    constraint = std::move(c);
    return;
  }
  marker_pending = forced.has_value();
  gate = std::make_shared<reasoning::AnswerGate>(srv->model->tokenizer(), std::move(split0),
                                                 marker_pending ? nullptr : std::move(c));
  constraint = gate;
}

void Exchange::closed_by(const std::string& forced_text, std::vector<int32_t>& prompt) {
  if (gate) gate->forced(forced_text);
  if (!marker_pending || (gate && !gate->open())) return;
  // What follows the format's close before the answer (the cut's trailing "\n\n"), then the marker.
  const size_t ws = forced_text.find_last_not_of(" \t\r\n");
  const std::string lead = ws == std::string::npos ? "" : forced_text.substr(ws + 1);
  const auto ids = srv->model->tokenizer().encode(lead + forced->prefix, false, true);
  prompt.insert(prompt.end(), ids.begin(), ids.end());
  marker_pending = false;
  gate.reset();
  constraint = std::make_shared<SchemaConstraint>(srv->token_pieces(), forced_schema);
}

bool Exchange::marker_step() {
  if (!marker_pending || !gate || !gate->open() || gen->finish_reason() != FinishReason::Stop) return false;
  const int done = gen->completion_tokens();
  // No room left for the call: the response ends with the reasoning.
  if (prev_tokens + done >= max_tokens || limit - static_cast<int>(attempt_prompt.size()) - done < 8) return false;
  const Completion c = srv->reap(id);
  prev_tokens += done;
  count_attempt(c.tokens);
  if (!rr && state == serving::AttemptState::First) state = serving::AttemptState::AnswerContinued;
  Request r;
  r.sampling = g.sampling;
  r.cache_salt = salt;
  r.prompt = attempt_prompt;
  r.prompt.insert(r.prompt.end(), c.tokens.begin(), c.tokens.end());
  // The model closed its reasoning itself: what it would write after the close is the cut's tail.
  closed_by(plan.cut_text(), r.prompt);
  r.max_tokens = std::max(1, std::min(max_tokens - prev_tokens, limit - static_cast<int>(r.prompt.size())));
  srv->metrics.in_flight.fetch_add(1);  // reap() counted the old attempt out
  submit(std::move(r), true);
  return true;
}

void Exchange::submit(Request r, bool continuation) {
  if (constraint && !r.constraint) r.constraint = constraint;
  attempt_prompt = r.prompt;
  gen = std::make_shared<Generation>(*srv->engine, g.stop, g.logprobs, srv->metrics);
  gen->set_tenant(&srv->metrics.tenant(tenant));
  // Auto tool calls: the parser must see the family's call marker when it is a control token.
  if (tool_parser && !forced) gen->set_render_control(true);
  gen->attach(r);
  if (srv->kv_tier && tier_computing >= 0) srv->kv_tier->watch_prefill(r, std::exchange(tier_computing, -1));
  if (rr) rr->attach(r, continuation);
  if (srv->opt.signals) attach_signals(r);
  std::lock_guard lk(srv->live_mu);  // held so shutdown sees the id as soon as the engine does
  id = srv->engine->submit(std::move(r));
  launched = true;
  live_insert();
}

std::shared_ptr<Exchange> Exchange::clone_for_choice(int i, int index) const {
  auto c = std::make_shared<Exchange>();
  c->srv = srv;
  c->body = body;
  c->g = g;
  c->g.sampling.seed = g.sampling.seed + static_cast<uint64_t>(i);
  c->prompt = prompt;
  c->resp_id = resp_id;
  c->created = created;
  c->choice = index;
  c->salt = salt;
  c->tenant = tenant;
  c->max_tokens = max_tokens;
  c->limit = limit;
  c->anomaly = anomaly;
  c->plan = plan;
  c->split_output = split_output;
  if (split) c->split = c->fresh_splitter();
  if (lp_split) c->lp_split = c->fresh_splitter();
  if (own_tracker) c->tracker = &c->own_tracker.emplace(plan);
  c->forced = forced;
  c->forced_schema = forced_schema;
  c->auto_schemas = auto_schemas;
  c->tool_format = tool_format;
  if (tool_parser) c->new_tool_parser();
  c->new_constraint();
  return c;
}

void Exchange::attach_signals(Request& r) {
  const Model& m = *srv->model;
  signals::SignalOptions so;
  so.probe = srv->probe.get();
  so.layers = srv->opt.signal_layers;
  so.pre_rope = srv->opt.signal_pre_rope;
  so.trace = srv->opt.signal_trace;
  sig = std::make_shared<SignalBox>(m, r.prompt, so);
  auto box = sig;
  // A probe reading the prompt (its pooled KV, the prompt prior) needs the rows of a prefix served
  // from the cache too: they are read back into the tap.
  if (so.probe && (so.probe->spec.prompt || so.probe->spec.prior)) r.tap_cached_prefix = true;
  if (r.tap) {  // the reasoning estimator's tap: both observe the same pass
    box->fan = std::make_unique<signals::TapFanout>(std::vector<KVTap*>{r.tap, box->scorer.tap()}, &m);
    r.tap = box->fan.get();
  } else {
    r.tap = box->scorer.tap();
  }
  auto inner_logits = std::move(r.on_logits);
  r.on_logits = [box, inner_logits = std::move(inner_logits)](const float* l, int n) {
    box->scorer.observe_logits(l, n);
    if (inner_logits) inner_logits(l, n);
  };
  const int32_t eos = m.tokenizer().vocab().eos;
  auto inner_token = std::move(r.on_token);
  const int every = srv->probe ? std::max(1, srv->opt.confidence_every) : 0;
  r.on_token = [box, eos, every, inner_token = std::move(inner_token)](const TokenEvent& e) {
    box->scorer.observe_token(e, eos);
    if (every && e.token >= 0 && box->scorer.n_sampled() % every == 0) {
      const double p = box->scorer.probe_score();
      std::lock_guard lk(box->conf_mu);
      box->conf_pending.emplace_back(box->scorer.n_sampled(), p);
    }
    if (inner_token) inner_token(e);
  };
}

void Exchange::count_reasoning() {
  Metrics& m = srv->metrics;
  m.reasoning_ended[static_cast<int>(rr->mode())].fetch_add(1);
  using reasoning::SwitchKind;
  for (const auto& sw : rr->driver().controller().switches()) {
    if (sw.action == SwitchKind::EarlyAnswer) m.reasoning_switches[0].fetch_add(1);
    else if (sw.action == SwitchKind::Upgrade) m.reasoning_switches[1].fetch_add(1);
    else if (sw.action == SwitchKind::Retry) m.reasoning_switches[2].fetch_add(1);
  }
  if (rr->is_auto()) m.decision_confidence.observe(rr->driver().initial().confidence);
}

void Exchange::finish_signals() {
  if (!sig || !sig->result.is_null()) return;
  size_t n_fed = sig->prompt.size() + (completion.tokens.empty() ? 0 : completion.tokens.size() - 1);
  const auto sr = completion.stop_reason;
  if (sr != StopReason::Eos && sr != StopReason::Cancelled && !completion.tokens.empty() &&
      srv->state.load(std::memory_order_acquire) == State::Ready &&
      static_cast<int>(sig->prompt.size() + completion.tokens.size()) < limit) {
    Request r;
    r.prompt = sig->prompt;
    r.prompt.insert(r.prompt.end(), completion.tokens.begin(), completion.tokens.end());
    r.max_tokens = 1;
    r.cache_salt = salt;
    r.sampling.temperature = 0;
    r.tap = sig->scorer.tap();
    RequestId fid;
    {
      std::lock_guard lk(srv->live_mu);  // shutdown waits for (or cancels) it like any request
      fid = srv->engine->submit(std::move(r));
      srv->live.insert(fid);
    }
    const Completion fc = srv->engine->wait(fid);
    {
      std::lock_guard lk(srv->live_mu);
      srv->live.erase(fid);
    }
    srv->live_cv.notify_all();
    if (fc.stop_reason != StopReason::Cancelled) ++n_fed;
  }
  sig->result = sig->scorer.result(srv->engine->stats().bytes_per_token * n_fed).to_json();
}

bool Exchange::adaptive_step(std::string& forced_shown, bool stream) {
  if (!rr) return false;
  const auto a = rr->take_pending();
  if (a.what == ReasoningRun::Do::Continue) return false;
  const int done = gen->completion_tokens();
  Request r;
  r.sampling = g.sampling;
  r.cache_salt = salt;
  r.prompt = attempt_prompt;
  if (a.what == ReasoningRun::Do::Cut) {
    const auto& cue = rr->cue_tokens();
    if (static_cast<int>(attempt_prompt.size() + cue.size()) + done >= limit) {
      rr->ended(StopReason::Context);  // as the Context loop's cut that does not fit
      return false;
    }
    const Completion c = srv->reap(id);
    prev_tokens += done;
    r.prompt.insert(r.prompt.end(), c.tokens.begin(), c.tokens.end());
    r.prompt.insert(r.prompt.end(), cue.begin(), cue.end());
    forced_shown = rr->cue_text();
    rr->driver().on_cut(forced_shown);
    closed_by(forced_shown, r.prompt);
    state = serving::AttemptState::EarlyAnswer;  // the reasoning is closed: no budget cut after this
    r.max_tokens = rr->driver().answer_tokens();
    if (!constraint) {  // structured output decides the answer's form, not the numeric masks
      r.first_token_allowed = rr->answer_start_allowed();
      r.continue_allowed = rr->answer_continue_allowed();
    }
    r.max_tokens = std::max(1, std::min(r.max_tokens, limit - static_cast<int>(r.prompt.size())));
    srv->metrics.in_flight.fetch_add(1);  // reap() counted the old attempt out
    submit(std::move(r), true);
    return true;
  }
  auto next = rr->next_prompt();
  const char* refused = stream && !text.empty()                               ? "the stream already sent text"
                        : static_cast<int>(next.size()) + 8 >= limit          ? "the higher effort's prompt does not fit the context"
                                                                              : nullptr;
  const Completion c = srv->reap(id);
  prev_tokens += done;
  if (refused) {
    rr->refuse(refused);
    r.prompt.insert(r.prompt.end(), c.tokens.begin(), c.tokens.end());
    r.max_tokens = std::max(1, std::min(attempt_tokens(), limit - static_cast<int>(r.prompt.size())));
    srv->metrics.in_flight.fetch_add(1);
    submit(std::move(r), true);
    return true;
  }
  rr->restart(std::move(next));
  new_attempt(serving::AttemptState::Upgraded);
  r.prompt = rr->prompt();
  r.max_tokens = std::max(1, std::min(attempt_tokens(), limit - static_cast<int>(r.prompt.size())));
  srv->metrics.in_flight.fetch_add(1);
  submit(std::move(r));
  return true;
}

bool Exchange::retry_answer(bool stream) {
  if (!rr || rr->on_end().what != ReasoningRun::Do::Restart) return false;
  auto next = rr->next_prompt();
  const char* refused = stream && !text.empty()                      ? "the stream already sent text"
                        : static_cast<int>(next.size()) + 1 >= limit ? "the slower mode's prompt does not fit the context"
                                                                     : nullptr;
  if (refused) {  // the controller goes back, so the report shows no retry that did not happen
    rr->refuse(refused);
    return false;
  }
  srv->reap(id);
  prev_tokens += gen->completion_tokens();
  rr->restart(std::move(next));
  new_attempt(serving::AttemptState::Retried);
  Request r;
  r.sampling = g.sampling;
  r.cache_salt = salt;
  r.prompt = rr->prompt();
  r.max_tokens = std::max(1, std::min(attempt_tokens(), limit - static_cast<int>(r.prompt.size())));
  srv->metrics.in_flight.fetch_add(1);  // reap() counted the old attempt out
  submit(std::move(r));
  return true;
}

bool Exchange::budget_step(std::string& forced_shown) {
  if (serving::reasoning_closed(state) || plan.budget < 0 || gen->finish_reason() != FinishReason::Length) return false;
  const int used = prev_tokens + gen->completion_tokens();
  const auto& tk = srv->model->tokenizer();
  const std::string cut = plan.cut_text();
  const auto cut_ids = tk.encode(cut, false, true);
  const int room = limit - static_cast<int>(attempt_prompt.size()) - gen->completion_tokens() - static_cast<int>(cut_ids.size());
  if (used >= max_tokens || room < 2) return false;
  const Completion c = srv->reap(id);
  prev_tokens += gen->completion_tokens();
  count_attempt(c.tokens);  // the attempt's tokens decide whether the reasoning is still open
  const bool thinking = !tracker || tracker->in_reasoning();
  // A model that closed its reasoning itself goes on (an adaptive run's checks with it).
  if (thinking) state = serving::AttemptState::BudgetCut;
  else if (!rr) state = serving::AttemptState::AnswerContinued;
  if (thinking && rr) rr->driver().on_cut(cut);
  else if (thinking && tracker) tracker->on_cut(cut);
  Request r;
  r.sampling = g.sampling;
  r.cache_salt = salt;
  r.prompt = attempt_prompt;
  r.prompt.insert(r.prompt.end(), c.tokens.begin(), c.tokens.end());
  if (thinking) {
    r.prompt.insert(r.prompt.end(), cut_ids.begin(), cut_ids.end());
    forced_shown = cut;
    closed_by(cut, r.prompt);
  }
  r.max_tokens = std::max(1, std::min(max_tokens - prev_tokens, limit - static_cast<int>(r.prompt.size())));
  if (thinking && plan.fmt().mode_line()) {  // a forced numeric answer, as an early answer
    r.max_tokens = std::min(r.max_tokens, srv->reasoning.format.answer_max_tokens);
    if (srv->reasoning.format.numeric_answer && !constraint) {  // structured output decides the answer's form
      r.first_token_allowed = &tk.number_start_mask();
      r.continue_allowed = &tk.number_continue_mask();
    }
  }
  srv->metrics.in_flight.fetch_add(1);  // reap() counted the old attempt out
  submit(std::move(r), true);
  return true;
}

Generation::Status Exchange::poll(std::vector<serving::Event>& out, double timeout_s, bool stream) {
  auto confidence = [&] {
    if (!sig) return;
    std::lock_guard lk(sig->conf_mu);
    if (sig->conf_pending.empty()) return;
    const auto [tokens, p] = sig->conf_pending.front();
    sig->conf_pending.pop_front();
    out.push_back(serving::ConfidenceUpdate{tokens, p});
  };
  // lp: the answer's tokens' log-probabilities (nullopt: not asked, or forced text); rlp: the reasoning's.
  auto emit = [&](const reasoning::Splitter::Delta& d, std::optional<std::vector<TokenLogprob>> lp, size_t offset,
                  std::optional<std::vector<TokenLogprob>> rlp = std::nullopt) {
    if (!d.reasoning.empty() || (rlp && !rlp->empty())) {
      confidence();
      out.push_back(serving::ReasoningDelta{d.reasoning, std::move(rlp)});
    }
    // Without a split every token's log-probabilities travel, text or not; with one, only the answer's.
    if (!d.content.empty() || (lp && (!lp_split || !lp->empty()))) {
      confidence();
      out.push_back(serving::ContentDelta{d.content, std::move(lp), offset});
    }
    for (auto& c : pending_calls) out.push_back(serving::ToolCallDelta{c.index, std::move(c.id), std::move(c.name), std::move(c.arguments)});
    pending_calls.clear();
  };
  std::vector<Generation::Piece> pieces;
  auto st = gen->wait(pieces, timeout_s);
  for (auto& p : pieces) {
    if (p.text.empty() && p.logprobs.empty()) continue;
    const size_t offset = text.size();
    note_logprobs(p.logprobs);
    text += p.text;
    if (stream && rr && !p.text.empty()) rr->shown();  // no restart from here on
    std::optional<std::vector<TokenLogprob>> lp, rlp;
    if (g.logprobs >= 0 && lp_split) {
      lp.emplace(), rlp.emplace();
      for (auto& t : p.logprobs) {
        // A token is the answer's once the answer has begun or when it writes some of it; the
        // delimiters and the whitespace around them are the reasoning's.
        const bool before = lp_split->in_content();
        const bool content = !lp_split->push(t.piece).content.empty() || before;
        (content ? *lp : *rlp).push_back(std::move(t));
      }
      logprobs.insert(logprobs.end(), lp->begin(), lp->end());
      reasoning_logprobs.insert(reasoning_logprobs.end(), rlp->begin(), rlp->end());
    } else {
      logprobs.insert(logprobs.end(), p.logprobs.begin(), p.logprobs.end());
      if (g.logprobs >= 0) lp = std::move(p.logprobs);
    }
    emit(shown(p.text), std::move(lp), offset, std::move(rlp));
  }
  if (st == Generation::Status::Finished) {
    std::string forced;
    if (next_request(forced, stream)) {
      const size_t offset = text.size();
      text += forced;  // the engine's cut is part of the text, as a generated token would be
      if (lp_split) lp_split->push(forced);
      if (!forced.empty()) emit(shown(forced), std::nullopt, offset);
      return Generation::Status::Output;  // go on waiting
    }
    emit(shown("", true), std::nullopt, text.size());
    finish();
    ext = extension();
    record_outcome(ext);
    out.push_back(serving::Finished{finish_reason(), usage()});
  }
  return st;
}

void Exchange::finish() {
  if (reaped || !launched) return;
  completion = srv->reap(id);
  count_attempt(completion.tokens);
  if (rr) rr->driver().finish();
  reaped = true;
  finish_signals();
  if (rr) count_reasoning();
  const double e2e = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  srv->metrics.e2e.observe(e2e);
  TenantMetrics& tm = srv->metrics.tenant(tenant);
  tm.e2e.observe(e2e);
  tm.prompt_tokens_cached.fetch_add(static_cast<uint64_t>(std::max(0, completion.n_cached)), std::memory_order_relaxed);
}

void Exchange::abandon() {
  if (reaped) return;
  if (!launched) {  // a choice still waiting for the prompt's KV: only its admission slot to give back
    srv->metrics.in_flight.fetch_sub(1, std::memory_order_relaxed);
    reaped = true;
    return;
  }
  srv->engine->cancel(id);
  srv->metrics.requests_cancelled.fetch_add(1, std::memory_order_relaxed);
  srv->metrics.tenant(tenant).requests_cancelled.fetch_add(1, std::memory_order_relaxed);
  finish();
}

void Exchange::record_outcome(const json& ext) {
  std::string requested = "none", served = "none";
  double conf = -1;
  if (const auto r = ext.find("reasoning"); r != ext.end() && r->is_object()) {
    requested = r->value("requested", "none");
    served = r->value("mode", "none");
    if (const auto a = r->find("answer_confidence"); a != r->end() && a->is_number()) conf = a->get<double>();
  }
  if (const auto s = ext.find("signals"); s != ext.end() && s->is_object()) {
    if (const auto p = s->find("kv_probe"); p != s->end() && p->is_number()) conf = p->get<double>();  // the calibrated one
    else if (const auto m = s->find("max_prob"); m != s->end() && m->is_number()) conf = m->get<double>();
  }
  if (conf < 0 && top_prob_n > 0) conf = top_prob_sum / top_prob_n;
  srv->metrics.count_mode(requested, served);
  if (conf >= 0) {
    srv->metrics.confidence.observe(std::min(1.0, conf));
    srv->metrics.tenant(tenant).confidence.observe(std::min(1.0, conf));
  }
}

json Exchange::extension() const {
  json ext = {{"prompt_tokens_cached", completion.n_cached},
              {"prompt_tokens_tier", tier_tokens},
              {"preemptions", completion.n_preempted},
              {"session_id", g.session_id.empty() ? json(nullptr) : json(g.session_id)}};
  if (rr) ext["reasoning"] = rr->report();
  if (plan.format != reasoning::FormatKind::None) {
    json& rj = ext["reasoning"];
    if (rj.is_null()) rj = json::object();
    rj["format"] = std::string(reasoning::format_name(plan.format));
    if (plan.requested || (rr && !rr->is_auto())) {
      rj["effort"] = rr && rr->is_auto() ? "auto" : std::string(effort_name(plan.effort));
      rj["level"] = rr ? rr->attempt_plan().level_name() : plan.level_name();
    }
    rj["thinking"] = plan.thinking;
    rj["budget"] = plan.budget;
    rj["budget_cut"] = state == serving::AttemptState::BudgetCut;
    rj["reasoning_tokens"] = reasoning_tokens();
  }
  if (sig && !sig->result.is_null()) ext["signals"] = sig->result;
  if (!anomaly.is_null()) ext["anomaly"] = anomaly;
  ResponseInfo info{body, prompt, completion, text};
  for (const auto& h : srv->hooks) h(info, ext);
  return ext;
}

}  // namespace kvscope::server
