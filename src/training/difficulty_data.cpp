#include "training/difficulty_data.h"

#include <memory>

#include "engine/prefill_tapped.h"
#include "signals/kv_tap.h"
#include "util/error.h"

namespace kvscope::reasoning {

int ProblemRecord::label(Mode unsolved) const {
  for (int m = 0; m < kClasses; ++m)
    if (correct[m]) return m;
  return static_cast<int>(unsolved);
}

int ProblemRecord::checkpoint_label(const Checkpoint& c, Mode unsolved) const {
  if (c.forced_correct) return static_cast<int>(Mode::Fast);
  const int m = static_cast<int>(c.mode);
  if (correct[m]) return m;
  if (correct[static_cast<int>(Mode::Slow)]) return static_cast<int>(Mode::Slow);
  return solved() || unsolved == Mode::Slow ? m : static_cast<int>(Mode::Fast);
}

std::string tinygsm_question(const tinygsm::Item& item) {
  return tinygsm::user_message(item) + "\n";
}

namespace {

// One answer of a problem at a forced mode; the first mode's run also keeps the question's features.
AdaptiveOptions forced_run(Mode mode, const CollectOptions& o) {
  AdaptiveOptions ao;
  ao.forced = mode;
  ao.max_tokens = o.max_tokens;
  ao.controller.check_every = o.check_every;
  ao.want_features = mode == Mode::Fast;
  return ao;
}

}  // namespace

std::vector<ProblemRecord> collect_tinygsm(Context& ctx, const std::vector<tinygsm::Item>& items,
                                           const CollectOptions& o) {
  const auto& tk = ctx.model().tokenizer();
  const HParams& hp = ctx.model().hparams();
  SamplingParams greedy;
  greedy.temperature = 0;
  std::vector<ProblemRecord> out;
  out.reserve(items.size());
  int fast_fail = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& it = items[i];
    const std::string question = tinygsm_question(it);
    ProblemRecord rec;
    rec.steps = it.steps;
    for (int m = 0; m < kClasses; ++m) {
      const Mode mode = static_cast<Mode>(m);
      AdaptiveOptions ao = forced_run(mode, o);
      std::vector<ProblemRecord::Checkpoint> cps;
      if (o.checkpoints && mode != Mode::Fast)
        ao.on_checkpoint = [&](int g, const std::vector<float>& f, const std::string& forced) {
          const auto got = tinygsm::parse_answer(forced);
          cps.push_back({mode, g, f, got && *got == it.answer});
        };
      auto r = generate_adaptive(ctx, question, greedy, o.spec, nullptr, ao);
      const auto got = tinygsm::parse_answer(r.text);
      rec.correct[m] = got && *got == it.answer;
      rec.tokens[m] = r.generated_total;
      if (m == 0) rec.features = std::move(r.initial_features);
      for (auto& c : cps) rec.checkpoints.push_back(std::move(c));
    }
    if (!o.variants.empty()) {
      // One more prefill of the question with a tap per variant (their windows differ).
      const auto q = tk.encode(question, true, false);
      std::vector<std::unique_ptr<DifficultyTap>> taps;
      std::vector<KVTap*> raw;
      for (const auto& v : o.variants) {
        taps.push_back(std::make_unique<DifficultyTap>(hp, v.layers, v.pre_rope, v.window_end(static_cast<int>(q.size()))));
        raw.push_back(taps.back().get());
      }
      signals::TapFanout fan(raw, &ctx.model());
      prefill_tapped(ctx, q, &fan);
      for (auto& t : taps) rec.variants.push_back(t->features());
    }
    fast_fail += !rec.correct[0];
    out.push_back(std::move(rec));
    if (o.progress) o.progress(static_cast<int>(i + 1), fast_fail);
  }
  return out;
}

std::vector<ProblemRecord> collect_data(Context& ctx, const std::vector<DataItem>& items, FormatKind kind,
                                        const ItemRender& render, const EffortBudgets& budgets, const CollectOptions& o) {
  SamplingParams greedy;
  greedy.temperature = 0;
  const bool kv_format = format_of(kind).mode_line();
  std::vector<ProblemRecord> out;
  out.reserve(items.size());
  int fast_fail = 0;
  // The answer part of a response (kvscope: after "Answer:"; think formats: after </think>).
  auto content_of = [&](const std::string& text, Mode m) {
    const ReasoningPlan p = plan_for_effort(kind, effort_for_mode(kind, m), budgets);
    const bool content_only = !p.thinking;  // only a plan that reasons has thinking on
    Splitter s(content_only ? FormatKind::None : kind, !content_only);
    auto d = s.push(text);
    const auto f = s.flush();
    return d.content + f.content;
  };
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& it = items[i];
    std::string question;  // kvscope: the last user turn, which the mode line follows
    for (const auto& m : it.messages)
      if (m.role == "user") question = m.content;
    ProblemRecord rec;
    for (int m = 0; m < kClasses; ++m) {
      const Mode mode = static_cast<Mode>(m);
      AdaptiveOptions ao = forced_run(mode, o);
      ao.kind = kind;
      ao.budgets = budgets;
      if (!kv_format) {
        ao.question_tokens = render(it, nullptr);
        ao.render = [&](Mode md) {
          const auto p = plan_for_effort(kind, effort_for_mode(kind, md), budgets);
          return render(it, &p);
        };
      }
      std::vector<ProblemRecord::Checkpoint> cps;
      if (o.checkpoints && mode != Mode::Fast)
        ao.on_checkpoint = [&](int g, const std::vector<float>& f, const std::string& forced) {
          cps.push_back({mode, g, f, check_answer(it, content_of(forced, mode))});
        };
      auto r = generate_adaptive(ctx, question, greedy, o.spec, nullptr, ao);
      rec.correct[m] = check_answer(it, r.content);
      rec.tokens[m] = r.generated_total;
      if (m == 0) rec.features = std::move(r.initial_features);
      for (auto& c : cps) rec.checkpoints.push_back(std::move(c));
    }
    fast_fail += !rec.correct[0];
    out.push_back(std::move(rec));
    if (o.progress) o.progress(static_cast<int>(i + 1), fast_fail);
  }
  return out;
}

}  // namespace kvscope::reasoning
