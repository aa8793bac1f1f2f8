// POST /v1/completions and /v1/chat/completions: validation, tokenization, admission, then the
// response written as the engine produces tokens: an SSE stream, or one JSON body. A client that
// hangs up is noticed on the next write (a silent request writes heartbeats: SSE comments, or
// JSON-insignificant spaces), and its engine request is cancelled so its blocks return to the pool.
#include <chrono>
#include <cstdio>

#include "server/generation.h"
#include "server/server_impl.h"
#include "util/error.h"

namespace kvscope::server {

namespace {

// One HTTP response in progress.
struct Exchange {
  Server::Impl* srv = nullptr;
  json body;
  GenRequest g;
  std::vector<int32_t> prompt;
  std::shared_ptr<Generation> gen;
  RequestId id = 0;
  std::string resp_id;
  int64_t created = 0;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now(), last_write = t0;
  bool reaped = false, sent_role = false;
  Completion completion;
  std::string text;                    // everything sent so far
  std::vector<TokenLogprob> logprobs;  // non-stream: gathered for the body

  Usage usage() const { return {static_cast<int>(prompt.size()), gen->completion_tokens()}; }

  void finish() {
    if (reaped) return;
    completion = srv->reap(id);
    reaped = true;
    srv->metrics.e2e.observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  // Client gone or the write failed: stop the engine's work and take the request off the books.
  void abandon() {
    if (reaped) return;
    srv->engine->cancel(id);
    srv->metrics.requests_cancelled.fetch_add(1, std::memory_order_relaxed);
    finish();
  }

  json extension() const {
    json ext = {{"prompt_tokens_cached", completion.n_cached},
                {"preemptions", completion.n_preempted},
                {"session_id", g.session_id.empty() ? json(nullptr) : json(g.session_id)}};
    ResponseInfo info{body, prompt, completion, text};
    for (const auto& h : srv->hooks) h(info, ext);
    return ext;
  }
};

bool write_all(httplib::DataSink& sink, const std::string& s) { return sink.write(s.data(), s.size()); }

std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }

// One call of httplib's chunked content provider for a stream: waits for output, writes it.
bool stream_step(Exchange& x, httplib::DataSink& sink) {
  const Endpoint ep = x.g.endpoint;
  const std::string& model = x.srv->model_id;
  std::string out;
  if (ep == Endpoint::Chat && !x.sent_role) {
    out += sse(chunk_body(ep, x.resp_id, x.created, model, "", "", nullptr, true, x.g.include_usage, nullptr));
    x.sent_role = true;
  }
  std::vector<Generation::Piece> pieces;
  const auto st = x.gen->wait(pieces, x.srv->opt.heartbeat_s);
  if (st == Generation::Status::Timeout && out.empty()) out = ": keep-alive\n\n";  // probes the connection
  for (auto& p : pieces) {
    if (p.text.empty() && p.logprobs.empty()) continue;
    const json lp = x.g.logprobs >= 0 ? logprobs_json(ep, p.logprobs, x.text.size()) : json(nullptr);
    x.text += p.text;
    out += sse(chunk_body(ep, x.resp_id, x.created, model, p.text, "", lp, false, x.g.include_usage, nullptr));
  }
  if (st == Generation::Status::Finished) {
    x.finish();
    const json ext = x.extension();
    out += sse(chunk_body(ep, x.resp_id, x.created, model, "", x.gen->finish_reason(), nullptr, false, x.g.include_usage, ext));
    if (x.g.include_usage) out += sse(usage_chunk(ep, x.resp_id, x.created, model, x.usage(), ext));
    out += "data: [DONE]\n\n";
  }
  if (!out.empty() && !write_all(sink, out)) return false;
  if (st == Generation::Status::Finished) sink.done();
  return true;
}

// The non-stream variant: gathers the answer, writes heartbeats meanwhile, then the body.
bool body_step(Exchange& x, httplib::DataSink& sink) {
  std::vector<Generation::Piece> pieces;
  const auto st = x.gen->wait(pieces, x.srv->opt.heartbeat_s);
  for (auto& p : pieces) {
    x.text += p.text;
    for (auto& l : p.logprobs) x.logprobs.push_back(std::move(l));
  }
  if (st != Generation::Status::Finished) {
    // Output keeps coming without anything written: probe the connection now and then.
    const auto now = std::chrono::steady_clock::now();
    if (now - x.last_write < std::chrono::duration<double>(x.srv->opt.heartbeat_s)) return true;
    x.last_write = now;
    return write_all(sink, " ");  // leading whitespace is valid JSON
  }
  x.finish();
  const Endpoint ep = x.g.endpoint;
  const json lp = x.g.logprobs >= 0 ? logprobs_json(ep, x.logprobs, 0) : json(nullptr);
  const json j = completion_body(ep, x.resp_id, x.created, x.srv->model_id, x.text, x.gen->finish_reason(), lp, x.usage(),
                                 x.extension());
  if (!write_all(sink, dump(j))) return false;
  sink.done();
  return true;
}

// Headers are out once a provider runs, so a failure there can only end the response (the
// releaser then cancels the request); it must not escape into httplib's worker.
httplib::ContentProviderWithoutLength guard_step(std::shared_ptr<Exchange> x, bool (*step)(Exchange&, httplib::DataSink&)) {
  return [x, step](size_t, httplib::DataSink& sink) {
    try {
      return step(*x, sink);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kvscope serve: response aborted: %s\n", e.what());
      return false;
    }
  };
}

}  // namespace

std::vector<int32_t> Server::Impl::tokenize(const GenRequest& g) const {
  const tok::Tokenizer& tk = model->tokenizer();
  if (g.endpoint == Endpoint::Completions) {
    if (g.token_prompt) {
      for (int32_t t : g.prompt_tokens)
        if (t >= tk.n_vocab())
          throw invalid_request("token id " + std::to_string(t) + " in 'prompt' is outside the vocabulary of " +
                                    std::to_string(tk.n_vocab()),
                                "prompt", "invalid_value");
      return g.prompt_tokens;
    }
    return tk.encode(g.prompt, true, false);  // user text: special-token spellings stay plain text
  }
  const auto& v = tk.vocab();
  auto text_of = [&](int id) { return id >= 0 && id < tk.n_vocab() ? v.tokens[id] : std::string(); };
  const std::string prompt = tok::apply_chat_template(chat_format, g.messages, true, text_of(v.bos), text_of(v.eos));
  // Templates that spell out BOS themselves must not get a second one.
  const bool has_bos = v.bos >= 0 && !text_of(v.bos).empty() && prompt.rfind(text_of(v.bos), 0) == 0;
  return tk.encode(prompt, !has_bos, true);
}

void Server::Impl::handle_generation(const httplib::Request& req, httplib::Response& res, Endpoint ep) {
  require_serving();
  auto x = std::make_shared<Exchange>();
  x->srv = this;
  x->body = parse_json_body(req.body);
  x->g = parse_gen_request(x->body, ep);
  GenRequest& g = x->g;
  if (!g.model.empty() && g.model != model_id)
    throw ApiError(404, "invalid_request_error", "The model '" + g.model + "' does not exist", "model", "model_not_found");
  x->prompt = tokenize(g);
  const int n_prompt = static_cast<int>(x->prompt.size());
  const int limit = engine->max_seq_tokens();
  if (n_prompt == 0) throw invalid_request("the prompt is empty", ep == Endpoint::Chat ? "messages" : "prompt", "invalid_value");
  if (n_prompt >= limit)
    throw invalid_request("This model's maximum context length is " + std::to_string(limit) + " tokens, however the prompt has " +
                              std::to_string(n_prompt) + " tokens (at least one must be left to generate)",
                          ep == Endpoint::Chat ? "messages" : "prompt", "context_length_exceeded");
  int max_tokens = g.max_tokens;
  if (max_tokens == 0) max_tokens = ep == Endpoint::Chat ? limit - n_prompt : std::min(16, limit - n_prompt);
  if (static_cast<int64_t>(n_prompt) + max_tokens > limit)
    throw invalid_request("This model's maximum context length is " + std::to_string(limit) + " tokens, however you requested " +
                              std::to_string(int64_t(n_prompt) + max_tokens) + " tokens (" + std::to_string(n_prompt) +
                              " in the prompt, " + std::to_string(max_tokens) + " for the completion)",
                          "max_tokens", "context_length_exceeded");

  // Admission: a bounded number in flight; the rest are told to come back.
  if (metrics.in_flight.fetch_add(1) >= opt.max_queue) {
    metrics.in_flight.fetch_sub(1);
    throw ApiError(429, "rate_limit_error",
                   "the server is at capacity (" + std::to_string(opt.max_queue) + " requests in flight); retry later", "",
                   "queue_full");
  }
  Request r;
  r.prompt = x->prompt;
  r.sampling = g.sampling;
  r.max_tokens = max_tokens;
  const uint64_t tenant = tenant_salt(req);
  r.cache_salt = g.cache_salt.empty() ? tenant : hash_bytes(g.cache_salt, tenant ^ 0x9e3779b97f4a7c15ULL);
  // Sessions are per tenant: the same id under another key is another session.
  if (!g.session_id.empty()) r.session_id = std::to_string(tenant) + "/" + g.session_id;
  x->gen = std::make_shared<Generation>(*engine, g.stop, g.logprobs, metrics);
  x->gen->attach(r);
  try {
    std::lock_guard lk(live_mu);  // held so shutdown sees the id as soon as the engine does
    x->id = engine->submit(std::move(r));
    live.insert(x->id);
  } catch (...) {
    metrics.in_flight.fetch_sub(1);
    throw;
  }
  metrics.requests_total.fetch_add(1, std::memory_order_relaxed);
  metrics.prompt_tokens.fetch_add(n_prompt, std::memory_order_relaxed);
  x->resp_id = new_response_id(ep);
  x->created = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();

  auto releaser = [x](bool) { x->abandon(); };  // no-op when the response completed
  if (g.stream) {
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider("text/event-stream", guard_step(x, stream_step), releaser);
  } else {
    res.set_chunked_content_provider("application/json", guard_step(x, body_step), releaser);
  }
}

}  // namespace kvscope::server
