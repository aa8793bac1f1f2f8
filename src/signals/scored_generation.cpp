#include "signals/scored_generation.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "util/error.h"

namespace kvscope::signals {

std::vector<std::pair<std::string, double>> ResponseSignals::named() const {
  std::vector<std::pair<std::string, double>> v = {
      {"kv_coe_c", kv.coe_c},         {"kv_coe_r", kv.coe_r},     {"kv_coe_c_norm", kv.coe_c_norm},
      {"kv_coe_r_norm", kv.coe_r_norm}, {"max_prob", max_prob},   {"perplexity", perplexity},
      {"entropy", entropy}};
  if (has_hidden) {
    v.push_back({"hidden_coe_c", hidden.coe_c_norm});
    v.push_back({"hidden_coe_r", hidden.coe_r_norm});
  }
  if (has_probe) v.push_back({"kv_probe", probe});
  return v;
}

double ResponseSignals::probe_at(double share) const {
  if (probe_trace.empty()) return std::numeric_limits<double>::quiet_NaN();
  const size_t n = probe_trace.size();
  const size_t k = std::clamp<size_t>(static_cast<size_t>(std::ceil(share * static_cast<double>(n))), 1, n);
  return probe_trace[k - 1];
}

nlohmann::json ResponseSignals::to_json() const {
  nlohmann::json j = {{"layers", layers}, {"pre_rope", pre_rope}, {"n_tokens", n_tokens}};
  for (auto& [k, x] : named()) j[k] = x;
  j["mean_dr"] = kv.mean_dr;
  j["mean_dtheta"] = kv.mean_dtheta;
  j["total_dr"] = kv.total_dr;
  j["total_dtheta"] = kv.total_dtheta;
  if (!extra.empty()) {
    nlohmann::json a = nlohmann::json::object();
    for (auto& [name, c] : extra) a[name] = {{"kv_coe_c", c.coe_c}, {"kv_coe_r", c.coe_r}, {"kv_coe_c_norm", c.coe_c_norm}, {"kv_coe_r_norm", c.coe_r_norm}};
    j["ablation"] = a;
  }
  if (!steps.empty()) {
    nlohmann::json dr = nlohmann::json::array(), dt = nlohmann::json::array();
    for (const auto& st : steps) dr.push_back(st.dr), dt.push_back(st.dtheta);
    j["trace"] = {{"dr", dr}, {"dtheta", dt}};
  }
  if (has_probe && !probe_trace.empty())
    j["kv_probe_early"] = {{"25%", probe_at(0.25)}, {"50%", probe_at(0.50)}, {"75%", probe_at(0.75)}};
  j["memory"] = {{"kv_bytes", kv_bytes},
                 {"probe_bytes", probe_bytes},
                 {"probe_fraction_of_kv", kv_bytes ? double(probe_bytes) / double(kv_bytes) : 0.0},
                 {"tap_bytes", tap_bytes},
                 {"tap_fraction_of_kv", kv_bytes ? double(tap_bytes) / double(kv_bytes) : 0.0},
                 {"hidden_bytes", hidden_bytes},
                 {"hidden_full_bytes", hidden_full_bytes},
                 {"hidden_full_fraction_of_kv", kv_bytes ? double(hidden_full_bytes) / double(kv_bytes) : 0.0}};
  return j;
}

namespace {

TapOptions main_options(const HParams& hp, int prompt_len, const SignalOptions& so) {
  TapOptions mo;
  mo.layers = parse_layers(so.layers, hp.n_layer);
  mo.pre_rope = so.pre_rope;
  mo.begin = prompt_len;
  mo.hidden = so.hidden;
  mo.steps = so.trace;
  return mo;
}

}  // namespace

ResponseScorer::ResponseScorer(const Model& model, int prompt_len, const SignalOptions& so)
    : hp_(model.hparams()), tokenizer_(model.tokenizer()), so_(so), main_(hp_, main_options(hp_, prompt_len, so)) {
  // The main tap carries the hidden sums; the ablation taps only KV.
  std::vector<KVTap*> all = {&main_};
  for (const auto& x : so.extra) {
    TapOptions eo = main_options(hp_, prompt_len, so);
    eo.layers = x.layers;
    eo.pre_rope = x.pre_rope;
    eo.hidden = false;
    extra_.push_back(std::make_unique<FeatureTap>(hp_, eo));
    all.push_back(extra_.back().get());
  }
  if (so.probe || so.probe_features_trace) {
    const ProbeSpec spec = so.probe ? so.probe->spec : so.probe_spec;
    probe_ = std::make_unique<ProbeFeatures>(hp_, spec, prompt_len);
    if (so.probe && so.probe->mlp.input_dim() != probe_->dim())
      throw InputError("confidence probe expects " + std::to_string(so.probe->mlp.input_dim()) +
                       " features, this model gives " + std::to_string(probe_->dim()) + " (trained for another model?)");
    if (spec.kv || spec.prior) all.push_back(probe_.get());  // the prior reads the prompt's KV
  }
  if (all.size() == 1) {
    tap_ = &main_;
  } else {
    fan_ = std::make_unique<TapFanout>(all, &model);
    tap_ = fan_.get();
  }
}

void ResponseScorer::observe_token(int32_t chosen) {
  logit_stats_.choose(chosen);
  if (!probe_) return;
  if (probe_->wants_tokens()) probe_->on_token(logit_stats_, tokenizer_.token_to_piece(chosen));
  if (so_.probe_features_trace) probe_feats_.push_back(probe_->features(logit_stats_));
  if (so_.probe && so_.probe_trace)
    probe_trace_.push_back(static_cast<float>(so_.probe->mlp.score(so_.probe_features_trace ? probe_feats_.back()
                                                                                          : probe_->features(logit_stats_))));
}

double ResponseScorer::probe_score() const {
  if (!probe_ || !so_.probe) return std::numeric_limits<double>::quiet_NaN();
  return so_.probe->mlp.score(probe_->features(logit_stats_));
}

void ResponseScorer::observe_token(const TokenEvent& ev, int32_t eos_id) {
  if (ev.token >= 0)
    observe_token(ev.token);
  else if (ev.finished && ev.stop_reason == StopReason::Eos && logit_stats_.pending() && eos_id >= 0)
    observe_token(eos_id);
}

ResponseSignals ResponseScorer::result(size_t kv_bytes) const {
  ResponseSignals s;
  s.layers = main_.layers();
  s.pre_rope = so_.pre_rope;
  s.n_tokens = main_.n_tokens();
  s.kv = main_.scores();
  s.max_prob = logit_stats_.max_prob();
  s.perplexity = logit_stats_.perplexity();
  s.entropy = logit_stats_.entropy();
  if (so_.hidden) {
    s.has_hidden = true;
    s.hidden = main_.hidden_scores();
    s.hidden_bytes = static_cast<size_t>(hp_.n_layer + 1) * hp_.n_embd * sizeof(double);
    s.hidden_full_bytes = static_cast<size_t>(hp_.n_layer + 1) * hp_.n_embd * sizeof(float) * s.n_tokens;
  }
  for (size_t i = 0; i < extra_.size(); ++i) s.extra.push_back({so_.extra[i].name, extra_[i]->scores()});
  if (so_.trace) s.steps = main_.steps();
  if (probe_) {
    s.probe_bytes = probe_->state_bytes();
    if (so_.probe) {
      s.has_probe = true;
      s.probe = probe_score();
      s.probe_trace = probe_trace_;
    }
    if (so_.probe_features_trace) {
      s.probe_features = probe_feats_;
      s.probe_features.push_back(probe_->features(logit_stats_));
    }
  }
  s.kv_bytes = kv_bytes;
  s.tap_bytes = main_.state_bytes() - s.hidden_bytes;
  return s;
}

EngineParams scored_engine_params(const Model& model, const ContextParams& cp) {
  EngineParams ep;
  ep.n_threads = cp.n_threads;
  ep.n_ctx = cp.n_ctx;
  ep.kv_type = cp.kv_type;
  ep.max_batch_tokens = std::max(1, cp.n_batch);
  ep.max_seqs = 1;
  ep.prefix_caching = false;
  ep.swa_full = cp.swa_full;
  const int ctx = cp.n_ctx > 0 ? cp.n_ctx : model.hparams().n_ctx_train;
  ep.n_blocks = (ctx + ep.block_size - 1) / ep.block_size + 2;
  return ep;
}

ScoredResult generate_scored(Engine& eng, const std::vector<int32_t>& prompt, const SamplingParams& sp, int max_tokens,
                             const SignalOptions& so) {
  if (prompt.empty()) throw InputError("empty prompt");
  if (max_tokens < 1) throw InputError("max tokens must be at least 1");
  const Model& model = eng.model();
  const auto& tk = model.tokenizer();
  const int32_t eos = tk.vocab().eos;
  ResponseScorer scorer(model, static_cast<int>(prompt.size()), so);
  ScoredResult out;
  GenerateResult& r = out.gen;
  r.n_prompt = static_cast<int>(prompt.size());
  tok::StreamDecoder dec(tk);
  // A session of its own keeps the sequence for the last token's step.
  static std::atomic<uint64_t> next_session{0};
  const std::string session = "scored-" + std::to_string(next_session.fetch_add(1));
  Request req;
  req.prompt = prompt;
  req.sampling = sp;
  req.max_tokens = max_tokens;
  req.session_id = so.include_last ? session : std::string();
  req.tap = scorer.tap();
  req.on_logits = [&](const float* l, int n) { scorer.observe_logits(l, n); };
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  clock::time_point t_first = t0;
  req.on_token = [&](const TokenEvent& e) {
    scorer.observe_token(e, eos);
    if (e.token < 0 || tk.is_eog(e.token)) return;
    if (r.tokens.empty()) t_first = clock::now();
    r.tokens.push_back(e.token);
    r.text += dec.push(e.token);
  };
  const Completion c = eng.wait(eng.submit(std::move(req)));
  r.text += dec.flush();
  r.stop_reason = c.stop_reason;
  const auto t1 = clock::now();
  r.prompt_ms = std::chrono::duration<double, std::milli>(t_first - t0).count();
  r.gen_ms = std::chrono::duration<double, std::milli>(t1 - t_first).count();
  // Every stop but EOS leaves the last emitted token without K/V (EOS itself is never fed).
  size_t n_fed = prompt.size() + (r.tokens.empty() ? 0 : r.tokens.size() - 1);
  if (so.include_last && r.stop_reason != StopReason::Eos && !r.tokens.empty() &&
      static_cast<int>(prompt.size() + r.tokens.size()) < eng.max_seq_tokens()) {
    Request last;
    last.prompt = prompt;
    last.prompt.insert(last.prompt.end(), r.tokens.begin(), r.tokens.end());
    last.max_tokens = 1;
    last.sampling.temperature = 0;
    last.session_id = session;
    last.tap = scorer.tap();  // positions it has seen are not taken twice
    eng.wait(eng.submit(std::move(last)));
    ++n_fed;
  }
  if (so.include_last) eng.drop_session(session);
  out.signals = scorer.result(eng.kv().bytes_per_token() * n_fed);
  return out;
}

}  // namespace kvscope::signals
