#include "reasoning/planned_generate.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "reasoning/driver.h"
#include "util/error.h"

namespace kvscope::reasoning {

namespace {
double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

PlannedResult generate_planned(Context& ctx, const std::vector<int32_t>& prompt, const ReasoningPlan& plan,
                               const SamplingParams& sp, int max_tokens,
                               const std::function<void(const std::string&, const std::string&)>& on_text) {
  const auto& tk = ctx.model().tokenizer();
  const int n_vocab = ctx.model().hparams().n_vocab;
  if (prompt.empty()) throw InputError("empty prompt");
  if (max_tokens < 1) throw InputError("max tokens must be at least 1");
  if (static_cast<int>(prompt.size()) >= ctx.n_ctx())
    throw LimitError("prompt of " + std::to_string(prompt.size()) + " tokens does not fit the context of " +
                     std::to_string(ctx.n_ctx()));
  PlannedResult res;
  Driver drv(plan);
  auto show = [&] {
    const auto d = drv.take();
    if (on_text && (!d.reasoning.empty() || !d.content.empty())) on_text(d.reasoning, d.content);
  };
  const bool numeric_cut = plan.fmt().mode_line();  // its cut is an answer cue: a number follows
  int answer_left = -1;  // kvscope's forced answer: tokens left for its number (-1: not answering)

  ctx.reset();
  auto t0 = std::chrono::steady_clock::now();
  const std::vector<float>* logits = &ctx.eval(prompt);
  res.prompt_ms = ms_since(t0);
  auto t1 = std::chrono::steady_clock::now();
  std::vector<int32_t> history = prompt;
  std::vector<float> masked;
  Sampler sampler(sp);
  tok::StreamDecoder dec(tk);
  res.stop_reason = StopReason::Length;
  Driver::Action act = Driver::Action::Continue;
  double prob_sum = 0;
  int prob_n = 0;
  for (int g = 0; g < max_tokens; ++g) {
    if (act == Driver::Action::Cut) {  // the budget is spent: the engine closes the reasoning
      const std::string cut = plan.cut_text();
      const auto ids = tk.encode(cut, false, true);
      if (ctx.n_past() + static_cast<int>(ids.size()) >= ctx.n_ctx()) {
        res.stop_reason = StopReason::Context;
        break;
      }
      const std::string held = dec.flush();
      res.text += held + cut;
      drv.on_text(held);
      drv.on_cut(cut);
      show();
      history.insert(history.end(), ids.begin(), ids.end());
      logits = &ctx.eval(ids);
      act = Driver::Action::Continue;
      if (numeric_cut) {
        masked = *logits;
        keep_only(masked.data(), n_vocab, tk.number_start_mask());
        logits = &masked;
        answer_left = 8;
      }
    }
    {  // the top token's probability under the logits it is drawn from
      const float* l = logits->data();
      const float m = *std::max_element(l, l + n_vocab);
      double z = 0;
      for (int v = 0; v < n_vocab; ++v) z += std::exp(static_cast<double>(l[v] - m));
      prob_sum += 1.0 / z;
      ++prob_n;
    }
    const int32_t id = sampler.sample(logits->data(), n_vocab, history);
    if (tk.is_eog(id)) {
      res.stop_reason = StopReason::Eos;
      break;
    }
    // A forced numeric answer ends with its number (as the server's continue_allowed mask does).
    if (answer_left >= 0) {
      const auto& goes_on = tk.number_continue_mask();
      if (answer_left < 8 && !goes_on.empty() && !goes_on[static_cast<size_t>(id)]) {
        res.stop_reason = StopReason::Stop;
        break;
      }
      if (--answer_left < 0) break;
    }
    res.tokens.push_back(id);
    history.push_back(id);
    const std::string piece = dec.push(id);
    res.text += piece;
    act = drv.on_token(piece);
    show();
    if (ctx.n_past() >= ctx.n_ctx()) {
      res.stop_reason = StopReason::Context;
      break;
    }
    logits = &ctx.eval({id});
  }
  const std::string tail = dec.flush();
  res.text += tail;
  drv.on_text(tail);
  drv.finish();
  show();
  res.reasoning = drv.reasoning();
  res.content = drv.content();
  res.reasoning_tokens = drv.reasoning_tokens();
  res.budget_cut = drv.budget_cut();
  res.max_prob = prob_n ? prob_sum / prob_n : 0.0;
  res.gen_ms = ms_since(t1);
  return res;
}

}  // namespace kvscope::reasoning
