// POST /v1/responses over HTTP: the request becomes a chat job, started as chat's are (admission,
// reasoning, signals, sessions, cancellation all as for chat), and the job's events are rendered
// as a response object or the Responses stream events.
#include <chrono>
#include <cstdio>
#include <variant>

#include "server/exchange.h"

namespace kvscope::server {

namespace {

// One Responses request in progress: the chat job's exchange and the writer that renders it.
struct ResponsesBridge {
  Server::Impl* srv = nullptr;
  uint64_t tenant = 0;
  std::unique_ptr<ResponsesWriter> writer;
  std::shared_ptr<Exchange> x;
  bool started = false, stored = false;
  std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();

  void store() {
    if (stored || !writer->call().store) return;
    stored = true;
    srv->responses.put(writer->call().id, {tenant, writer->response(), writer->conversation(), writer->call().session});
  }

  bool stream_step(httplib::DataSink& sink) {
    std::string out;
    if (!started) {
      out += writer->start();
      started = true;
    }
    std::vector<serving::Event> events;
    const auto st = x->poll(events, srv->opt.heartbeat_s, true);
    for (const auto& ev : events) out += writer->on_event(ev, x->ext);
    if (st == Generation::Status::Finished) {
      out += writer->finish();
      store();
    } else if (st == Generation::Status::Timeout && out.empty()) {
      out = ": keep-alive\n\n";  // probes the connection
    }
    if (!out.empty() && !sink.write(out.data(), out.size())) return false;
    if (st == Generation::Status::Finished) sink.done();
    return true;
  }

  bool body_step(httplib::DataSink& sink) {
    const double hb = srv->opt.heartbeat_s;
    std::vector<serving::Event> events;
    if (x->poll(events, hb, false) != Generation::Status::Finished) {
      // Only heartbeats (JSON-insignificant spaces) come before the body.
      const auto now = std::chrono::steady_clock::now();
      if (now - last_write < std::chrono::duration<double>(hb)) return true;
      last_write = now;
      return sink.write(" ", 1);
    }
    const auto& f = std::get<serving::Finished>(events.back());
    const std::string out = dump(writer->from_result(x->reasoning_text, x->split || x->tool_parser ? x->content_text : x->text,
                                                     f.reason, f.usage, x->ext, x->tool_parser ? &x->tool_parser->calls() : nullptr));
    store();
    if (!sink.write(out.data(), out.size())) return false;
    sink.done();
    return true;
  }
};

}  // namespace

void Server::Impl::handle_responses(const httplib::Request& req, httplib::Response& res) {
  require_serving();
  const uint64_t tenant = tenant_salt(req);
  parse_json_body(req.body);  // the checks every body gets (depth, size), before the ordered read
  ResponsesCall call = parse_responses_request(nlohmann::ordered_json::parse(req.body), responses, tenant);
  if (const auto m = call.chat.find("model"); m != call.chat.end() && m->is_string() && *m != model_id)
    throw ApiError(404, "invalid_request_error", "The model '" + m->get<std::string>() + "' does not exist", "model",
                   "model_not_found");
  Origin chat = origin_of(req);
  chat.body = call.chat.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  Started started;
  try {
    started = start_generation(chat, Endpoint::Chat);
  } catch (const ApiError& e) {
    throw responses_error(e);
  }
  auto b = std::make_shared<ResponsesBridge>();
  b->srv = this;
  b->tenant = tenant;
  b->x = started.x;
  const bool stream = call.stream;
  const int64_t created =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  b->writer = std::make_unique<ResponsesWriter>(std::move(call), model_id, created);
  auto step = [b, stream](size_t, httplib::DataSink& sink) {
    try {
      return stream ? b->stream_step(sink) : b->body_step(sink);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kvscope serve: response aborted: %s\n", e.what());
      return false;
    }
  };
  auto release = [x = started.x](bool) { x->abandon(); };  // no-op when the response completed
  if (stream) {
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider("text/event-stream", step, release);
  } else {
    res.set_chunked_content_provider("application/json", step, release);
  }
}

}  // namespace kvscope::server
