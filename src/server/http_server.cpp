// Server lifecycle (bind, background model load, graceful shutdown), auth, error mapping and the
// simple routes. The generation routes live in completions.cpp.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "model/fingerprint.h"
#include "server/server_impl.h"
#include "server/webui.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/hash.h"

namespace kvscope::server {

uint64_t hash_bytes(const std::string& s, uint64_t seed) { return util::fnv1a(s, util::kFnvOffset ^ seed); }

void write_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(dump(error_body(e)), "application/json");
}

namespace {

bool same_key(const std::string& a, const std::string& b) {
  // Constant time in the key's content, so response timing does not reveal a prefix.
  unsigned diff = a.size() != b.size();
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i % (b.size() + 1)]);
  return diff == 0;
}

std::string bearer_of(const httplib::Request& req) {
  const std::string h = req.get_header_value("Authorization");
  return h.rfind("Bearer ", 0) == 0 ? h.substr(7) : std::string();
}

// The web UI's pages and files.
bool is_web_path(const std::string& p) { return p == "/" || p == "/dashboard" || p.rfind("/ui/", 0) == 0; }

// Files the key form needs before a key is known (they hold no data).
bool is_public_web_file(const std::string& p) { return p == "/ui/login.js" || p == "/ui/kvscope.css"; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The key the web UI's key form stored in the `kvscope_key` cookie, or "". The form writes it as hex
// of its UTF-8 bytes: httplib percent-decodes header values, so an encoded ';' would split the cookie.
std::string cookie_key(const httplib::Request& req) {
  const std::string h = req.get_header_value("Cookie");
  size_t pos = 0;
  while (pos < h.size()) {
    size_t end = h.find(';', pos);
    if (end == std::string::npos) end = h.size();
    std::string item = h.substr(pos, end - pos);
    while (!item.empty() && item.front() == ' ') item.erase(0, 1);
    if (item.rfind("kvscope_key=", 0) == 0) {
      const std::string v = item.substr(12);
      if (v.size() % 2) return "";
      std::string out;
      for (size_t i = 0; i < v.size(); i += 2) {
        const int hi = hex_value(v[i]), lo = hex_value(v[i + 1]);
        if (hi < 0 || lo < 0) return "";
        out += static_cast<char>(hi * 16 + lo);
      }
      return out;
    }
    pos = end + 1;
  }
  return "";
}

void serve_web_file(httplib::Response& res, const std::string& name) {
  WebFile f;
  if (!find_web_file(name, f)) throw ApiError(404, "invalid_request_error", "Unknown web UI file: " + name, "", "unknown_url");
  // Everything the page uses comes from this server; nothing is fetched from elsewhere.
  res.set_header("Content-Security-Policy",
                 "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
                 "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Cache-Control", "no-cache");
  res.set_content(std::string(f.data), std::string(f.content_type));
}

// Runs a route handler, mapping exceptions to OpenAI error objects (never a crash or a hang-up).
template <class F>
httplib::Server::Handler guarded(Server::Impl* s, F f) {
  return [s, f](const httplib::Request& req, httplib::Response& res) {
    try {
      f(req, res);
      return;
    } catch (const ApiError& e) {
      write_error(res, e);
    } catch (const LimitError& e) {
      write_error(res, invalid_request(e.what(), "", "context_length_exceeded"));
    } catch (const InputError& e) {
      write_error(res, invalid_request(e.what()));
    } catch (const std::bad_alloc&) {
      write_error(res, ApiError(503, "server_error", "out of memory"));
    } catch (const std::exception& e) {
      write_error(res, ApiError(500, "server_error", std::string("internal error: ") + e.what()));
    }
    s->metrics.requests_failed.fetch_add(1, std::memory_order_relaxed);
    s->metrics.tenant(s->tenant_salt(req)).requests_failed.fetch_add(1, std::memory_order_relaxed);
  };
}

}  // namespace

uint64_t Server::Impl::tenant_salt(const httplib::Request& req) const {
  if (!auth_required()) return 0;
  return hash_bytes("kvscope-tenant:" + bearer_of(req), 0);
}

bool Server::Impl::global_view(const httplib::Request& req) const {
  if (!auth_required()) return true;  // one tenant: its view is the global one
  const std::string key = bearer_of(req);
  bool admin = false;
  for (const auto& k : opt.admin_keys) admin |= same_key(key, k);
  return admin;
}

void Server::Impl::require_serving() const {
  switch (state.load(std::memory_order_acquire)) {
    case State::Ready: return;
    case State::Idle:
    case State::Loading: throw ApiError(503, "server_error", "the model is still loading; retry shortly", "", "model_loading");
    case State::Failed: throw ApiError(503, "server_error", "the model failed to load: " + load_error, "", "model_load_failed");
    default: throw ApiError(503, "server_error", "the server is shutting down", "", "shutting_down");
  }
}

void Server::Impl::setup_reasoning(const Model& m) {
  ReasoningContext& rc = reasoning;
  rc.controller = opt.controller;
  rc.controller.validate();
  rc.format = opt.reasoning_format;
  rc.fingerprint = model_fingerprint(m);
  rc.budgets = opt.effort_budgets;
  if (opt.reasoning_format_name.empty()) {
    rc.kind = reasoning::detect_format(m);
  } else {
    const auto k = reasoning::parse_format(opt.reasoning_format_name);
    if (!k)
      throw InputError("unknown reasoning format '" + opt.reasoning_format_name +
                       "' (known: " + reasoning::format_names() + ")");
    rc.kind = *k;
  }
  std::string path = opt.difficulty_path;
  const bool given = !path.empty();
  if (!given) path = reasoning::sibling_difficulty_path(opt.model_path);
  if (!path.empty()) {
    try {
      rc.difficulty = std::make_unique<reasoning::DifficultyFile>(reasoning::load_difficulty(path, rc.fingerprint));
      rc.difficulty_path = path;
    } catch (const InputError& e) {
      if (given) throw;  // asked for explicitly: refuse to start with a wrong estimator
      std::fprintf(stderr, "warning: %s; reasoning 'auto' is off\n", e.what());
    }
  }
  rc.cache = std::make_unique<reasoning::DecisionCache>(opt.decision_cache);
  rc.reestimate = rc.difficulty && opt.analysis_interval_ms > 0;
}

void Server::Impl::setup_signals(const Model& m) {
  const uint64_t fp = model_fingerprint(m);
  // Files asked for explicitly must fit the model; a sibling that does not is skipped with a warning.
  auto load = [&](const std::string& given, std::string sibling, auto loader) {
    const std::string path = given.empty() ? sibling : given;
    using T = decltype(loader(path));
    if (path.empty()) return std::unique_ptr<T>();
    try {
      return std::make_unique<T>(loader(path));
    } catch (const InputError& e) {
      if (!given.empty()) throw;
      std::fprintf(stderr, "warning: %s; ignored\n", e.what());
      return std::unique_ptr<T>();
    }
  };
  if (opt.signals)
    probe = load(opt.confidence_path, signals::sibling_probe_path(opt.model_path),
                 [&](const std::string& p) {
                   auto f = signals::load_probe(p, fp);
                   signals::ProbeFeatures fits(m.hparams(), f.spec);  // its layers and prompt prior fit the model
                   return f;
                 });
  // The profile is opt-in: scoring a prompt costs a prefill pass before the request is admitted.
  if (opt.kv_profile_path == "auto") {
    const std::string sib = signals::sibling_profile_path(opt.model_path);
    if (sib.empty()) throw InputError("--kv-profile auto: no <model>.kvprofile.bin beside the model (build one with kvscope kv-profile)");
    kv_profile = std::make_unique<signals::KVProfile>(signals::load_profile(sib, fp));
  } else if (!opt.kv_profile_path.empty()) {
    kv_profile = std::make_unique<signals::KVProfile>(signals::load_profile(opt.kv_profile_path, fp));
  }
  if (opt.reject_anomalous >= 0 && !kv_profile)
    throw InputError("--reject-anomalous needs a KV profile (--kv-profile FILE, or <model>.kvprofile.bin; build one with kvscope kv-profile)");
}

void Server::Impl::load_model() {
  try {
    if (opt.before_load) opt.before_load();
    auto m = Model::load(opt.model_path, opt.engine.n_threads);
    if (!opt.chat_template.empty()) {
      chat_format = tok::chat_format_from_name(opt.chat_template);
    } else if (const std::string t = m->chat_template(); !t.empty()) {
      try {
        chat_format = tok::detect_chat_format(t);
      } catch (const InputError& e) {
        std::fprintf(stderr, "warning: %s; chat requests use chatml (set --chat-template)\n", e.what());
      }
    }
    tool_format = opt.tool_format.empty() ? toolcall::detect_tool_format(m->chat_template())
                                          : toolcall::tool_format_from_name(opt.tool_format);
    setup_reasoning(*m);
    setup_signals(*m);
    EngineParams ep = opt.engine;
    if (opt.kv_for_context) {  // one sequence of the whole context, whatever a token's K/V costs
      const int ctx = ep.n_ctx > 0 ? ep.n_ctx : m->hparams().n_ctx_train;
      ep.n_blocks = (ctx + ep.block_size - 1) / ep.block_size + 2;
    }
    auto eng = std::make_unique<Engine>(*m, ep);
    eng->start();
    std::unique_ptr<kvtier::KvTier> tier;
    if (!opt.kv_tier.url.empty()) {
      tier = std::make_unique<kvtier::KvTier>(opt.kv_tier);
      tier->attach(*eng);
    }
    metrics.kv_types = opt.engine.kv_type.describe();  // published by the state change below
    std::lock_guard lk(state_mu);
    model = std::move(m);
    engine = std::move(eng);
    kv_tier = std::move(tier);
    State expected = State::Loading;
    state.compare_exchange_strong(expected, State::Ready, std::memory_order_acq_rel);
  } catch (const std::exception& e) {
    std::lock_guard lk(state_mu);
    load_error = e.what();
    State expected = State::Loading;
    state.compare_exchange_strong(expected, State::Failed, std::memory_order_acq_rel);
  }
  state_cv.notify_all();
}

Completion Server::Impl::reap(RequestId id) {
  Completion c = engine->wait(id);
  {
    std::lock_guard lk(live_mu);
    live.erase(id);
  }
  live_cv.notify_all();
  metrics.in_flight.fetch_sub(1, std::memory_order_relaxed);
  return c;
}

// Adaptive reasoning's part of /metrics: the decision cache and the re-estimates.
std::string Server::Impl::reasoning_metrics() const {
  if (state.load(std::memory_order_acquire) < State::Ready) return "";
  std::string out;
  auto line = [&out](const char* name, const char* type, const char* help, double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", v);
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + b + "\n";
  };
  if (reasoning.cache) {
    const auto c = reasoning.cache->stats();
    line("kvscope_decision_cache_hits_total", "counter", "Reasoning decisions served from the decision cache.", double(c.hits));
    line("kvscope_decision_cache_misses_total", "counter", "Reasoning decisions the cache did not have.", double(c.misses));
    line("kvscope_decision_cache_redis_up", "gauge", "1 while the Redis of the decision cache is connected (0: down or none).",
         c.redis_connected ? 1 : 0);
  }
  if (reasoning.difficulty) {
    // Re-estimates are taken at their token on the step thread, so every one that comes due is done.
    const double n = double(reasoning.reestimates.load(std::memory_order_relaxed));
    line("kvscope_reestimates_due_total", "counter", "Re-estimates of difficulty that came due (every check_every tokens).", n);
    line("kvscope_reestimates_done_total", "counter", "Re-estimates of difficulty carried out.", n);
    line("kvscope_reestimate_seconds_total", "counter", "Time spent re-estimating difficulty on the step thread.",
         double(reasoning.reestimate_us.load(std::memory_order_relaxed)) * 1e-6);
  }
  return out;
}

void Server::Impl::setup_routes() {
  http.set_payload_max_length(opt.max_body_bytes);  // the front checks it first; this is a backstop
  install_request_hooks();
  route_status();
  route_models();
  route_sessions();
  route_generation();
  route_responses();
}

void Server::Impl::install_request_hooks() {
  auto& h = http;

  // Every response carries an x-request-id (errors, 401s and streams too): the client's own when it
  // sent a usable one (up to 128 printable ASCII characters), else a fresh one, so a client's log
  // and the server's can be matched.
  h.set_post_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.has_header("x-request-id")) return;
    std::string id = req.get_header_value("x-request-id");
    const bool usable = !id.empty() && id.size() <= 128 &&
                        std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c < 0x7f; });
    if (!usable) {
      static std::atomic<uint64_t> counter{0};
      const uint64_t t = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
      const uint64_t n = counter.fetch_add(1, std::memory_order_relaxed);
      char buf[48];
      std::snprintf(buf, sizeof buf, "req_%016llx%08llx", static_cast<unsigned long long>(hash_bytes(std::to_string(t), n)),
                    static_cast<unsigned long long>(n & 0xffffffffULL));
      id = buf;
    }
    res.set_header("x-request-id", id);
  });
  h.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!auth_required() || req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
    const bool web_get = opt.webui && req.method == "GET" && is_web_path(req.path);
    if (web_get && is_public_web_file(req.path)) return httplib::Server::HandlerResponse::Unhandled;
    std::string key = bearer_of(req);
    // A browser cannot add a bearer header to the pages it loads itself: those GETs take the key from
    // the cookie the UI's key form sets (the API routes do not, so a cookie cannot forge a request).
    if (key.empty() && web_get) key = cookie_key(req);
    bool ok = false;
    for (const auto& k : opt.api_keys) ok |= same_key(key, k);
    for (const auto& k : opt.admin_keys) ok |= same_key(key, k);
    if (ok) return httplib::Server::HandlerResponse::Unhandled;
    if (web_get && (req.path == "/" || req.path == "/dashboard")) {
      serve_web_file(res, "login.html");  // still a 401: the page asks for the key, nothing else
      res.status = 401;
      res.set_header("WWW-Authenticate", "Bearer");
      metrics.requests_failed.fetch_add(1, std::memory_order_relaxed);
      return httplib::Server::HandlerResponse::Handled;
    }
    write_error(res, ApiError(401, "invalid_request_error",
                              key.empty() ? "Missing bearer authentication in header (Authorization: Bearer KEY)"
                                          : "Incorrect API key provided",
                              "", "invalid_api_key"));
    res.set_header("WWW-Authenticate", "Bearer");
    metrics.requests_failed.fetch_add(1, std::memory_order_relaxed);
    return httplib::Server::HandlerResponse::Handled;
  });

  // Statuses httplib produces itself (no route, body too large, bad framing) get OpenAI's shape too.
  h.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 404)
      write_error(res, ApiError(404, "invalid_request_error", "Unknown request URL: " + req.method + " " + req.path, "",
                                "unknown_url"));
    else if (res.status == 413)
      write_error(res, ApiError(413, "invalid_request_error",
                                "request body too large (the limit is " + std::to_string(opt.max_body_bytes) + " bytes)", "",
                                "request_too_large"));
    else
      write_error(res, ApiError(res.status, res.status >= 500 ? "server_error" : "invalid_request_error",
                                "HTTP error " + std::to_string(res.status)));
    metrics.requests_failed.fetch_add(1, std::memory_order_relaxed);
    return httplib::Server::HandlerResponse::Handled;
  }));
  h.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    write_error(res, ApiError(500, "server_error", "internal error"));
  });
  if (opt.log_requests)
    h.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      std::fprintf(stderr, "%s %s -> %d\n", req.method.c_str(), req.path.c_str(), res.status);
    });
}

void Server::Impl::route_status() {
  auto& h = http;
  h.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    const State st = state.load(std::memory_order_acquire);
    json j;
    if (st == State::Ready) {
      j = {{"status", "ok"}};
    } else if (st == State::Failed) {
      std::lock_guard lk(state_mu);
      j = {{"status", "error"}, {"error", load_error}};
    } else {
      j = {{"status", st == State::Loading || st == State::Idle ? "loading" : "shutting_down"}};
    }
    res.status = st == State::Ready ? 200 : 503;
    res.set_content(dump(j), "application/json");
  });
  // Under API keys a tenant's key sees its own counters only; the global view needs --admin-key.
  h.Get("/metrics", guarded(this, [this](const httplib::Request& req, httplib::Response& res) {
          if (!global_view(req)) {
            res.set_content(metrics.tenant(tenant_salt(req)).render(state.load(std::memory_order_acquire) >= State::Ready),
                            "text/plain; version=0.0.4; charset=utf-8");
            return;
          }
          std::optional<EngineStats> st;
          if (state.load(std::memory_order_acquire) >= State::Ready && engine) st = engine->stats();
          res.set_content(metrics.render(st ? &*st : nullptr) + reasoning_metrics() + (kv_tier ? kv_tier->metrics_text() : ""), "text/plain; version=0.0.4; charset=utf-8");
        }));
  h.Get("/v1/stats", guarded(this, [this](const httplib::Request& req, httplib::Response& res) {
          std::optional<EngineStats> st;
          if (state.load(std::memory_order_acquire) >= State::Ready && engine) st = engine->stats();
          json j = global_view(req) ? metrics.to_json(st ? &*st : nullptr) : metrics.tenant(tenant_salt(req)).to_json(st.has_value());
          j["model"] = model_id;
          j["uptime_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
          res.set_header("Cache-Control", "no-cache");
          res.set_content(dump(j), "application/json");
        }));
  if (opt.webui) {
    h.Get("/", guarded(this, [](const httplib::Request&, httplib::Response& res) { serve_web_file(res, "index.html"); }));
    h.Get("/dashboard", guarded(this, [](const httplib::Request&, httplib::Response& res) { serve_web_file(res, "dashboard.html"); }));
    h.Get(R"(/ui/([A-Za-z0-9_-]+\.(?:js|css|html)))", guarded(this, [](const httplib::Request& req, httplib::Response& res) {
            serve_web_file(res, req.matches[1]);
          }));
  }
}

void Server::Impl::route_models() {
  auto& h = http;
  auto model_obj = [this] {
    return json{{"id", model_id},
                {"object", "model"},
                {"created", created},
                {"owned_by", "kvscope"},
                {"kvscope",
                 {{"n_ctx", engine->max_seq_tokens()},
                  {"chat_template", tok::chat_format_name(chat_format)},
                  {"reasoning_format", std::string(reasoning::format_name(reasoning.kind))},
                  {"kv_types", metrics.kv_types},
                  {"kv_bytes_per_token", engine->stats().bytes_per_token}}}};
  };
  h.Get("/v1/models", guarded(this, [this, model_obj](const httplib::Request&, httplib::Response& res) {
          require_serving();
          res.set_content(dump({{"object", "list"}, {"data", json::array({model_obj()})}}), "application/json");
        }));
  h.Get(R"(/v1/models/(.+))", guarded(this, [this, model_obj](const httplib::Request& req, httplib::Response& res) {
          require_serving();
          if (req.matches[1] != model_id)
            throw ApiError(404, "invalid_request_error", "The model '" + std::string(req.matches[1]) + "' does not exist",
                           "model", "model_not_found");
          res.set_content(dump(model_obj()), "application/json");
        }));
}

void Server::Impl::route_sessions() {
  auto& h = http;
  h.Post(R"(/v1/sessions/([^/]*)/(save|restore))", guarded(this, [this](const httplib::Request& req, httplib::Response& res) {
           res.set_content(dump(session_request(req, req.matches[1], req.matches[2])), "application/json");
         }));
  h.Delete(R"(/v1/sessions/([^/]*))", guarded(this, [this](const httplib::Request& req, httplib::Response& res) {
             res.set_content(dump(session_request(req, req.matches[1], "delete")), "application/json");
           }));
  h.Get("/v1/sessions", guarded(this, [this](const httplib::Request& req, httplib::Response& res) {
          res.set_content(dump(session_list(req)), "application/json");
        }));
}

void Server::Impl::route_generation() {
  auto& h = http;
  h.Post("/v1/embeddings", guarded(this, [this](const httplib::Request& req, httplib::Response& res) {
           handle_embeddings(req, res);
         }));
  h.Post("/v1/completions", guarded(this, [this](const httplib::Request& req, httplib::Response& res) {
           handle_generation(req, res, Endpoint::Completions);
         }));
  h.Post("/v1/chat/completions", guarded(this, [this](const httplib::Request& req, httplib::Response& res) {
           handle_generation(req, res, Endpoint::Chat);
         }));
}

void Server::Impl::route_responses() {
  auto& h = http;
  h.Post("/v1/responses", guarded(this, [this](const httplib::Request& req, httplib::Response& res) {
           handle_responses(req, res);
         }));
  h.Get(R"(/v1/responses/([^/]+))", guarded(this, [this](const httplib::Request& req, httplib::Response& res) {
          const auto r = responses.get(tenant_salt(req), req.matches[1]);
          if (!r)
            throw ApiError(404, "invalid_request_error", "Response with id '" + std::string(req.matches[1]) + "' not found.",
                           "response_id", "response_not_found");
          res.set_content(dump(r->response), "application/json");
        }));
  h.Delete(R"(/v1/responses/([^/]+))", guarded(this, [this](const httplib::Request& req, httplib::Response& res) {
             const std::string id = req.matches[1];
             const uint64_t tenant = tenant_salt(req);
             const auto gone = responses.erase(tenant, id);
             if (!gone)
               throw ApiError(404, "invalid_request_error", "Response with id '" + id + "' not found.", "response_id",
                              "response_not_found");
             // The last stored response of a chain takes the chain's pinned KV with it.
             if (!gone->session.empty() && !responses.uses_session(tenant, gone->session))
               engine->drop_session(session_key(tenant, gone->session));
             res.set_content(dump(json{{"id", id}, {"object", "response"}, {"deleted", true}}), "application/json");
           }));
}

Server::Server(ServerOptions o) : impl_(std::make_unique<Impl>(std::move(o))) {}

Server::~Server() { shutdown(); }

void Server::add_extension_hook(ExtensionHook h) { impl_->hooks.push_back(std::move(h)); }

void Server::Impl::begin_start() {
  if (state.load() != State::Idle) throw InputError("server already started");
  if (opt.model_path.empty()) throw InputError("no model path given");
  model_id = opt.model_id.empty() ? std::filesystem::path(opt.model_path).stem().string() : opt.model_id;
  created = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int Server::start() {
  Impl& s = *impl_;
  s.begin_start();
  s.setup_sessions();
  s.setup_routes();
  const ServerOptions& o = s.opt;
  FrontLimits lim;
  lim.max_body_bytes = o.max_body_bytes;
  lim.max_header_bytes = o.max_header_bytes;
  lim.max_headers = o.max_headers;
  lim.header_timeout_s = o.header_timeout_s;
  lim.body_timeout_s = o.body_timeout_s;
  lim.keep_alive_s = o.keep_alive_s;
  lim.max_conns_per_ip = o.max_conns_per_ip;
  lim.max_connections = o.max_connections;
  lim.workers = o.http_threads > 0 ? o.http_threads : o.max_queue + 16;
  lim.reuse_port = o.reuse_port;
  s.front = std::make_unique<HttpFront>(
      s.http, lim,
      [](int status, const std::string& message, const std::string& code) {
        return dump(error_body(ApiError(status, status >= 500 ? "server_error" : "invalid_request_error", message, "", code)));
      },
      [&s] { s.metrics.requests_failed.fetch_add(1, std::memory_order_relaxed); });
  s.port = s.front->bind(o.host, o.port);  // InputError names the address and the reason
  s.state.store(State::Loading, std::memory_order_release);
  s.front->start();
  s.load_thread = std::thread([&s] { s.load_model(); });
  return s.port;
}

bool Server::wait_ready(double timeout_s) {
  Impl& s = *impl_;
  std::unique_lock lk(s.state_mu);
  s.state_cv.wait_for(lk, std::chrono::duration<double>(timeout_s), [&] {
    const State st = s.state.load();
    return st != State::Loading && st != State::Idle;
  });
  if (s.state.load() == State::Failed) throw InputError(s.load_error);
  return s.state.load() == State::Ready;
}

bool Server::failed() const { return impl_->state.load() == State::Failed; }

void Server::shutdown() {
  Impl& s = *impl_;
  State st = s.state.load();
  if (st == State::Idle || st == State::Stopped) return;
  if (s.load_thread.joinable()) s.load_thread.join();
  s.state.store(State::Draining, std::memory_order_release);
  {
    // Let in-flight requests finish; past the grace period cancel them (their streams end with
    // finish_reason "cancelled") and wait for them to be written.
    std::unique_lock lk(s.live_mu);
    auto idle = [&] { return s.live.empty() && s.live_embeddings == 0; };
    const bool drained = s.live_cv.wait_for(lk, std::chrono::duration<double>(s.opt.shutdown_grace_s), idle);
    if (!drained) {
      // Cancelled work gets the same moment to write its last chunk as shutdown waits for it: a
      // cancelled embedding is noticed only after the forward step under way (over 2 s in a
      // sanitizer build on an AVX2-only CPU), and its error must still reach the client. Writes to
      // clients that read too slowly fail after it, so slow readers cannot stretch the shutdown.
      constexpr auto kLastWrites = std::chrono::seconds(3);
      if (s.front) s.front->set_write_deadline(std::chrono::steady_clock::now() + kLastWrites);
      if (s.engine)
        for (RequestId id : s.live) s.engine->cancel(id);
      s.cancel_embeddings.store(true, std::memory_order_release);  // noticed before the next forward step
      s.live_cv.wait_for(lk, kLastWrites, idle);
    }
  }
  if (s.front) s.front->stop(2.0);  // answers still being written get 2 s more, then their connections are broken
  if (s.engine) s.engine->stop();
  if (s.kv_tier) s.kv_tier->flush(5.0);  // the last turns' blocks and sessions reach Redis
  s.state.store(State::Stopped);
}

int Server::port() const { return impl_->port; }

Engine* Server::engine() { return impl_->state.load(std::memory_order_acquire) >= State::Ready ? impl_->engine.get() : nullptr; }

std::string Server::metrics_text() const {
  const Impl& s = *impl_;
  std::optional<EngineStats> st;
  if (s.state.load(std::memory_order_acquire) >= State::Ready && s.engine) st = s.engine->stats();
  return s.metrics.render(st ? &*st : nullptr);
}

}  // namespace kvscope::server
