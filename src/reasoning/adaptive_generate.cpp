#include "reasoning/adaptive_generate.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "reasoning/adaptive_driver.h"
#include "signals/coe_scores.h"
#include "signals/kv_tap.h"
#include "util/error.h"

namespace kvscope::reasoning {

std::string ReasoningFormat::prompt(const std::string& question, Mode m) const {
  std::string line = mode_line;
  const size_t at = line.find("{mode}");
  if (at != std::string::npos) line.replace(at, 6, std::string(mode_name(m)));
  // The mode line starts a line of its own.
  const bool newline = question.empty() || question.back() == '\n';
  return question + (newline ? "" : "\n") + line;
}

namespace {

using clock_t_ = std::chrono::steady_clock;
double ms_since(clock_t_::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_t_::now() - t).count();
}

int32_t argmax(const float* x, int n) { return static_cast<int32_t>(std::max_element(x, x + n) - x); }

// The logits after the answer cue; with a numeric answer, only tokens that can open a number stay.
std::vector<float> answer_start_logits(const std::vector<float>& logits, const tok::Tokenizer& tk, bool numeric) {
  std::vector<float> out = logits;
  if (numeric) keep_only(out.data(), static_cast<int>(out.size()), tk.number_start_mask());
  return out;
}

// Restores the context's previous tap however the run ends.
struct TapGuard {
  Context& ctx;
  KVTap* prev;
  ~TapGuard() { ctx.set_tap(prev); }
};

}  // namespace

AdaptiveResult generate_adaptive(Context& ctx, const std::string& question, const SamplingParams& sp,
                                 const FeatureSpec& spec, const DifficultyMLP* mlp, const AdaptiveOptions& o) {
  const auto& tk = ctx.model().tokenizer();
  const HParams& hp = ctx.model().hparams();
  const int n_vocab = hp.n_vocab;
  if (!o.forced && !o.cached && !mlp)
    throw InputError("reasoning 'auto' needs a difficulty estimator (train one with kvscope train-difficulty)");
  if (o.max_tokens < 1) throw InputError("max tokens must be at least 1");
  Controller ctl(o.controller);  // validates the configuration
  const bool kv_format = format_of(o.kind).mode_line();
  if (!kv_format && !o.render) throw InputError("reasoning format '" + std::string(format_name(o.kind)) + "' needs a prompt renderer");
  const auto q = o.question_tokens.empty() ? tk.encode(question, true, false) : o.question_tokens;
  if (q.size() <= 1) throw InputError("empty question");
  if (static_cast<int>(q.size()) >= ctx.n_ctx())
    throw LimitError("prompt of " + std::to_string(q.size()) + " tokens does not fit the context of " +
                     std::to_string(ctx.n_ctx()));

  AdaptiveResult res;
  std::unique_ptr<DifficultyTap> tap;
  if (mlp || o.on_checkpoint || o.want_features)
    tap = std::make_unique<DifficultyTap>(hp, spec.layers, spec.pre_rope, spec.window_end(static_cast<int>(q.size())),
                                          static_cast<int>(q.size()));
  if (mlp && tap && mlp->input_dim() != tap->dim())
    throw InputError("difficulty estimator expects " + std::to_string(mlp->input_dim()) + " features, the tap gives " +
                     std::to_string(tap->dim()));
  TapGuard guard{ctx, ctx.tap()};
  // With a monitor both taps observe the same pass.
  std::unique_ptr<signals::TapFanout> fan;
  if (o.monitor && tap)
    fan = std::make_unique<signals::TapFanout>(std::vector<KVTap*>{tap.get(), o.monitor->tap()}, &ctx.model());
  ctx.set_tap(fan ? static_cast<KVTap*>(fan.get()) : tap ? static_cast<KVTap*>(tap.get()) : o.monitor ? o.monitor->tap() : nullptr);
  ctx.reset();

  auto t0 = clock_t_::now();
  ctx.eval(q);
  res.prompt_ms = ms_since(t0);
  auto t1 = clock_t_::now();
  if (tap) res.initial_features = tap->features();  // the response's KV joins the pool from here on
  ModeChoice choice;
  if (o.forced) {
    choice.mode = *o.forced;
    choice.confidence = 1;
    choice.reason = "requested";
  } else if (o.cached) {
    choice = *o.cached;
  } else {
    choice = ctl.choose(mlp->estimate(res.initial_features));
  }
  res.initial = choice;
  res.estimate_ms = ms_since(t1);
  const DifficultyTap::State q_state = tap ? tap->state() : DifficultyTap::State{};
  const int every = ctl.config().check_every;
  // The cut: kvscope's answer cue (a number follows), or the format's close of the reasoning.
  const std::string cut = kv_format ? o.format.answer_cue : plan_for_effort(o.kind, Effort::High).cut_text();
  const auto cue = tk.encode(cut, false, !kv_format);
  const bool numeric = kv_format && o.format.numeric_answer;
  std::string cue_text;  // as the model would write it, to notice an answer already under way
  for (int32_t c : cue) cue_text += tk.token_to_piece(c);
  const std::vector<uint8_t>& number_goes_on = tk.number_continue_mask();
  if (const size_t b = cue_text.find_first_not_of(' '); b != std::string::npos) cue_text.erase(0, b);
  std::vector<float> after_cue;  // the logits that open a forced answer
  // Every decision is the adaptive driver's; this loop feeds it the Context's tokens and estimates.
  AdaptiveConfig ac;
  ac.controller = o.controller;
  ac.kind = o.kind;
  ac.budgets = o.budgets;
  ac.max_tokens = o.max_tokens;
  ac.answer_max_tokens = o.format.answer_max_tokens;
  ac.checks = mlp && tap && o.runtime_checks;
  ac.answer_cue = cue_text;
  AdaptiveDriver drv(ac, choice, !o.forced);

  Sampler sampler(sp);
  std::vector<float> saved;
  for (;;) {
    drv.begin_attempt();
    const Mode m = drv.mode();
    const auto p = kv_format ? tk.encode(o.format.prompt(question, m), true, false) : o.render(m);
    if (static_cast<int>(p.size()) >= ctx.n_ctx())
      throw LimitError("prompt of " + std::to_string(p.size()) + " tokens does not fit the context of " +
                       std::to_string(ctx.n_ctx()));
    size_t keep = 0;  // the question's cached KV that this prompt shares
    while (keep < q.size() && keep + 1 < p.size() && q[keep] == p[keep]) ++keep;
    keep = std::min<size_t>(keep, static_cast<size_t>(ctx.n_past()));
    auto tp = clock_t_::now();
    ctx.truncate(static_cast<int>(keep));
    if (tap) tap->restore(q_state);
    if (o.monitor) o.monitor->begin(static_cast<int>(p.size()));
    const std::vector<float>* logits = &ctx.eval(std::vector<int32_t>(p.begin() + keep, p.end()));
    res.prompt_ms += ms_since(tp);

    auto tg = clock_t_::now();
    std::vector<int32_t> history = p;
    res.tokens.clear();
    res.text.clear();
    tok::StreamDecoder dec(tk);
    const int cap = drv.attempt_cap();
    int answer_left = 0, answer_n = 0;
    bool answering = false;
    AdaptiveDriver::Action act;
    res.stop_reason = StopReason::Length;
    // Writes the cut (an early answer, or the thinking budget) and switches to answering.
    auto write_cut = [&]() -> bool {
      if (ctx.n_past() + static_cast<int>(cue.size()) >= ctx.n_ctx()) {
        res.stop_reason = StopReason::Context;
        return false;
      }
      std::string written;
      for (int32_t c : cue) {
        res.tokens.push_back(c);
        history.push_back(c);
        if (kv_format) written += dec.push(c);  // the cue's tokens decoded as the model would write them
      }
      if (!kv_format) {  // the held-back bytes, then the close as written (a special token's text included)
        const std::string held = dec.flush();
        res.text += held;
        drv.on_text(held);
        written = cut;
      }
      res.text += written;
      drv.on_cut(written);
      after_cue = answer_start_logits(ctx.eval(cue), tk, numeric);
      logits = &after_cue;
      answering = true;
      answer_left = drv.answer_tokens();
      res.stop_reason = StopReason::EarlyAnswer;
      return true;
    };
    for (;;) {
      if (answering ? answer_left-- <= 0 : drv.generated() >= cap) break;
      if (!answering && drv.tokens().needs_cut()) {
        if (!write_cut()) break;
        if (answer_left-- <= 0) break;
      }
      drv.observe_logits(logits->data(), n_vocab);
      const int32_t id = sampler.sample(logits->data(), n_vocab, history);
      if (o.monitor) o.monitor->token(logits->data(), n_vocab, id);
      if (tk.is_eog(id)) {
        drv.on_eos();
        res.stop_reason = answering ? StopReason::EarlyAnswer : StopReason::Eos;
        break;
      }
      // A forced numeric answer ends with its number, as if the model had stopped there.
      if (answering && numeric && answer_n > 0 && !number_goes_on.empty() && !number_goes_on[static_cast<size_t>(id)]) {
        drv.on_eos();
        break;
      }
      res.tokens.push_back(id);
      history.push_back(id);
      {
        const std::string piece = dec.push(id);
        res.text += piece;
        drv.on_token(id, piece);  // a budget's cut is taken at the top of the loop
      }
      if (answering) ++answer_n;
      if (ctx.n_past() >= ctx.n_ctx()) {
        res.stop_reason = StopReason::Context;
        break;
      }
      logits = &ctx.eval({id});
      const int g = drv.generated();
      if (answering) continue;

      if (o.on_checkpoint && tap && g % every == 0) {
        const bool answer_started = kv_format ? res.text.find(cue_text) != std::string::npos : !drv.tokens().in_reasoning();
        // Probe: force the answer here (or let the model finish the one it began), note what comes
        // out, then undo it.
        const auto st = tap->state();
        const int np = ctx.n_past();
        saved = *logits;
        const auto feats = tap->features();
        tok::StreamDecoder pd(tk);
        std::string forced = res.text;
        const std::vector<float>* pl = &saved;
        if (!answer_started) {
          after_cue = answer_start_logits(ctx.eval(cue), tk, numeric);
          pl = &after_cue;
          if (kv_format) {
            for (int32_t c : cue) forced += pd.push(c);
          } else {
            forced += pd.flush() + cut;
          }
        }
        const int probe_max = kv_format ? o.format.answer_max_tokens : 32;  // a think format's answer: a short sentence
        for (int i = 0; i < probe_max && ctx.n_past() < ctx.n_ctx(); ++i) {
          const int32_t a = argmax(pl->data(), n_vocab);
          if (tk.is_eog(a)) break;
          if (!answer_started && i > 0 && numeric && !number_goes_on.empty() &&
              !number_goes_on[static_cast<size_t>(a)])
            break;
          forced += pd.push(a);
          pl = &ctx.eval({a});
        }
        forced += pd.flush();
        ctx.truncate(np);
        tap->restore(st);
        logits = &saved;
        o.on_checkpoint(g, feats, forced);
      }
      if (o.monitor && m != Mode::Slow && drv.probe_due()) {
        double pc = 0, below = 0;
        if (o.monitor->cut(m, g, pc, below)) {
          act = drv.on_probe(pc, below);  // restart slower, as an upgrade does
          if (act.what == AdaptiveDriver::Do::Restart) break;
        }
      }
      if (!drv.check_due()) continue;
      act = drv.on_estimate(mlp->estimate(tap->features()));
      if (act.what == AdaptiveDriver::Do::Restart) break;
      if (act.what == AdaptiveDriver::Do::Cut && !write_cut()) break;
    }
    {
      const std::string tail = dec.flush();
      res.text += tail;
      drv.on_text(tail);
      drv.finish();
    }
    res.gen_ms += ms_since(tg);
    if (act.what == AdaptiveDriver::Do::Restart) continue;  // an upgrade or an early cut
    if (drv.on_end(res.stop_reason).what == AdaptiveDriver::Do::Restart) continue;  // the answer-confidence retry
    break;
  }
  res.final_mode = drv.mode();
  res.generated_total = drv.generated_total();
  if (drv.answer_confidence() > 0) res.answer_confidence = drv.answer_confidence();
  res.reasoning = drv.tokens().reasoning();  // the final attempt's, split by the format
  res.content = drv.tokens().content();
  res.reasoning_tokens = drv.tokens().reasoning_tokens();
  res.report = drv.report();
  res.report["estimate_ms"] = res.estimate_ms;
  res.report["prompt_ms"] = res.prompt_ms;
  res.report["gen_ms"] = res.gen_ms;
  return res;
}

}  // namespace kvscope::reasoning
