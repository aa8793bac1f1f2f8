// kvscope serve: the OpenAI-compatible HTTP server (src/server). SIGINT/SIGTERM shut it down
// gracefully: in-flight requests finish (or are cancelled after --shutdown-grace), then it exits.
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstdio>

#include "cli/commands.h"
#include "cli/options.h"
#include "server/server.h"
#include "util/error.h"

namespace kvscope::cli {

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "OpenAI-compatible HTTP server (/v1/completions, /v1/chat/completions, ...)");
  struct Opts {
    ModelOpts model;
    server::ServerOptions srv;
    int kv_mem_mib = 256, batch_tokens = 256, max_seqs = 64;
    size_t max_body_kib = 1024;
    size_t session_max_mib = kDefaultSessionMaxBytes >> 20;
    ReasoningOpts reasoning;
    int reasoning_budget = -1;
    std::string signals = "on", reject;
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);  // -m -t -c -b and the KV types, as in run
  cmd->add_option("--host", o->srv.host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", o->srv.port, "Port (0: any free port, printed at start)")->check(CLI::Range(0, 65535))->capture_default_str();
  cmd->add_option("--model-id", o->srv.model_id, "Model name clients send (default: the file's stem)");
  cmd->add_option("--chat-template", o->srv.chat_template, "Chat format: llama2, llama3, chatml, mistral, zephyr (default: the model's)");
  cmd->add_option("--tool-format", o->srv.tool_format,
                  "Tool-call format: hermes (Qwen2.5/3), llama3, mistral, generic (default: detected from the chat template)")
      ->check(CLI::IsMember({"hermes", "qwen", "qwen2.5", "qwen3", "llama3", "llama3.1", "llama3.2", "mistral", "generic"}));
  cmd->add_option("--api-key", o->srv.api_keys, "Require 'Authorization: Bearer KEY' (repeatable; each key gets its own prefix cache)");
  cmd->add_option("--admin-key", o->srv.admin_keys,
                  "A key that sees the global /metrics, /v1/stats and dashboard (repeatable); other keys see only their own "
                  "counters there");
  cmd->add_option("--max-queue", o->srv.max_queue, "Requests in flight at most; more get 429")->check(CLI::Range(1, 1 << 16))->capture_default_str();
  cmd->add_option("--max-body", o->max_body_kib, "Largest request body in KiB (413 beyond)")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  cmd->add_option("--kv-mem", o->kv_mem_mib, "KV pool size in MiB")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  cmd->add_option("--batch-tokens", o->batch_tokens, "Token budget per engine step")->check(CLI::Range(1, 1 << 16))->capture_default_str();
  cmd->add_option("--max-seqs,--parallel", o->max_seqs, "Sequences run at once")->check(CLI::Range(1, 4096))->capture_default_str();
  const char* l = "Connection limits (docs/server.md, Limits)";
  cmd->add_option("--max-headers", o->srv.max_headers, "Header fields per request at most (431 beyond)")
      ->check(CLI::Range(1, 10000))->capture_default_str()->group(l);
  cmd->add_option("--max-header-bytes", o->srv.max_header_bytes, "Request line and headers in bytes at most (431 beyond)")
      ->check(CLI::Range(size_t{256}, size_t{1} << 24))->capture_default_str()->group(l);
  cmd->add_option("--header-timeout", o->srv.header_timeout_s, "Seconds a request's headers may take to arrive (408 beyond)")
      ->check(CLI::Range(0.1, 3600.0))->capture_default_str()->group(l);
  cmd->add_option("--body-timeout", o->srv.body_timeout_s, "Seconds a request's body may take to arrive after its headers (408 beyond)")
      ->check(CLI::Range(0.1, 3600.0))->capture_default_str()->group(l);
  cmd->add_option("--keep-alive-timeout", o->srv.keep_alive_s, "Seconds an idle kept-alive connection stays open")
      ->check(CLI::Range(0.1, 3600.0))->capture_default_str()->group(l);
  cmd->add_option("--max-conns-per-ip", o->srv.max_conns_per_ip, "Open connections per client address at most (429 beyond)")
      ->check(CLI::Range(1, 1 << 20))->capture_default_str()->group(l);
  cmd->add_option("--max-connections", o->srv.max_connections, "Open connections in all at most (503 beyond)")
      ->check(CLI::Range(1, 1 << 20))->capture_default_str()->group(l);
  cmd->add_flag("--reuse-port", o->srv.reuse_port,
                "Share the port with other servers already listening on it (SO_REUSEPORT; without it a taken port is an error)")
      ->group(l);
  cmd->add_option("--shutdown-grace", o->srv.shutdown_grace_s, "Seconds in-flight requests get at shutdown")->check(CLI::Range(0.0, 3600.0))->capture_default_str();
  cmd->add_option("--signals", o->signals, "kvscope.signals (KV-CoE, MaxProb, perplexity, entropy) in every response: on | off")
      ->check(CLI::IsMember({"on", "off"}))->capture_default_str();
  cmd->add_option("-n,--n-predict", o->srv.default_max_tokens,
                  "max_tokens of requests that give none (0: 16 for completions, the rest of the context for chat)")
      ->check(CLI::Range(0, 1 << 20))->capture_default_str();
  cmd->add_option("--session-dir", o->srv.session_dir,
                  "Enable /v1/sessions: save and restore conversations' KV as files in this directory");
  cmd->add_option("--session-secret-file", o->srv.session_secret_file,
                  "File holding the secret that signs session files (HMAC-SHA256; at least 16 bytes). Default: one "
                  "generated in DIR/.session-secret. Servers sharing session files need the same secret");
  cmd->add_option("--session-max-mib", o->session_max_mib, "Largest session file restore reads, in MiB")
      ->check(CLI::Range(1, 1 << 24))->capture_default_str();
  const char* sg = "KV signals";
  cmd->add_option("--confidence-probe", o->srv.confidence_path,
                  "Learned confidence probe (default: <model>.confidence.bin when present)")->group(sg);
  cmd->add_option("--confidence-every", o->srv.confidence_every, "Streams: kvscope.confidence every N tokens")
      ->check(CLI::Range(1, 1 << 20))->capture_default_str()->group(sg);
  cmd->add_option("--kv-profile", o->srv.kv_profile_path,
                  "KV anomaly profile: kvscope.anomaly on every response (auto: <model>.kvprofile.bin)")->group(sg);
  cmd->add_option("--reject-anomalous", o->reject,
                  "Refuse prompts whose KV anomaly score exceeds THRESHOLD with a 400 ('default': the profile's threshold)")
      ->group(sg);
  cmd->add_flag("--log-requests", o->srv.log_requests, "Log one line per request on stderr");
  cmd->add_flag("!--no-webui", o->srv.webui, "Do not serve the web UI (/ and /dashboard answer 404)");
  add_reasoning_options(cmd, o->reasoning);
  const char* g = "Adaptive reasoning";
  cmd->add_option("--decision-cache", o->srv.decision_cache.redis_url,
                  "Share decisions through Redis (redis://host:port[/db]); default: in memory only")->group(g);
  cmd->add_option("--decision-cache-size", o->srv.decision_cache.capacity, "Decisions kept in memory")
      ->check(CLI::Range(1, 1 << 24))->capture_default_str()->group(g);
  cmd->add_option("--decision-ttl", o->srv.decision_cache.ttl_s, "TTL of a decision in Redis (s)")
      ->check(CLI::Range(1, 1 << 30))->capture_default_str()->group(g);
  cmd->add_option("--analysis-interval", o->srv.analysis_interval_ms,
                  "0: decide the reasoning effort once per request; any other value: re-estimate every "
                  "--recheck-every tokens, at the token, as kvscope run does (the value is no longer a period)")
      ->check(CLI::Range(0, 60000))->capture_default_str()->group(g);
  cmd->add_option("--reasoning-budget", o->reasoning_budget,
                  "Thinking budget of requests that give none (as llama.cpp: -1 unbounded, 0 no thinking; N > 0: "
                  "</think> is written after N thinking tokens)")
      ->check(CLI::Range(-1, 1 << 24))->group(g);
  const char* t = "Scale-out (docs/scale-out.md)";
  cmd->add_option("--kv-tier", o->srv.kv_tier.url,
                  "Share full KV blocks and sessions with other replicas through Redis: redis://[user:password@]host:port[/db]")
      ->group(t);
  cmd->add_option("--kv-tier-ttl", o->srv.kv_tier.ttl_s, "TTL of every key in the KV tier (s, refreshed when read)")
      ->check(CLI::Range(1, 1 << 30))->capture_default_str()->group(t);
  cmd->add_option("--kv-tier-max-blocks", o->srv.kv_tier.max_blocks,
                  "Blocks kept in the tier per model and KV layout (least recently used go first)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))->capture_default_str()->group(t);
  cmd->add_option("--kv-tier-timeout-ms", o->srv.kv_tier.timeout_ms,
                  "Redis connect/read timeout: a slower tier is treated as down and serving goes on locally")
      ->check(CLI::Range(1, 60000))->capture_default_str()->group(t);
  cmd->callback([o, cmd] {
    server::ServerOptions so = o->srv;
    so.kv_tier.validate();  // a bad URL is an error at startup, not at the first request
    so.difficulty_path = o->reasoning.difficulty;
    if (o->reasoning.format != "auto") so.reasoning_format_name = o->reasoning.format;
    so.effort_budgets = o->reasoning.budgets;
    if (cmd->get_option("--reasoning-budget")->count()) so.reasoning_budget = o->reasoning_budget;
    so.controller = o->reasoning.controller();
    so.model_path = resolve_model(o->model.path);
    so.engine.n_threads = o->model.threads;
    so.engine.n_ctx = o->model.ctx;
    so.engine.kv_mem_bytes = size_t(o->kv_mem_mib) << 20;
    so.engine.kv_type = o->model.kv_types();  // InputError names a bad type or map before loading
    // -b (llama.cpp's logical batch) and --batch-tokens both set the engine's per-step token budget.
    so.engine.max_batch_tokens = cmd->get_option("--batch-size")->count() ? o->model.batch : o->batch_tokens;
    so.engine.max_seqs = o->max_seqs;
    so.engine.swa_full = o->model.swa_full;
    so.max_body_bytes = o->max_body_kib << 10;
    so.session_max_bytes = o->session_max_mib << 20;
    so.signals = o->signals == "on";
    if (!o->reject.empty()) {
      if (o->reject == "default") {
        so.reject_anomalous = 0;
      } else {
        char* end = nullptr;
        const double v = std::strtod(o->reject.c_str(), &end);
        if (end == o->reject.c_str() || *end || !(v > 0) || !std::isfinite(v))
          throw InputError("--reject-anomalous: '" + o->reject + "' is not a positive number or 'default'");
        so.reject_anomalous = v;
      }
    }
    // Signals are taken synchronously by this thread; every server thread inherits the mask.
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    server::Server srv(so);
    const int port = srv.start();
    std::fprintf(stderr, "kvscope serve: listening on http://%s:%d/v1 (loading %s)\n", so.host.c_str(), port, so.model_path.c_str());
    if (so.webui)
      std::fprintf(stderr, "kvscope serve: web UI on http://%s:%d/ (dashboard: /dashboard)\n", so.host.c_str(), port);
    bool announced = false;
    for (;;) {
      timespec tick{0, 100 * 1000 * 1000};
      const int sig = sigtimedwait(&sigs, nullptr, &tick);
      if (sig == SIGINT || sig == SIGTERM) {
        std::fprintf(stderr, "kvscope serve: %s, shutting down\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
        break;
      }
      if (!announced && srv.wait_ready(0)) {  // rethrows a load failure (exit 1 with its message)
        std::fprintf(stderr, "kvscope serve: model ready\n");
        announced = true;
      }
    }
    srv.shutdown();
    std::fprintf(stderr, "kvscope serve: stopped\n");
  });
}

}  // namespace kvscope::cli
