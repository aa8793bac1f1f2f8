// Server metrics in Prometheus' text exposition format: counters and latency histograms kept by the
// server, gauges read from the engine's stats at scrape time.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace kvscope::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double v);
  // Appends the _bucket/_sum/_count lines of metric `name` (cumulative buckets, +Inf last).
  void render(std::string& out, const std::string& name, const std::string& help) const;
  uint64_t count() const;
  // {"le": upper bounds, "counts": per bucket (not cumulative, +Inf last), "sum", "count"}.
  nlohmann::json to_json() const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; the last one is +Inf
  double sum_ = 0;
  uint64_t n_ = 0;
};

// One tenant's (API key's) own counters: what /metrics and /v1/stats show a tenant's key, so no
// tenant sees another's traffic, prefix hits or tokens (the global view is for --admin-key).
struct TenantMetrics {
  TenantMetrics();
  std::atomic<uint64_t> requests_total{0}, requests_failed{0}, requests_cancelled{0};
  std::atomic<uint64_t> prompt_tokens{0}, generation_tokens{0}, prompt_tokens_cached{0};
  Histogram ttft, e2e, confidence;
  std::string render(bool model_loaded) const;
  // The shape of Metrics::to_json with the engine-wide parts (KV pool, prefix cache, queue) left out.
  nlohmann::json to_json(bool model_loaded) const;
};

struct Metrics {
  Metrics();
  std::atomic<uint64_t> requests_total{0}, requests_failed{0}, requests_cancelled{0};
  std::atomic<uint64_t> prompt_tokens{0}, generation_tokens{0};
  std::atomic<int64_t> in_flight{0};
  Histogram ttft, itl, e2e;
  // Adaptive reasoning: requests started by requested mode (auto, fast, mixed, slow), ended by final
  // mode (fast, mixed, slow), switches by kind (early_answer, upgrade, retry), and the estimator's
  // confidence of each auto decision.
  std::atomic<uint64_t> reasoning_started[4]{}, reasoning_ended[3]{}, reasoning_switches[3]{};
  Histogram decision_confidence;
  std::string kv_types;  // the engine's K/V types ("k=int8 v=int8" or the per-layer map); set before serving
  // Each finished answer's confidence in [0, 1] (see Exchange::record_outcome in completions.cpp).
  Histogram confidence;
  // KV anomaly scores of prompts (with a KV profile), and the requests refused for one.
  Histogram anomaly;
  std::atomic<uint64_t> anomalous_prompts{0}, rejected_anomalous{0};

  // A finished request: the reasoning mode asked for and the one that answered ("none" for both
  // without "reasoning").
  void count_mode(const std::string& requested, const std::string& served);

  // A tenant's counters, made on first use (one per API key that sends requests; tenant 0 without keys).
  TenantMetrics& tenant(uint64_t salt);

  // The whole exposition; `engine` is null while the model loads.
  std::string render(const EngineStats* engine) const;
  // The same counters as one JSON object (GET /v1/stats, read by the dashboard).
  nlohmann::json to_json(const EngineStats* engine) const;

 private:
  mutable std::mutex mode_mu_;
  std::map<std::string, uint64_t> by_requested_, by_mode_;
  std::mutex tenants_mu_;
  std::map<uint64_t, std::unique_ptr<TenantMetrics>> tenants_;
};

}  // namespace kvscope::server
