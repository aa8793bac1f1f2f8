#include "reasoning/adaptive_generate.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "reasoning/driver.h"
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
  const bool kv_format = o.kind == FormatKind::Kvscope;
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
  ctl.start(choice);
  res.initial = choice;
  res.estimate_ms = ms_since(t1);
  const bool checks = mlp && tap && !o.forced && o.runtime_checks;
  const bool retries = !o.forced && ctl.config().retry_below > 0;
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
  // An attempt in mode m runs under that effort's plan (think formats: its think block and budget).
  auto plan_of = [&](Mode m) { return plan_for_effort(o.kind, effort_for_mode(o.kind, m), o.budgets); };
  Driver drv(plan_of(ctl.mode()));

  Sampler sampler(sp);
  std::vector<float> saved;
  for (;;) {
    const Mode m = ctl.mode();
    const auto p = kv_format ? tk.encode(o.format.prompt(question, m), true, false) : o.render(m);
    drv.restart(plan_of(m));  // think formats: medium's budget cuts the thinking; kvscope has its caps
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
    // kvscope: each mode's token cap; other formats: what is left (their budget cuts the thinking).
    const int cap = kv_format ? std::min(ctl.config().cap(m), o.max_tokens - res.generated_total)
                              : o.max_tokens - res.generated_total;
    const int answer_max = kv_format ? o.format.answer_max_tokens : std::max(1, o.max_tokens - res.generated_total);
    int g = 0, answer_left = 0;
    bool answering = false;
    signals::LogitStats answer_stats;  // the attempt's MaxProb, for the answer-confidence retry
    Controller::Action act = Controller::Action::Continue;
    res.stop_reason = StopReason::Length;
    // Writes the cut and switches to answering (an early answer, or the thinking budget).
    auto force_cut = [&]() -> bool {
      if (ctx.n_past() + static_cast<int>(cue.size()) >= ctx.n_ctx()) {
        res.stop_reason = StopReason::Context;
        return false;
      }
      for (int32_t c : cue) {
        res.tokens.push_back(c);
        history.push_back(c);
      }
      const std::string held = dec.flush();
      res.text += held + cut;  // as written (a special token's text included)
      drv.on_text(held);
      drv.on_cut(cut);
      after_cue = answer_start_logits(ctx.eval(cue), tk, numeric);
      logits = &after_cue;
      answering = true;
      answer_left = std::min(answer_max, std::max(1, o.max_tokens - res.generated_total));
      res.stop_reason = StopReason::EarlyAnswer;
      return true;
    };
    for (;;) {
      if (answering ? answer_left-- <= 0 : g >= cap) break;
      if (!answering && drv.needs_cut()) {
        if (!force_cut()) break;
        if (answer_left-- <= 0) break;
      }
      const int32_t id = sampler.sample(logits->data(), n_vocab, history);
      ++res.generated_total;
      if (retries && m != Mode::Slow) answer_stats.add(logits->data(), n_vocab, id);  // slow is never retried
      if (o.monitor) o.monitor->token(logits->data(), n_vocab, id);
      if (tk.is_eog(id)) {
        res.stop_reason = answering ? StopReason::EarlyAnswer : StopReason::Eos;
        break;
      }
      // A forced numeric answer ends with its number, as if the model had stopped there.
      if (answering && numeric && answer_left < o.format.answer_max_tokens - 1 &&
          !number_goes_on.empty() && !number_goes_on[static_cast<size_t>(id)])
        break;
      res.tokens.push_back(id);
      history.push_back(id);
      {
        const std::string piece = dec.push(id);
        res.text += piece;
        drv.on_token(piece);  // a budget's cut is taken at the top of the loop
      }
      if (ctx.n_past() >= ctx.n_ctx()) {
        res.stop_reason = StopReason::Context;
        break;
      }
      logits = &ctx.eval({id});
      if (answering || ++g % every != 0) continue;
      const bool answer_started = kv_format ? res.text.find(cue_text) != std::string::npos : !drv.in_reasoning();

      if (o.on_checkpoint && tap) {
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
      if (o.monitor && !o.forced && m != Mode::Slow && !answer_started) {
        double pc = 0, below = 0;
        if (o.monitor->cut(m, g, pc, below) && ctl.early_cut(g, pc, below)) {
          act = Controller::Action::Upgrade;  // restart slower, as an upgrade does
          break;
        }
      }
      if (!checks) continue;
      act = ctl.observe(g, mlp->estimate(tap->features()), answer_started);
      if (act == Controller::Action::Upgrade) break;
      if (act == Controller::Action::EarlyAnswer) {
        if (kv_format) {  // the cue's tokens decoded as the model would write them (kept as before)
          if (ctx.n_past() + static_cast<int>(cue.size()) >= ctx.n_ctx()) {
            res.stop_reason = StopReason::Context;
            break;
          }
          std::string written;
          for (int32_t c : cue) {
            res.tokens.push_back(c);
            history.push_back(c);
            written += dec.push(c);
          }
          res.text += written;
          drv.on_cut(written);
          after_cue = answer_start_logits(ctx.eval(cue), tk, numeric);
          logits = &after_cue;
          answering = true;
          answer_left = o.format.answer_max_tokens;
          res.stop_reason = StopReason::EarlyAnswer;
        } else if (!force_cut()) {
          break;
        }
      }
    }
    {
      const std::string tail = dec.flush();
      res.text += tail;
      drv.on_text(tail);
      drv.finish();
    }
    res.gen_ms += ms_since(tg);
    if (act == Controller::Action::Upgrade && res.generated_total < o.max_tokens) continue;
    if (retries && m != Mode::Slow && res.stop_reason != StopReason::Context && res.generated_total < o.max_tokens) {
      res.answer_confidence = answer_stats.max_prob();
      if (ctl.check_answer(static_cast<int>(res.tokens.size()), res.answer_confidence)) continue;
    }
    break;
  }
  res.final_mode = ctl.mode();
  res.reasoning = drv.reasoning();  // the final attempt's, split by the format
  res.content = drv.content();
  res.reasoning_tokens = drv.reasoning_tokens();
  res.report = ctl.to_json();
  res.report["format"] = std::string(format_name(o.kind));
  res.report["generated_total"] = res.generated_total;
  if (res.answer_confidence > 0) res.report["answer_confidence"] = res.answer_confidence;
  res.report["estimate_ms"] = res.estimate_ms;
  res.report["prompt_ms"] = res.prompt_ms;
  res.report["gen_ms"] = res.gen_ms;
  return res;
}

}  // namespace kvscope::reasoning
