#include "server/reasoning_run.h"

#include <chrono>
#include <cstdio>

#include "server/server_impl.h"

namespace kvscope::server {

using reasoning::Controller;
using reasoning::Mode;

ReasoningRun::ReasoningRun(ReasoningContext& rc, Engine& engine, const std::string& requested, const std::string& question,
                           uint64_t cache_salt, const std::string& params_key, Render render, FormatHooks hooks)
    : rc_(rc), engine_(engine), question_(question), render_(std::move(render)), hooks_(std::move(hooks)) {
  const auto& tk = engine.model().tokenizer();
  kv_format_ = hooks_.kind == reasoning::FormatKind::Kvscope;
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
    detect_ = "</think>";
  }
  auto_ = requested == "auto";
  if (!auto_) {
    mode_ = *reasoning::parse_mode(requested);  // validated by the protocol parser
    choice_ = {mode_, 0, 1, "requested"};
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
      const auto e = rc.difficulty->mlp.estimate(tap_->features());
      choice_ = Controller(rc.controller).choose(e);
      rc.cache->put(hash_, {choice_.mode, choice_.difficulty, choice_.confidence,
                            choice_.reason});
      source_ = "estimate";
    }
    estimate_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    mode_ = choice_.mode;
    Controller ctl(rc.controller);
    ctl.start(choice_);
    if (rc.analyzer)
      watch_ = rc.analyzer->watch(*tap_, std::move(ctl));
    else
      ctl_ = std::make_unique<Controller>(std::move(ctl));
    if (rc.controller.retry_below > 0) answer_stats_ = std::make_shared<AnswerStats>();
  }
  prompt_ = render_mode(mode_);
}

ReasoningRun::~ReasoningRun() {
  if (watch_) rc_.analyzer->unwatch(watch_);
}

void ReasoningRun::attach(Request& r) {
  if (answer_stats_ && mode_ != Mode::Slow) {  // a slow answer is never retried
    if (!answering_) {  // a new attempt (an early answer's continuation belongs to its attempt)
      std::lock_guard<std::mutex> lk(answer_stats_->mu);
      answer_stats_->stats = signals::LogitStats();
    }
    auto box = answer_stats_;
    auto inner_logits = std::move(r.on_logits);
    r.on_logits = [box, inner_logits = std::move(inner_logits)](const float* l, int n) {
      {
        std::lock_guard<std::mutex> lk(box->mu);
        box->stats.observe(l, n);
      }
      if (inner_logits) inner_logits(l, n);
    };
    auto inner_token = std::move(r.on_token);
    r.on_token = [box, inner_token = std::move(inner_token)](const TokenEvent& e) {
      if (!e.finished && e.token >= 0) {
        std::lock_guard<std::mutex> lk(box->mu);
        if (box->stats.pending()) box->stats.choose(e.token);
      }
      if (inner_token) inner_token(e);
    };
  }
  if (!tap_ || answering_) return;
  tap_->reset();  // the engine replays the cached prompt blocks, computes the rest
  r.tap = tap_.get();
  r.tap_cached_prefix = true;
  if (!watch_) return;
  auto inner = std::move(r.on_token);
  auto w = watch_;
  const tok::Tokenizer* tk = &engine_.model().tokenizer();
  std::string cue = detect_;
  // The last few characters of the attempt's text, to notice the model writing the answer cue.
  auto* analyzer = rc_.analyzer.get();  // outlives requests (torn down after the engine stops)
  r.on_token = [inner = std::move(inner), w, analyzer, tk, cue, tail = std::string()](const TokenEvent& e) mutable {
    if (!e.finished) {
      if (e.token >= 0 && !w->answer_started.load(std::memory_order_relaxed)) {
        tail += tk->token_to_piece(e.token);
        if (tail.find(cue) != std::string::npos) w->answer_started.store(true);
        if (tail.size() > 2 * cue.size() + 16) tail.erase(0, tail.size() - cue.size());
      }
      analyzer->count_token(*w);
    }
    inner(e);
  };
}

ReasoningRun::Switch ReasoningRun::pending() const {
  if (!watch_ || answering_) return Switch::None;
  switch (static_cast<Controller::Action>(watch_->action.load())) {
    case Controller::Action::EarlyAnswer: return Switch::EarlyAnswer;
    case Controller::Action::Upgrade: return Switch::Upgrade;
    default: return Switch::None;
  }
}

std::vector<int32_t> ReasoningRun::next(Switch s, const std::vector<int32_t>& generated) {
  ++attempts_;
  if (s == Switch::EarlyAnswer) {
    answering_ = true;
    std::vector<int32_t> p = prompt_;
    p.insert(p.end(), generated.begin(), generated.end());
    p.insert(p.end(), cue_.begin(), cue_.end());
    return p;
  }
  {
    std::lock_guard<std::mutex> lk(watch_->mu);
    mode_ = watch_->ctl.mode();
  }
  prompt_ = render_mode(mode_);
  watch_->resume();
  return prompt_;
}

void ReasoningRun::upgrade_refused() {
  ++refused_upgrades_;
  {
    std::lock_guard<std::mutex> lk(watch_->mu);
    watch_->ctl.refuse_upgrade(mode_, "the stream already sent text");
  }
  watch_->action.store(static_cast<int>(Controller::Action::Continue));
}

bool ReasoningRun::retry_after_answer(int generated, bool can_restart, int limit) {
  if (!answer_stats_ || mode_ == Mode::Slow) return false;
  {
    std::lock_guard<std::mutex> lk(answer_stats_->mu);
    answer_confidence_ = answer_stats_->stats.max_prob();
  }
  Mode to;
  std::vector<int32_t> retry_prompt;
  {
    std::unique_lock<std::mutex> lk;
    Controller* ctl = ctl_.get();
    if (watch_) {
      lk = std::unique_lock<std::mutex>(watch_->mu);
      ctl = &watch_->ctl;
    }
    if (!ctl->check_answer(generated, answer_confidence_)) return false;
    to = ctl->mode();
    retry_prompt = render_mode(to);
    const char* refused = !can_restart ? "the stream already sent text"
                          : static_cast<int>(retry_prompt.size()) + 1 >= limit ? "the slower mode's prompt does not fit the context"
                                                                             : nullptr;
    if (refused) {  // the controller goes back, so the report shows no retry that did not happen
      ctl->refuse_retry(mode_, refused);
      ++refused_retries_;
      return false;
    }
  }
  ++attempts_;
  mode_ = to;
  answering_ = false;
  prompt_ = std::move(retry_prompt);
  if (watch_) watch_->resume();
  return true;
}

std::vector<int32_t> ReasoningRun::render_mode(Mode m) const {
  return kv_format_ ? render_(rc_.format.prompt(question_, m)) : hooks_.render(m);
}

reasoning::ReasoningPlan ReasoningRun::attempt_plan() const {
  if (kv_format_) {
    auto p = reasoning::plan_for_effort(reasoning::FormatKind::Kvscope,
                                        reasoning::effort_for_mode(reasoning::FormatKind::Kvscope, mode_));
    p.requested = true;
    return p;
  }
  auto p = reasoning::plan_for_effort(hooks_.kind, reasoning::effort_for_mode(hooks_.kind, mode_), rc_.budgets);
  p.requested = true;
  return p;
}

int ReasoningRun::attempt_cap(int remaining) const {
  return kv_format_ ? std::min(remaining, rc_.controller.cap(mode_)) : remaining;
}

// A think format's answer after the cut runs on to EOS or max_tokens (the caller clamps it).
int ReasoningRun::answer_max_tokens() const { return kv_format_ ? rc_.format.answer_max_tokens : 1 << 30; }

const std::vector<uint8_t>* ReasoningRun::answer_start_allowed() const {
  return kv_format_ && rc_.format.numeric_answer ? &engine_.model().tokenizer().number_start_mask() : nullptr;
}

const std::vector<uint8_t>* ReasoningRun::answer_continue_allowed() const {
  return kv_format_ && rc_.format.numeric_answer ? &engine_.model().tokenizer().number_continue_mask() : nullptr;
}

nlohmann::json ReasoningRun::report() const {
  nlohmann::json j = {{"mode", std::string(reasoning::mode_name(mode_))},
                      {"effort", std::string(effort_name(reasoning::effort_for_mode(hooks_.kind, mode_)))},
                      {"requested", auto_ ? "auto" : std::string(reasoning::mode_name(choice_.mode))},
                      {"source", source_},
                      {"initial_mode", std::string(reasoning::mode_name(choice_.mode))},
                      {"reason", choice_.reason},
                      {"attempts", attempts_},
                      {"answered_early", answering_}};
  if (auto_) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash_));
    j["initial_difficulty"] = choice_.difficulty;
    j["confidence"] = choice_.confidence;
    j["estimate_ms"] = estimate_ms_;
    j["decision_key"] = "kv_pattern:" + std::string(hex);
    if (watch_) {
      std::lock_guard<std::mutex> lk(watch_->mu);
      const auto c = watch_->ctl.to_json();
      j["trace"] = c["trace"];
      j["switches"] = c["switches"];
    }
    if (refused_upgrades_) j["upgrades_refused_streamed"] = refused_upgrades_;
    if (refused_retries_) j["retries_refused_streamed"] = refused_retries_;
    if (answer_confidence_ >= 0) j["answer_confidence"] = answer_confidence_;
    if (ctl_) {
      const auto c = ctl_->to_json();
      j["switches"] = c["switches"];
    }
  }
  return j;
}

}  // namespace kvscope::server
