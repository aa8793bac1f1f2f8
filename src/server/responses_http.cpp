// POST /v1/responses over HTTP: the chat completions handler produces the answer (admission,
// reasoning, signals, sessions, cancellation all as for chat), and its output, read through an
// inner sink, is rewritten as a response object or the Responses stream events.
#include <chrono>
#include <cstdio>

#include "server/server_impl.h"

namespace kvscope::server {

namespace {

// The chat handler's output for one Responses request, turned into the Responses format.
struct ResponsesBridge {
  Server::Impl* srv = nullptr;
  uint64_t tenant = 0;
  std::unique_ptr<ResponsesWriter> writer;
  httplib::ContentProvider inner;
  httplib::ContentProviderResourceReleaser inner_release;
  std::string buf;
  bool started = false, inner_done = false, stored = false;

  void store() {
    if (stored || !writer->call().store) return;
    stored = true;
    srv->responses.put(writer->call().id, {tenant, writer->response(), writer->conversation(), writer->call().session});
  }

  // Runs the chat provider once, collecting what it writes.
  bool pull(httplib::DataSink& outer) {
    httplib::DataSink sink;
    sink.write = [this](const char* d, size_t n) {
      buf.append(d, n);
      return true;
    };
    sink.done = [this] { inner_done = true; };
    sink.is_writable = [&outer] { return outer.is_writable ? outer.is_writable() : true; };
    return inner(0, 0, sink);
  }

  bool stream_step(httplib::DataSink& outer) {
    std::string out;
    if (!started) {
      out += writer->start();
      started = true;
    }
    if (!pull(outer)) return false;
    // The chat stream is SSE: "data: {...}" events and ": keep-alive" comments, each ending in a blank line.
    size_t end;
    while ((end = buf.find("\n\n")) != std::string::npos) {
      const std::string ev = buf.substr(0, end);
      buf.erase(0, end + 2);
      if (ev.rfind(":", 0) == 0) {
        out += ev + "\n\n";  // heartbeat: probes the connection as before
      } else if (ev.rfind("data: ", 0) == 0) {
        const std::string data = ev.substr(6);
        if (data == "[DONE]") continue;
        out += writer->on_chunk(json::parse(data));
      }
    }
    if (inner_done) {
      out += writer->finish();
      store();
    }
    if (!out.empty() && !outer.write(out.data(), out.size())) return false;
    if (inner_done) outer.done();
    return true;
  }

  bool body_step(httplib::DataSink& outer) {
    const size_t before = buf.size();
    if (!pull(outer)) return false;
    if (!inner_done) {
      // Only heartbeats (JSON-insignificant spaces) come before the body: pass them on.
      if (buf.size() > before && buf.find_first_not_of(" \n") == std::string::npos) {
        buf.clear();
        return outer.write(" ", 1);
      }
      return true;
    }
    const json chat = json::parse(buf);
    const std::string out = dump(writer->from_chat_body(chat));
    store();
    if (!outer.write(out.data(), out.size())) return false;
    outer.done();
    return true;
  }
};

}  // namespace

void Server::Impl::handle_responses(const httplib::Request& req, httplib::Response& res) {
  require_serving();
  const uint64_t tenant = tenant_salt(req);
  ResponsesCall call = parse_responses_request(parse_json_body(req.body), responses, tenant);
  if (const auto m = call.chat.find("model"); m != call.chat.end() && m->is_string() && *m != model_id)
    throw ApiError(404, "invalid_request_error", "The model '" + m->get<std::string>() + "' does not exist", "model",
                   "model_not_found");
  httplib::Request chat_req = req;
  chat_req.body = dump(call.chat);
  httplib::Response chat_res;
  try {
    handle_generation(chat_req, chat_res, Endpoint::Chat);
  } catch (const ApiError& e) {
    throw responses_error(e);
  }
  auto b = std::make_shared<ResponsesBridge>();
  b->srv = this;
  b->tenant = tenant;
  b->inner = std::move(chat_res.content_provider_);
  // The releaser moves with the provider, so the temporary response does not run it.
  b->inner_release = std::move(chat_res.content_provider_resource_releaser_);
  chat_res.content_provider_resource_releaser_ = nullptr;
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
  auto release = [b](bool ok) {
    if (b->inner_release) b->inner_release(ok);
  };
  if (stream) {
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider("text/event-stream", step, release);
  } else {
    res.set_chunked_content_provider("application/json", step, release);
  }
}

}  // namespace kvscope::server
