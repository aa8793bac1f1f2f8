#include "server/metrics.h"

#include <algorithm>
#include <cstdio>

namespace kvscope::server {

namespace {

std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

void scalar(std::string& out, const char* name, const char* type, const char* help, double v) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + num(v) + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double v) {
  const size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  std::lock_guard lk(mu_);
  ++counts_[i];
  sum_ += v;
  ++n_;
}

uint64_t Histogram::count() const {
  std::lock_guard lk(mu_);
  return n_;
}

nlohmann::json Histogram::to_json() const {
  std::lock_guard lk(mu_);
  return {{"le", bounds_}, {"counts", counts_}, {"sum", sum_}, {"count", n_}};
}

void Histogram::render(std::string& out, const std::string& name, const std::string& help) const {
  std::lock_guard lk(mu_);
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  uint64_t cum = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cum += counts_[i];
    out += name + "_bucket{le=\"" + num(bounds_[i]) + "\"} " + std::to_string(cum) + "\n";
  }
  cum += counts_.back();
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(cum) + "\n";
  out += name + "_sum " + num(sum_) + "\n" + name + "_count " + std::to_string(n_) + "\n";
}

Metrics::Metrics()
    : ttft({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
      itl({0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}),
      e2e({0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}),
      decision_confidence({0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1}),
      confidence({0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}),
      anomaly({0.5, 0.75, 1, 1.25, 1.5, 2, 3, 5, 10, 20}) {}

TenantMetrics::TenantMetrics()
    : ttft({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
      e2e({0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}),
      confidence({0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}) {}

std::string TenantMetrics::render(bool model_loaded) const {
  std::string out;
  scalar(out, "kvscope_model_loaded", "gauge", "1 once the model is loaded and requests are served.", model_loaded ? 1 : 0);
  scalar(out, "kvscope_requests_total", "counter", "This API key's requests accepted.", double(requests_total.load()));
  scalar(out, "kvscope_requests_failed_total", "counter", "This API key's requests answered with an error status.",
         double(requests_failed.load()));
  scalar(out, "kvscope_requests_cancelled_total", "counter", "This API key's requests cancelled.", double(requests_cancelled.load()));
  scalar(out, "kvscope_prompt_tokens_total", "counter", "Prompt tokens of this API key's requests.", double(prompt_tokens.load()));
  scalar(out, "kvscope_generation_tokens_total", "counter", "Tokens generated for this API key.", double(generation_tokens.load()));
  scalar(out, "kvscope_prompt_tokens_cached_total", "counter", "This API key's prompt tokens served from its prefix cache.",
         double(prompt_tokens_cached.load()));
  ttft.render(out, "kvscope_time_to_first_token_seconds", "Time from a request's arrival to its first generated token.");
  e2e.render(out, "kvscope_request_duration_seconds", "Time from a request's arrival to its last token.");
  confidence.render(out, "kvscope_answer_confidence", "Confidence of this API key's finished answers.");
  return out;
}

nlohmann::json TenantMetrics::to_json(bool model_loaded) const {
  return {{"model_loaded", model_loaded},
          {"scope", "tenant"},
          {"requests", {{"total", requests_total.load()},
                        {"failed", requests_failed.load()},
                        {"cancelled", requests_cancelled.load()},
                        {"in_flight", nullptr},
                        {"running", nullptr},
                        {"waiting", nullptr}}},
          {"tokens", {{"prompt", prompt_tokens.load()}, {"generated", generation_tokens.load()},
                      {"prompt_cached", prompt_tokens_cached.load()}}},
          {"ttft_seconds", ttft.to_json()},
          {"request_duration_seconds", e2e.to_json()},
          {"answer_confidence", confidence.to_json()}};
}

TenantMetrics& Metrics::tenant(uint64_t salt) {
  std::lock_guard lk(tenants_mu_);
  auto& t = tenants_[salt];
  if (!t) t = std::make_unique<TenantMetrics>();
  return *t;
}

void Metrics::count_mode(const std::string& requested, const std::string& served) {
  std::lock_guard lk(mode_mu_);
  ++by_requested_[requested];
  ++by_mode_[served];
}

std::string Metrics::render(const EngineStats* e) const {
  std::string out;
  scalar(out, "kvscope_model_loaded", "gauge", "1 once the model is loaded and requests are served.", e ? 1 : 0);
  scalar(out, "kvscope_requests_in_flight", "gauge", "Generation requests accepted by the server and not yet finished.",
         double(in_flight.load()));
  scalar(out, "kvscope_requests_running", "gauge", "Sequences the engine is running.", e ? e->running : 0);
  scalar(out, "kvscope_requests_waiting", "gauge", "Sequences queued in the engine, waiting for admission.", e ? e->waiting : 0);
  scalar(out, "kvscope_requests_total", "counter", "Generation requests accepted.", double(requests_total.load()));
  scalar(out, "kvscope_requests_failed_total", "counter", "Requests answered with an error status.", double(requests_failed.load()));
  scalar(out, "kvscope_requests_cancelled_total", "counter", "Requests cancelled (client disconnected or shutdown).",
         double(requests_cancelled.load()));
  scalar(out, "kvscope_prompt_tokens_total", "counter", "Prompt tokens of accepted requests.", double(prompt_tokens.load()));
  scalar(out, "kvscope_generation_tokens_total", "counter", "Tokens generated for requests.", double(generation_tokens.load()));
  ttft.render(out, "kvscope_time_to_first_token_seconds", "Time from a request's arrival to its first generated token.");
  itl.render(out, "kvscope_inter_token_latency_seconds", "Time between consecutive generated tokens of a request.");
  e2e.render(out, "kvscope_request_duration_seconds", "Time from a request's arrival to its last token.");
  {
    auto family = [&out](const char* name, const char* help, const char* label, std::initializer_list<const char*> values,
                         const std::atomic<uint64_t>* v) {
      out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n";
      size_t i = 0;
      for (const char* x : values) out += std::string(name) + "{" + label + "=\"" + x + "\"} " + num(double(v[i++].load())) + "\n";
    };
    family("kvscope_reasoning_requests_started_total", "Reasoning requests started, by requested mode.", "mode",
           {"auto", "fast", "mixed", "slow"}, reasoning_started);
    family("kvscope_reasoning_requests_ended_total", "Reasoning requests ended, by final mode.", "mode",
           {"fast", "mixed", "slow"}, reasoning_ended);
    family("kvscope_reasoning_switches_total", "Mode switches of reasoning requests, by kind.", "kind",
           {"early_answer", "upgrade", "retry"}, reasoning_switches);
    decision_confidence.render(out, "kvscope_reasoning_confidence", "The difficulty estimator's confidence of auto decisions.");
  }
  confidence.render(out, "kvscope_answer_confidence", "Confidence of finished answers (signals' kv_probe, else max_prob, else the "
                    "reasoning answer confidence, else the mean top-token probability when logprobs were asked).");
  if (anomaly.count() > 0) {
    anomaly.render(out, "kvscope_prompt_anomaly_score", "KV anomaly score of prompts against the model's KV profile (about 1 for normal traffic).");
    out += "# HELP kvscope_prompts_anomalous_total Prompts scored above the KV profile's threshold.\n"
           "# TYPE kvscope_prompts_anomalous_total counter\nkvscope_prompts_anomalous_total " +
           std::to_string(anomalous_prompts.load()) + "\n";
    out += "# HELP kvscope_requests_rejected_anomalous_total Requests refused by --reject-anomalous.\n"
           "# TYPE kvscope_requests_rejected_anomalous_total counter\nkvscope_requests_rejected_anomalous_total " +
           std::to_string(rejected_anomalous.load()) + "\n";
  }
  {
    std::lock_guard lk(mode_mu_);
    auto labelled = [&](const char* name, const char* label, const char* help, const std::map<std::string, uint64_t>& m) {
      out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n";
      for (const auto& [k, v] : m) out += std::string(name) + "{" + label + "=\"" + k + "\"} " + std::to_string(v) + "\n";
    };
    labelled("kvscope_requests_by_mode_total", "mode", "Finished generation requests by the reasoning mode that answered (none: no reasoning).", by_mode_);
    labelled("kvscope_requests_by_requested_reasoning_total", "requested", "Finished generation requests by the reasoning asked for.", by_requested_);
  }
  if (e) {
    scalar(out, "kvscope_kv_blocks_total", "gauge", "KV cache blocks in the pool.", e->blocks.total);
    scalar(out, "kvscope_kv_blocks_used", "gauge", "KV cache blocks referenced by sequences or sessions.", e->blocks.used);
    scalar(out, "kvscope_kv_blocks_cached", "gauge", "Free KV blocks still holding a reusable prefix.", e->blocks.cached_free);
    if (e->swa_blocks.total > 0) {
      scalar(out, "kvscope_kv_swa_blocks_total", "gauge", "Blocks in the sliding-window layers' own pool.", e->swa_blocks.total);
      scalar(out, "kvscope_kv_swa_blocks_used", "gauge",
             "Sliding-window pool blocks held (each sequence keeps only its window there).", e->swa_blocks.used);
    }
    scalar(out, "kvscope_kv_block_size_tokens", "gauge", "Tokens per KV block.", e->block_size);
    scalar(out, "kvscope_kv_bytes_per_token", "gauge", "KV cache bytes per token (all layers, K and V).",
           double(e->bytes_per_token));
    std::string types;  // a label value: escape backslash, quote and newline as the format requires
    for (char c : kv_types) types += c == '"' ? std::string("\\\"") : c == '\\' ? std::string("\\\\") : c == '\n' ? std::string("\\n") : std::string(1, c);
    out += "# HELP kvscope_kv_cache_info The KV cache element types (always 1).\n# TYPE kvscope_kv_cache_info gauge\n"
           "kvscope_kv_cache_info{types=\"" + types + "\"} 1\n";
    scalar(out, "kvscope_prefix_cache_queries_total", "counter", "Full prompt blocks looked up in the prefix cache.",
           double(e->blocks.prefix_queries));
    scalar(out, "kvscope_prefix_cache_hits_total", "counter", "Prefix cache lookups that found a block.",
           double(e->blocks.prefix_hits));
    scalar(out, "kvscope_prefix_cache_hit_rate", "gauge", "Prefix cache hits over lookups since start.",
           e->blocks.prefix_queries ? double(e->blocks.prefix_hits) / double(e->blocks.prefix_queries) : 0.0);
    scalar(out, "kvscope_prompt_tokens_cached_total", "counter", "Prompt tokens served from the prefix cache.",
           double(e->prompt_tokens_cached));
    scalar(out, "kvscope_preemptions_total", "counter", "Sequences preempted (blocks freed, recomputed later).",
           double(e->preemptions));
    scalar(out, "kvscope_engine_steps_total", "counter", "Engine scheduling steps.", double(e->steps));
    scalar(out, "kvscope_sessions", "gauge", "Sessions whose history is pinned in the KV cache.", e->sessions);
  }
  return out;
}

nlohmann::json Metrics::to_json(const EngineStats* e) const {
  nlohmann::json j = {{"model_loaded", e != nullptr},
                      {"scope", "global"},
                      {"requests", {{"total", requests_total.load()},
                                    {"failed", requests_failed.load()},
                                    {"cancelled", requests_cancelled.load()},
                                    {"in_flight", in_flight.load()},
                                    {"running", e ? e->running : 0},
                                    {"waiting", e ? e->waiting : 0}}},
                      {"tokens", {{"prompt", prompt_tokens.load()}, {"generated", generation_tokens.load()},
                                  {"prompt_cached", e ? e->prompt_tokens_cached : 0}}},
                      {"ttft_seconds", ttft.to_json()},
                      {"inter_token_latency_seconds", itl.to_json()},
                      {"request_duration_seconds", e2e.to_json()},
                      {"answer_confidence", confidence.to_json()}};
  {
    std::lock_guard lk(mode_mu_);
    j["requests_by_mode"] = by_mode_;
    j["requests_by_requested_reasoning"] = by_requested_;
  }
  if (e) {
    j["kv"] = {{"blocks_total", e->blocks.total}, {"blocks_used", e->blocks.used}, {"blocks_cached", e->blocks.cached_free},
               {"block_size_tokens", e->block_size}, {"preemptions", e->preemptions}, {"sessions", e->sessions}};
    j["prefix_cache"] = {{"queries", e->blocks.prefix_queries}, {"hits", e->blocks.prefix_hits},
                         {"hit_rate", e->blocks.prefix_queries ? double(e->blocks.prefix_hits) / double(e->blocks.prefix_queries) : 0.0}};
    j["engine_steps"] = e->steps;
  }
  return j;
}

}  // namespace kvscope::server
