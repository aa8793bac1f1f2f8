// kvscope's OpenAI-compatible HTTP server: /v1/completions, /v1/chat/completions (JSON or SSE
// streams), /v1/embeddings, /v1/models, /health, /metrics and /v1/stats (the same counters as JSON), the
// web UI (/ and /dashboard), with every generation request run
// through the continuous-batching Engine. The listener comes up first and the model loads in the
// background (/health answers 503 until it is ready).
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "kvtier/kv_tier.h"
#include "reasoning/adaptive_generate.h"
#include "reasoning/controller.h"
#include "reasoning/decision_cache.h"
#include "reasoning/format.h"
#include "server/protocol.h"
#include "serving/events.h"
#include "signals/scored_generation.h"

namespace kvscope::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                   // 0: an ephemeral port (start() returns it)
  std::string model_path;
  std::string model_id;              // the name clients send as "model"; "": the file's stem
  std::string chat_template;         // family name (chatml, llama3, ...); "": the model's, else chatml
  std::string tool_format;           // tool-call format (hermes, llama3, mistral, generic); "": from the template
  std::vector<std::string> api_keys; // non-empty: bearer auth on every route but /health
  // Keys that also see the global /metrics, /v1/stats and dashboard; any other key sees only its
  // own counters there. Admin keys are accepted wherever API keys are (and turn auth on alone).
  std::vector<std::string> admin_keys;
  EngineParams engine;
  int max_queue = 256;               // generation requests in flight at most; more get 429
  size_t max_body_bytes = size_t{1} << 20;  // larger bodies (decoded, chunked or not) get 413
  int http_threads = 0;              // 0: max_queue + 16 (each request being answered holds one)
  // Connection limits (docs/server.md, "Limits"): requests are read whole by one event-driven
  // thread before a worker sees them, within these sizes and times.
  size_t max_header_bytes = size_t{16} << 10;  // request line + headers; 431 beyond
  int max_headers = 100;             // header fields; 431 beyond
  double header_timeout_s = 10;      // a request's headers must arrive within this (408)
  double body_timeout_s = 60;        // its body within this after the headers (408)
  double keep_alive_s = 5;           // idle kept-alive connections close after this
  int max_conns_per_ip = 256;        // open connections per client address; 429 beyond
  int max_connections = 2048;        // open connections in all; 503 beyond
  bool reuse_port = false;           // share the port with another server (SO_REUSEPORT)
  double heartbeat_s = 1.0;          // how often a silent request probes its connection
  double shutdown_grace_s = 30;      // in-flight requests get this long to finish, then are cancelled
  bool log_requests = false;         // one line per request on stderr
  bool webui = true;                 // the web UI at / and /dashboard (its files are in the binary)
  std::function<void()> before_load; // run on the loading thread first (tests hold the load back)
  // Adaptive reasoning ("reasoning" in a request). The estimator: this file, else the model's
  // "<stem>.difficulty.bin" when present; without one only fast/mixed/slow are served.
  std::string difficulty_path;
  reasoning::ControllerConfig controller;
  reasoning::ReasoningFormat reasoning_format;
  reasoning::DecisionCacheOptions decision_cache;  // redis_url "" keeps decisions in memory only
  // The model's reasoning format (reasoning/format.h): "" detects it, a name overrides it.
  std::string reasoning_format_name;
  reasoning::EffortBudgets effort_budgets;  // thinking budgets of reasoning_effort low and medium
  // --reasoning-budget: the thinking budget of requests that ask for none (-1 unbounded, 0 no thinking).
  std::optional<int> reasoning_budget;
  // kvscope.signals (KV-CoE, MaxProb, perplexity, entropy) on every completion; false removes them
  // and their cost (no tap, no logits statistics).
  bool signals = true;
  // The learned confidence probe (kv_probe in kvscope.signals, kvscope.confidence on stream chunks
  // every confidence_every tokens): this file, else the model's "<stem>.confidence.bin" when present.
  std::string confidence_path;
  int confidence_every = 16;
  // KV anomaly detection (kvscope.anomaly, /metrics), opt-in: this profile file, or "auto" for the
  // model's "<stem>.kvprofile.bin". reject_anomalous > 0: prompts scoring above it get a 400; 0: the
  // profile's default threshold; < 0: score only.
  std::string kv_profile_path;
  double reject_anomalous = -1;
  int default_max_tokens = 0;        // -n: max_tokens of requests that give none (0: 16 for completions, the context for chat)
  std::string session_dir;           // non-empty: /v1/sessions saves and restores sessions here
  // The secret that signs session files (HMAC-SHA256): this file's contents, else a random one the
  // server keeps in <session_dir>/.session-secret. Servers sharing sessions need the same secret.
  std::string session_secret_file;
  size_t session_max_bytes = kDefaultSessionMaxBytes;  // restore refuses larger files
  int analysis_interval_ms = 50;     // 0 decides once per request; > 0 re-estimates every check_every tokens
  // The shared KV tier in Redis (--kv-tier); url "" keeps KV local (docs/scale-out.md).
  kvtier::KvTierOptions kv_tier;
  // kvscope.signals' KV selection (signals/scored_generation.h): layers, K before RoPE, per-token trace.
  std::string signal_layers = "mid";
  bool signal_pre_rope = signals::kDefaultPreRope;
  bool signal_trace = false;
  // Size the KV pool for one sequence of the whole context instead of kv_mem_bytes (local runs).
  bool kv_for_context = false;
};

// What an extension hook sees when a response (or a stream's final chunk) is written.
struct ResponseInfo {
  const nlohmann::json& body;          // the request as sent
  const std::vector<int32_t>& prompt;  // its prompt tokens
  const Completion& completion;        // the engine's result: tokens, stop reason, cached tokens
  const std::string& text;             // the answer text sent to the client
};
// Adds fields to the response's "kvscope" extension object.
using ExtensionHook = std::function<void(const ResponseInfo&, nlohmann::json& ext)>;

class Server {
 public:
  explicit Server(ServerOptions o);
  ~Server();  // shuts down if still running
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void add_extension_hook(ExtensionHook h);  // before start()

  // Binds and serves in the background, then loads the model in the background. Returns the port.
  // Throws InputError when the address cannot be bound.
  int start();
  // Waits until the model is loaded: true when ready, false on timeout; rethrows a load failure as
  // InputError.
  bool wait_ready(double timeout_s);
  bool failed() const;  // the model failed to load

  // Graceful: new requests get 503, in-flight ones finish (or are cancelled after the grace
  // period), then the listener and the engine stop. Idempotent.
  void shutdown();

  // The pipeline without HTTP, for `kvscope run`: load() loads the model on the calling thread and
  // opens no port (InputError when it fails); run() takes a typed completions or chat request
  // through the steps POST /v1/completions and /v1/chat/completions take (reasoning plan, adaptive
  // run, thinking budget, signals) and returns what the API would answer. A protocol error is
  // thrown as InputError (LimitError when the prompt does not fit the context), with the API's words.
  struct LocalResult {
    nlohmann::json body;            // the API's non-stream response body
    std::string text;               // the final attempt's whole text: reasoning, delimiters, a forced cut, answer
    std::vector<int32_t> tokens;    // the final attempt's generated tokens (a forced cut included)
    StopReason stop_reason = StopReason::None;  // the engine's, of the final request (EarlyAnswer after a cut)
    bool adaptive = false;          // an adaptive run chose or changed the effort
    int prompt_tokens = 0;          // the final attempt's prompt
    double first_output_ms = 0, total_ms = 0;
  };
  void load();
  // on_event sees the output as it comes, except in an adaptive run (an upgrade or retry discards
  // an attempt's text): that one is only in the result.
  LocalResult run(GenRequest g, const std::function<void(const serving::Event&)>& on_event = nullptr);
  const Model* model() const;
  reasoning::FormatKind reasoning_format() const;

  int port() const;
  // The engine once loaded (null before): for tests and embedding the server.
  Engine* engine();
  std::string metrics_text() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvscope::server
