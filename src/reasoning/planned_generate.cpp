#include "reasoning/planned_generate.h"

#include <algorithm>
#include <chrono>

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
  const bool content_only = plan.format == FormatKind::None || (is_think_format(plan.format) && !plan.thinking);
  Splitter split(content_only ? FormatKind::None : plan.format, !content_only);
  auto show = [&](const Splitter::Delta& d) {
    res.reasoning += d.reasoning;
    res.content += d.content;
    if (on_text && (!d.reasoning.empty() || !d.content.empty())) on_text(d.reasoning, d.content);
  };
  const bool numeric_cut = plan.format == FormatKind::Kvscope;
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
  for (int g = 0; g < max_tokens; ++g) {
    // The budget: reasoning tokens spent and the reasoning still open -> the engine closes it.
    if (plan.budget >= 0 && !res.budget_cut && res.reasoning_tokens >= plan.budget && split.in_reasoning()) {
      const std::string cut = plan.cut_text();
      const auto ids = tk.encode(cut, false, true);
      if (ctx.n_past() + static_cast<int>(ids.size()) >= ctx.n_ctx()) {
        res.stop_reason = StopReason::Context;
        break;
      }
      show(split.push(dec.flush()));
      res.text += cut;
      show(split.push(cut));
      history.insert(history.end(), ids.begin(), ids.end());
      logits = &ctx.eval(ids);
      res.budget_cut = true;
      if (numeric_cut) {
        masked = *logits;
        keep_only(masked.data(), n_vocab, tk.number_start_mask());
        logits = &masked;
        answer_left = 8;
      }
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
    if (split.in_reasoning()) ++res.reasoning_tokens;
    res.tokens.push_back(id);
    history.push_back(id);
    const std::string piece = dec.push(id);
    res.text += piece;
    show(split.push(piece));
    if (ctx.n_past() >= ctx.n_ctx()) {
      res.stop_reason = StopReason::Context;
      break;
    }
    logits = &ctx.eval({id});
  }
  const std::string tail = dec.flush();
  res.text += tail;
  show(split.push(tail));
  show(split.flush());
  res.gen_ms = ms_since(t1);
  return res;
}

}  // namespace kvscope::reasoning
