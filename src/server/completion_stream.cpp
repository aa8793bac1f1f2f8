// The response writers of completions and chat: an exchange's output as SSE chunks or one JSON
// body, heartbeats while nothing is written, and the choices of a request for several merged.
#include <algorithm>
#include <cstdio>
#include <utility>
#include <variant>

#include "server/exchange.h"

namespace kvscope::server {

namespace {

bool write_all(httplib::DataSink& sink, const std::string& s) { return sink.write(s.data(), s.size()); }

std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }

// Waits up to timeout_s for a stream's output and appends its SSE events to `out`: a chunk per
// event; on the end, its finish chunk and (standalone: a lone choice) the usage chunk and [DONE].
// Finished once ended.
Generation::Status stream_collect(Exchange& x, std::string& out, double timeout_s, bool standalone) {
  const Endpoint ep = x.g.endpoint;
  const std::string& model = x.srv->model_id;
  auto chunk = [&](const std::string& text, std::optional<FinishReason> fr, const json& lp, bool first, const json& ext,
                   const std::string& reasoning = "") {
    out += sse(x.indexed(chunk_body(ep, x.resp_id, x.created, model, text, fr, lp, first, x.g.include_usage, ext, reasoning)));
  };
  if (ep == Endpoint::Chat && !x.sent_role) {
    chunk("", std::nullopt, nullptr, true, nullptr);
    x.sent_role = true;
  }
  std::vector<serving::Event> events;
  const auto st = x.poll(events, timeout_s, true);
  json conf = nullptr;  // the probe's early warning rides on the next chunk
  for (const auto& ev : events) {
    if (const auto* c = std::get_if<serving::ConfidenceUpdate>(&ev)) {
      conf = {{"confidence", {{"p_correct", c->p_correct}, {"tokens", c->tokens}}}};
    } else if (const auto* r = std::get_if<serving::ReasoningDelta>(&ev)) {
      json lp = nullptr;
      if (r->logprobs)  // the reasoning's tokens apart: logprobs.content is the answer's only
        lp = {{"content", nullptr}, {"refusal", nullptr}, {"kvscope_reasoning", logprobs_json(ep, *r->logprobs, 0)["content"]}};
      chunk("", std::nullopt, lp, false, std::exchange(conf, nullptr), r->text);
    } else if (const auto* d = std::get_if<serving::ContentDelta>(&ev)) {
      const json lp = d->logprobs ? logprobs_json(ep, *d->logprobs, d->text_offset) : json(nullptr);
      chunk(d->text, std::nullopt, lp, false, std::exchange(conf, nullptr));
    } else if (const auto* t = std::get_if<serving::ToolCallDelta>(&ev)) {
      // OpenAI's delta.tool_calls: the id, type and name with a call's first piece, then arguments.
      json call = {{"index", t->index}};
      if (!t->id.empty()) call["id"] = t->id, call["type"] = "function";
      json fn = json::object();
      if (!t->name.empty()) fn["name"] = t->name;
      fn["arguments"] = t->arguments;
      call["function"] = std::move(fn);
      json j = x.indexed(chunk_body(ep, x.resp_id, x.created, model, "", std::nullopt, nullptr, false, x.g.include_usage,
                                    std::exchange(conf, nullptr)));
      j["choices"][0]["delta"] = {{"tool_calls", json::array({std::move(call)})}};
      out += sse(j);
    } else if (const auto* f = std::get_if<serving::Finished>(&ev)) {
      chunk("", f->reason, nullptr, false, x.ext);
      if (standalone) {
        if (x.g.include_usage) out += sse(usage_chunk(ep, x.resp_id, x.created, model, f->usage, x.ext));
        out += "data: [DONE]\n\n";
      }
    }
  }
  return st;
}

// One call of httplib's chunked content provider for a stream: waits for output, writes it.
bool stream_step(Exchange& x, httplib::DataSink& sink) {
  std::string out;
  const auto st = stream_collect(x, out, x.srv->opt.heartbeat_s, true);
  if (st == Generation::Status::Timeout && out.empty()) out = ": keep-alive\n\n";  // probes the connection
  if (!out.empty() && !write_all(sink, out)) return false;
  if (st == Generation::Status::Finished) sink.done();
  return true;
}

// The non-stream variant: gathers the answer for up to timeout_s; its response body once it ended
// (from the exchange's gathered text: an upgrade or retry discards what an attempt wrote).
std::optional<json> body_collect(Exchange& x, double timeout_s) {
  std::vector<serving::Event> events;
  if (x.poll(events, timeout_s, false) != Generation::Status::Finished) return std::nullopt;
  return response_body(x, std::get<serving::Finished>(events.back()));
}

}  // namespace

json response_body(const Exchange& x, const serving::Finished& f) {
  const Endpoint ep = x.g.endpoint;
  json lp = x.g.logprobs >= 0 ? logprobs_json(ep, x.logprobs, 0) : json(nullptr);
  if (x.lp_split) lp["kvscope_reasoning"] = logprobs_json(ep, x.reasoning_logprobs, 0)["content"];
  // vLLM's convention: reasoning_content is null when the model did not reason.
  const json rc = x.reasoning_text.empty() ? json(nullptr) : json(x.reasoning_text);
  json body = completion_body(ep, x.resp_id, x.created, x.srv->model_id, x.split || x.tool_parser ? x.content_text : x.text,
                              f.reason, lp, f.usage, x.ext, x.split ? &rc : nullptr);
  if (x.tool_parser && !x.tool_parser->calls().empty()) {
    json calls = json::array();
    for (const auto& c : x.tool_parser->calls())
      calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    json& msg = body["choices"][0]["message"];
    msg["tool_calls"] = std::move(calls);
    if (x.content_text.empty()) msg["content"] = nullptr;  // as OpenAI writes a message that only calls
  }
  return body;
}

namespace {

// Output keeps coming without anything written: probe the connection now and then (leading
// whitespace is valid JSON).
bool heartbeat(std::chrono::steady_clock::time_point& last_write, double every_s, httplib::DataSink& sink) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_write < std::chrono::duration<double>(every_s)) return true;
  last_write = now;
  return write_all(sink, " ");
}

// Writes heartbeats meanwhile, then the body.
bool body_step(Exchange& x, httplib::DataSink& sink) {
  const auto j = body_collect(x, x.srv->opt.heartbeat_s);
  if (!j) return heartbeat(x.last_write, x.srv->opt.heartbeat_s, sink);
  if (!write_all(sink, dump(*j))) return false;
  sink.done();
  return true;
}


// Each prompt's first choice first (until its output shows its prompt is computed), then its others.
bool choices_body_step(Choices& c, httplib::DataSink& sink) {
  const double hb = c.srv().opt.heartbeat_s;
  bool first = true;
  for (size_t i = 0; i < c.xs.size(); ++i) {
    if (c.ended[i] || !c.xs[i]->launched) continue;
    // Only the first waiting choice blocks; they all advance together in the engine's batch.
    c.bodies[i] = body_collect(*c.xs[i], first ? std::min(hb, 0.05) : 0.0);
    first = false;
    if (c.bodies[i]) c.ended[i] = true;
    c.follow(i, !c.xs[i]->text.empty() || !c.xs[i]->logprobs.empty());
  }
  if (!c.all_ended()) return heartbeat(c.last_write, hb, sink);
  if (!write_all(sink, dump(c.merged()))) return false;
  sink.done();
  return true;
}

bool choices_stream_step(Choices& c, httplib::DataSink& sink) {
  const double hb = c.srv().opt.heartbeat_s;
  std::string out;
  bool first = true;
  for (size_t i = 0; i < c.xs.size(); ++i) {
    if (c.ended[i] || !c.xs[i]->launched) continue;
    const auto st = stream_collect(*c.xs[i], out, first ? std::min(hb, 0.05) : 0.0, false);
    first = false;
    if (st == Generation::Status::Finished) c.ended[i] = true;
    c.follow(i, !c.xs[i]->text.empty());
  }
  const bool done = c.all_ended();
  if (done) {
    Exchange& x0 = *c.xs[0];
    if (x0.g.include_usage)
      out += sse(usage_chunk(x0.g.endpoint, x0.resp_id, x0.created, c.srv().model_id, c.usage(), nullptr));
    out += "data: [DONE]\n\n";
  }
  const auto now = std::chrono::steady_clock::now();
  if (out.empty() && now - c.last_write >= std::chrono::duration<double>(hb)) out = ": keep-alive\n\n";
  if (!out.empty()) {
    c.last_write = now;
    if (!write_all(sink, out)) return false;
  }
  if (done) sink.done();
  return true;
}

// Headers are out once a provider runs, so a failure there can only end the response (the
// releaser then cancels the request); it must not escape into httplib's worker.
template <class T>
httplib::ContentProviderWithoutLength guard_step(std::shared_ptr<T> x, bool (*step)(T&, httplib::DataSink&)) {
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

void respond(httplib::Response& res, std::shared_ptr<Exchange> x, std::shared_ptr<Choices> choices, bool stream) {
  const char* type = stream ? "text/event-stream" : "application/json";
  if (choices) {
    auto releaser = [choices](bool) { choices->abandon(); };  // no-op for the choices that completed
    res.set_chunked_content_provider(type, guard_step(choices, stream ? choices_stream_step : choices_body_step), releaser);
  } else {
    auto releaser = [x](bool) { x->abandon(); };  // no-op when the response completed
    res.set_chunked_content_provider(type, guard_step(x, stream ? stream_step : body_step), releaser);
  }
}

}  // namespace kvscope::server
