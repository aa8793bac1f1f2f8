// The eval-confidence workflow (confidence_eval.h).
#include "training/confidence_eval.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "signals/confidence_metrics.h"
#include "signals/kv_tap.h"
#include "util/error.h"
#include "util/rng.h"

namespace kvscope::training {

ScoreQuality score_quality(const std::vector<double>& raw, const std::vector<bool>& ok, int orientation) {
  std::vector<double> s(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) s[i] = orientation * raw[i];
  ScoreQuality q;
  q.auroc = signals::auroc(s, ok);
  q.auroc_best = std::isnan(q.auroc) ? q.auroc : std::max(q.auroc, 1.0 - q.auroc);
  q.flipped = q.auroc < 0.5;
  q.fpr95 = signals::fpr_at_tpr(s, ok, 0.95);
  q.aupr = signals::aupr(s, ok);
  return q;
}

std::vector<signals::SignalOptions::Extra> ablation_selections(int n_layer, bool pre_rope) {
  // Both K stages on the same answers, so the better default can be read off one run.
  const bool post = false, pre = true;
  std::vector<signals::SignalOptions::Extra> out = {{"all", signals::parse_layers("all", n_layer), post},
                                                    {"mid", signals::parse_layers("mid", n_layer), post},
                                                    {"all_pre_rope", signals::parse_layers("all", n_layer), pre},
                                                    {"mid_pre_rope", signals::parse_layers("mid", n_layer), pre}};
  for (int l = 0; l < n_layer; ++l) out.push_back({"layer_" + std::to_string(l), {l}, pre_rope});
  return out;
}

namespace {

void add_result(ConfidenceEval& e, const signals::ScoredResult& r, bool good) {
  e.ok.push_back(good);
  e.correct += good;
  e.tokens += static_cast<long>(r.gen.tokens.size());
  const auto named = r.signals.named();
  if (e.names.empty())
    for (auto& [k, v] : named) e.names.push_back(k);
  for (auto& [k, v] : named) e.values[k].push_back(v);
  for (auto& [name, c] : r.signals.extra) {
    e.ablation_c[name].push_back(c.coe_c);
    e.ablation_r[name].push_back(c.coe_r);
    e.ablation_cn[name].push_back(c.coe_c_norm);
  }
  if (r.signals.has_probe) {
    e.early["25%"].push_back(r.signals.probe_at(0.25));
    e.early["50%"].push_back(r.signals.probe_at(0.50));
    e.early["75%"].push_back(r.signals.probe_at(0.75));
    e.probe_bytes += r.signals.probe_bytes;
  }
  e.kv_bytes += r.signals.kv_bytes;
  e.tap_bytes += r.signals.tap_bytes;
  e.hidden_bytes += r.signals.hidden_bytes;
  e.hidden_full_bytes += r.signals.hidden_full_bytes;
}

}  // namespace

ConfidenceEval eval_confidence(const Model& model, const PromptFormat& fmt, const std::vector<tinygsm::Item>& items, Mode m,
                               const ConfidenceEvalOptions& o) {
  Engine eng(model, signals::scored_engine_params(model, o.context));
  const int limit = eng.max_seq_tokens();
  SamplingParams greedy;
  greedy.temperature = 0.0f, greedy.top_k = 0, greedy.top_p = 1.0f, greedy.min_p = 0.0f;
  const auto plan = fmt.plan(m);
  ConfidenceEval e;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& it : items) {
    const auto ids = fmt.encode(fmt.chat() ? fmt.render("Question: " + tinygsm::numbered_question(it), m)
                                           : tinygsm::format_prompt(it, m));
    if (static_cast<int>(ids.size()) >= limit)
      throw LimitError("prompt of " + std::to_string(ids.size()) + " tokens does not fit the context");
    const int room = std::min(o.max_tokens, limit - static_cast<int>(ids.size()));
    const auto r = signals::generate_scored(eng, ids, greedy, room, o.signals);
    const auto got = tinygsm::parse_answer(answer_text(plan, r.gen.text));
    const bool good = got && *got == it.answer;
    add_result(e, r, good);
    if (o.on_item) o.on_item(it, good, r);
  }
  e.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return e;
}

ProbeCost measure_probe_cost(const Model& model, const signals::ProbeFile& probe) {
  constexpr int kPriorPrompt = 80;
  const HParams& hp = model.hparams();
  ProbeCost c;
  // The prompt prior is paid once per request, at prefill: its prompt rows pooled and one estimate,
  // timed apart; the per-token loop then finds it done.
  const int p0 = probe.spec.prior ? kPriorPrompt : 0;
  signals::ProbeFeatures pt(hp, probe.spec, p0);
  signals::LogitStats ls;
  std::vector<float> k(hp.n_kv_dim()), v(hp.n_kv_dim());
  util::SplitMix64 rr{3};
  for (auto& x : k) x = static_cast<float>(rr.normal());
  for (auto& x : v) x = static_cast<float>(rr.normal());
  if (p0 > 0) {
    std::vector<float> pk(static_cast<size_t>(p0) * hp.n_kv_dim()), pv(pk.size());
    for (auto& x : pk) x = static_cast<float>(rr.normal());
    for (auto& x : pv) x = static_cast<float>(rr.normal());
    const auto tq = std::chrono::steady_clock::now();
    for (int l = 0; l < hp.n_layer; ++l) pt.on_kv(l, 0, p0, pk.data(), pv.data());
    c.prior_us_per_request = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - tq).count();
    c.prior_prompt_tokens = kPriorPrompt;
    c.prior_peak_bytes = probe.spec.prior->layers.size() * 2 * hp.n_kv_dim() * sizeof(double);
  }
  const int reps = 2000;
  double sink = 0;
  const auto tp = std::chrono::steady_clock::now();
  for (int t = p0; t < p0 + reps; ++t) {
    k[t % k.size()] += 0.01f;
    for (int l : probe.spec.layers) pt.on_kv(l, t, 1, k.data(), v.data());
    if (pt.wants_tokens()) pt.on_token(ls, model.tokenizer().token_to_piece(t % hp.n_vocab));
    sink += probe.mlp.score(pt.features(ls));
  }
  c.us_per_token = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - tp).count() / reps;
  if (sink < 0) std::fprintf(stderr, "%f\n", sink);  // keeps the loop
  return c;
}

}  // namespace kvscope::training
