#include "server/reasoning_run.h"

#include <chrono>
#include <cstdio>

#include "server/server_impl.h"

namespace kvscope::server {

using reasoning::Controller;
using reasoning::Mode;

ReasoningRun::ReasoningRun(ReasoningContext& rc, Engine& engine, serving::ReasoningMode requested, const std::string& question,
                           uint64_t cache_salt, const std::string& params_key, Render render, FormatHooks hooks)
    : rc_(rc), engine_(engine), question_(question), render_(std::move(render)), hooks_(std::move(hooks)) {
  const auto& tk = engine.model().tokenizer();
  kv_format_ = reasoning::format_of(hooks_.kind).mode_line();
  if (!render_) render_ = [&tk](const std::string& text) { return tk.encode(text, true, false); };
  question_tokens_ = kv_format_ ? tk.encode(question, true, false) : hooks_.question_tokens;
  if (kv_format_) {
    cue_ = tk.encode(rc.format.answer_cue, false, false);
    for (int32_t t : cue_) cue_text_ += tk.token_to_piece(t);
    detect_ = cue_text_;
    if (const size_t b = detect_.find_first_not_of(' '); b != std::string::npos) detect_.erase(0, b);
  } else {
    cue_text_ = reasoning::plan_for_effort(hooks_.kind, Effort::High).cut_text();
    cue_ = tk.encode(cue_text_, false, true);
  }
  auto_ = requested == serving::ReasoningMode::Auto;
  if (!auto_) {
    choice_ = {*serving::fixed_mode(requested), 0, 1, "requested"};
    source_ = "requested";
  } else {
    if (!rc.difficulty)
      throw invalid_request("reasoning 'auto' needs a difficulty estimator: start the server with --difficulty FILE "
                            "(kvscope train-difficulty) or use fast, mixed or slow",
                            "reasoning", "unsupported_value");
    const auto& spec = rc.difficulty->features;
    const int nq = static_cast<int>(question_tokens_.size());
    tap_ = std::make_unique<reasoning::DifficultyTap>(engine.model().hparams(), spec.layers, spec.pre_rope,
                                                      spec.window_end(nq), nq);
    // The tenant's salt is part of the key (memory and Redis alike): without it, a hit would tell one
    // tenant what another asked (source "cache", no estimate time).
    hash_ = reasoning::request_hash(rc.fingerprint, question_tokens_,
                                    params_key + ";salt=" + std::to_string(cache_salt));
    const auto t0 = std::chrono::steady_clock::now();
    if (auto d = rc.cache->get(hash_)) {
      choice_ = {d->mode, d->difficulty, d->confidence, d->reason};
      source_ = "cache";
    } else {
      // One prefill of the question with the tap (cached blocks replayed into it).
      Request r;
      r.prompt = question_tokens_;
      r.max_tokens = 1;
      r.cache_salt = cache_salt;
      r.tap = tap_.get();
      r.tap_cached_prefix = true;
      r.sampling.temperature = 0;
      engine.wait(engine.submit(std::move(r)));
      choice_ = Controller(rc.controller).choose(rc.difficulty->mlp.estimate(tap_->features()));
      rc.cache->put(hash_, {choice_.mode, choice_.difficulty, choice_.confidence, choice_.reason});
      source_ = "estimate";
    }
    estimate_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  prompt_ = render_mode(choice_.mode);
}

void ReasoningRun::begin(int max_tokens, bool stream) {
  stream_ = stream;
  reasoning::AdaptiveConfig ac;
  ac.controller = rc_.controller;
  ac.kind = hooks_.kind;
  ac.budgets = rc_.budgets;
  ac.max_tokens = max_tokens;
  ac.answer_max_tokens = rc_.format.answer_max_tokens;
  ac.checks = rc_.reestimate && tap_ != nullptr;
  ac.answer_cue = detect_;
  drv_ = std::make_unique<reasoning::AdaptiveDriver>(ac, choice_, auto_);
  drv_->begin_attempt();
}

void ReasoningRun::attach(Request& r, bool continuation) {
  pending_ = {};
  last_stop_ = StopReason::None;
  dec_ = std::make_unique<tok::StreamDecoder>(engine_.model().tokenizer());
  // The engine adapter's events: the step thread feeds the driver before the response writer's
  // callbacks run, so the writer finds the driver up to date when it sees the request finish.
  auto inner_logits = std::move(r.on_logits);
  r.on_logits = [this, inner_logits = std::move(inner_logits)](const float* l, int n) {
    drv_->observe_logits(l, n);
    if (inner_logits) inner_logits(l, n);
  };
  auto inner_token = std::move(r.on_token);
  r.on_token = [this, inner_token = std::move(inner_token)](const TokenEvent& e) {
    if (!e.finished) {
      drv_->on_token(e.token, dec_->push(e.token));  // a budget's cut: the attempt's max_tokens ends it there
    } else {
      drv_->on_text(dec_->flush());
      if (e.stop_reason == StopReason::Eos) drv_->on_eos();
      last_stop_ = e.stop_reason;
    }
    if (inner_token) inner_token(e);
  };
  r.on_step = [this](int) { return on_step(); };
  if (!tap_ || drv_->answering()) return;
  if (!continuation) tap_->reset();  // a new attempt: the engine replays the cached prompt blocks, computes the rest
  r.tap = tap_.get();
  r.tap_cached_prefix = !continuation;  // a continuation's tap has seen its positions (they are skipped)
}

bool ReasoningRun::on_step() {
  Action a;
  if (drv_->check_due()) {
    const auto t0 = std::chrono::steady_clock::now();
    a = drv_->on_estimate(rc_.difficulty->mlp.estimate(tap_->features()));
    rc_.reestimates.fetch_add(1, std::memory_order_relaxed);
    rc_.reestimate_us.fetch_add(static_cast<uint64_t>(
                                    std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count()),
                                std::memory_order_relaxed);
  }
  if (a.what == Do::Continue) return false;
  if (a.what == Do::Restart && stream_ && shown_.load(std::memory_order_relaxed)) {
    drv_->refuse("the stream already sent text");
    return false;
  }
  pending_ = a;
  return true;
}

ReasoningRun::Action ReasoningRun::take_pending() {
  Action a = pending_;
  pending_ = {};
  return a;
}

void ReasoningRun::restart(std::vector<int32_t> prompt) {
  prompt_ = std::move(prompt);
  drv_->begin_attempt();
}

reasoning::ReasoningPlan ReasoningRun::attempt_plan() const {
  if (drv_) return drv_->plan();
  auto p = reasoning::plan_for_effort(hooks_.kind, reasoning::effort_for_mode(hooks_.kind, choice_.mode), rc_.budgets);
  p.requested = true;
  return p;
}

std::vector<int32_t> ReasoningRun::render_mode(Mode m) const {
  return kv_format_ ? render_(rc_.format.prompt(question_, m)) : hooks_.render(m);
}

const std::vector<uint8_t>* ReasoningRun::answer_start_allowed() const {
  return kv_format_ && rc_.format.numeric_answer ? &engine_.model().tokenizer().number_start_mask() : nullptr;
}

const std::vector<uint8_t>* ReasoningRun::answer_continue_allowed() const {
  return kv_format_ && rc_.format.numeric_answer ? &engine_.model().tokenizer().number_continue_mask() : nullptr;
}

nlohmann::json ReasoningRun::report() const {
  const Mode m = drv_ ? drv_->mode() : choice_.mode;
  nlohmann::json j = drv_ ? drv_->report() : nlohmann::json::object();
  j["mode"] = std::string(reasoning::mode_name(m));
  j["effort"] = std::string(effort_name(reasoning::effort_for_mode(hooks_.kind, m)));
  j["requested"] = auto_ ? "auto" : std::string(reasoning::mode_name(choice_.mode));
  j["source"] = source_;
  j["initial_mode"] = std::string(reasoning::mode_name(choice_.mode));
  j["reason"] = choice_.reason;
  if (!auto_) {  // a requested mode: no decision to trace
    for (const char* k : {"initial_difficulty", "confidence", "trace", "switches", "final_mode"}) j.erase(k);
    return j;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash_));
  j["estimate_ms"] = estimate_ms_;
  j["decision_key"] = "kv_pattern:" + std::string(hex);
  if (drv_ && drv_->refused_upgrades()) j["upgrades_refused_streamed"] = drv_->refused_upgrades();
  if (drv_ && drv_->refused_retries()) j["retries_refused_streamed"] = drv_->refused_retries();
  return j;
}

}  // namespace kvscope::server
