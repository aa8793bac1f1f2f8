// The server's shared state, between the lifecycle/routing code (http_server.cpp) and the
// generation handlers (completions.cpp).
#pragma once
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "model/model.h"
#include "reasoning/decision_cache.h"
#include "reasoning/difficulty_mlp.h"
#include "sampling/constraint.h"
#include "server/http_front.h"
#include "server/metrics.h"
#include "server/protocol.h"
#include "server/responses.h"
#include "server/server.h"
#include "signals/confidence_probe.h"
#include "signals/embedding.h"
#include "signals/kv_profile.h"
#include "tokenizer/chat_template.h"
#include "toolcall/parser.h"

namespace kvscope::server {

enum class State { Idle, Loading, Ready, Failed, Draining, Stopped };

struct Exchange;  // one generation response in progress (exchange.h)
struct Choices;   // the exchanges of a request for several choices (exchange.h)

// What adaptive reasoning needs, set up with the model.
struct ReasoningContext {
  std::unique_ptr<reasoning::DifficultyFile> difficulty;  // null: auto is refused
  std::string difficulty_path;
  reasoning::ControllerConfig controller;
  reasoning::ReasoningFormat format;
  std::unique_ptr<reasoning::DecisionCache> cache;
  // Re-estimate every check_every tokens while an auto request generates (--analysis-interval 0:
  // decide once). Taken on the engine's step thread at the token (ReasoningRun::on_step).
  bool reestimate = true;
  std::atomic<uint64_t> reestimates{0}, reestimate_us{0};
  uint64_t fingerprint = 0;
  reasoning::FormatKind kind = reasoning::FormatKind::None;  // the model's reasoning format
  reasoning::EffortBudgets budgets;
};

struct Server::Impl {
  explicit Impl(ServerOptions o) : opt(std::move(o)) {}

  ServerOptions opt;
  RoutedServer http;                // routing; connections are the front's
  std::unique_ptr<HttpFront> front;
  std::thread load_thread;
  int port = -1;

  mutable std::mutex state_mu;
  std::condition_variable state_cv;
  std::atomic<State> state{State::Idle};
  std::string load_error;

  std::unique_ptr<Model> model;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<kvtier::KvTier> kv_tier;  // after engine: detaches from it before it goes
  tok::ChatFormat chat_format = tok::ChatFormat::ChatML;
  toolcall::ToolFormat tool_format = toolcall::ToolFormat::Generic;  // how the model writes tool calls
  std::string model_id;
  int64_t created = 0;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  Metrics metrics;
  // /v1/embeddings: one Embedder (its own KV cache), created on first use, one request at a time.
  std::timed_mutex embed_mu;                // held while the Embedder computes
  std::mutex embedder_make_mu;              // held to make it (once) and to validate a request
  std::unique_ptr<signals::Embedder> embedder;
  void handle_embeddings(const httplib::Request& req, httplib::Response& res);
  std::vector<ExtensionHook> hooks;
  ReasoningContext reasoning;
  std::unique_ptr<signals::ProbeFile> probe;      // null: no kv_probe / kvscope.confidence
  std::unique_ptr<signals::KVProfile> kv_profile; // null: no kvscope.anomaly
  void setup_signals(const Model& m);
  // The prompt's KV anomaly {"score", "threshold", "anomalous"} (prefill with the tap; the prompt
  // stays in the prefix cache for the request that follows). Throws ApiError 400 when rejecting.
  // user_spans: the tokens of the users' own text (the profile's user-content part; none for a raw
  // completion prompt, whose template the client wrote).
  json score_anomaly(const std::vector<int32_t>& prompt, uint64_t salt, const std::vector<std::pair<int, int>>& user_spans = {});
  // The spans of a chat request's user messages inside its prompt tokens.
  std::vector<std::pair<int, int>> user_spans(const GenRequest& g, const std::vector<int32_t>& prompt) const;
  ResponseStore responses;  // /v1/responses kept for previous_response_id and GET
  // Each token's bytes, for structured output (response_format); built on first use.
  std::shared_ptr<const TokenPieces> token_pieces() const;
  mutable std::once_flag pieces_once;
  mutable std::shared_ptr<const TokenPieces> pieces;
  // Control tokens' text ([TOOL_CALLS], <|python_tag|>), "" for the others: what a tool parser reads.
  std::shared_ptr<const std::vector<std::string>> control_marks() const;
  mutable std::once_flag marks_once;
  mutable std::shared_ptr<const std::vector<std::string>> marks;

  // Engine requests not yet reaped, so shutdown can wait for or cancel them.
  std::mutex live_mu;
  std::condition_variable live_cv;
  std::set<RequestId> live;
  int live_embeddings = 0;                    // /v1/embeddings admitted and not yet answered (live_mu)
  std::atomic<bool> cancel_embeddings{false}; // set when shutdown's grace runs out

  // Registers every route (http_server.cpp), one function an API: the hooks every request passes
  // (request id, auth, error shape, logging); /health, /metrics, /v1/stats and the web UI; models;
  // sessions; completions, chat and embeddings; Responses.
  void setup_routes();
  void install_request_hooks();
  void route_status();
  void route_models();
  void route_sessions();
  void route_generation();
  void route_responses();
  std::string reasoning_metrics() const;
  void load_model();
  void setup_reasoning(const Model& m);
  // Throws ApiError 503 unless the model is ready and the server is not shutting down.
  void require_serving() const;
  // The tenant's prefix-cache salt: a hash of the request's API key (0 without keys).
  uint64_t tenant_salt(const httplib::Request& req) const;
  bool auth_required() const { return !opt.api_keys.empty() || !opt.admin_keys.empty(); }
  // Whether the request sees the global /metrics and /v1/stats: without keys, or with an admin key.
  bool global_view(const httplib::Request& req) const;
  void handle_generation(const httplib::Request& req, httplib::Response& res, Endpoint e);
  // Parses, admits and launches a completions or chat request (throws ApiError); its response is
  // then written from the events of the exchange (several choices: of each in `choices`).
  struct Started {
    std::shared_ptr<Exchange> x;       // choice 0
    std::shared_ptr<Choices> choices;  // null with a single choice
    bool stream = false;
  };
  // What a generation request brings besides its body: who sent it (the API key's tenant) and
  // its X-Session-Id header. HTTP requests, Responses (its chat translation) and local runs
  // (Server::run_local) start the same way from it.
  struct Origin {
    std::string body;            // the JSON body as sent
    uint64_t tenant = 0;
    std::string session_header;  // "" when none
  };
  Origin origin_of(const httplib::Request& req) const;
  // start() and load(): refuses a second start or a missing model path, names the model and stamps
  // the creation time.
  void begin_start();
  Started start_generation(const Origin& o, Endpoint e);
  // Its second half, from the typed request on (a local run starts here): the prompts' exchanges,
  // admission and the first requests. request_body: the body as sent (the extension hooks see it).
  Started launch_generation(GenRequest whole, const json& request_body, uint64_t tenant, Endpoint e);
  // The steps of handle_generation for one prompt (completions.cpp): the reasoning plan, the prompt's
  // tokens (or an adaptive run), the limits and checks, and the first request's submission.
  void plan_reasoning(Exchange& x, Endpoint ep);
  void render_prompt(Exchange& x, Endpoint ep);
  std::shared_ptr<Exchange> prepare_exchange(const json& request_body, GenRequest one, Endpoint ep, uint64_t tenant,
                                             int n_total, size_t n_prompts);
  void launch_exchange(Exchange& e, uint64_t tenant);
  void prepare_tools(Exchange& x);
  void parse_tools(const std::string& raw, const json& body, GenRequest& g) const;
  // POST /v1/responses (responses_http.cpp): runs the chat path and translates its output.
  void handle_responses(const httplib::Request& req, httplib::Response& res);
  // plan: a reasoning plan whose think block (or gpt-oss level) the prompt carries (null: none).
  std::vector<int32_t> tokenize(const GenRequest& g, const reasoning::ReasoningPlan* plan = nullptr) const;
  // The prompt as text (completions text prompt, or the rendered chat), for reasoning's mode line.
  std::string prompt_text(const GenRequest& g, const reasoning::ReasoningPlan* plan = nullptr) const;
  // Chat on the kvscope format without a chat template: the model takes the bare question.
  bool bare_questions() const { return reasoning::format_of(reasoning.kind).mode_line() && model->chat_template().empty(); }
  // /v1/sessions (sessions.cpp). The engine's session id and the file of a tenant's session.
  std::string session_key(uint64_t tenant, const std::string& id) const;
  std::string session_path(uint64_t tenant, const std::string& id) const;
  json session_request(const httplib::Request& req, const std::string& id, const std::string& action);
  json session_list(const httplib::Request& req);
  // At start with --session-dir: makes the directory, removes temporary files of saves that never
  // finished, and loads (or first generates) the secret that signs session files.
  void setup_sessions();
  std::string session_secret;
  // Scale-out (scale_out.cpp): the X-Session-Id header names the session when the body does not
  // (400 when both are given and differ); the KV tier restores the session or fetches the prompt's
  // missing prefix blocks. Returns the prompt tokens brought in from the tier; `computing` gets the
  // estimate of prompt tokens left to compute.
  void apply_session_header(const std::string& header, GenRequest& g) const;
  int tier_prefetch(const std::vector<int32_t>& prompt, uint64_t salt, const std::string& session_key, int& computing);
  // Takes the finished engine request off the live set (waits for its final event if needed).
  Completion reap(RequestId id);
};

// Containers nested deeper than this in a request body are refused (400 json_too_deep) while
// parsing: everything that walks JSON afterwards (copies, dump, the schema compiler) recurses.
constexpr int kMaxJsonDepth = 64;
// Reads a request body as JSON: invalid UTF-8, malformed JSON, nesting beyond kMaxJsonDepth and
// numbers beyond a double's range become 400s.
json parse_json_body(const std::string& body);
void write_error(httplib::Response& res, const ApiError& e);
uint64_t hash_bytes(const std::string& s, uint64_t seed);
// InputError-like 400 unless id is a safe session id.
void validate_session_id(const std::string& id, const char* param);

}  // namespace kvscope::server
