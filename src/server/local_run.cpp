// The server's pipeline in-process (kvscope run): the same typed request, exchange, engine and
// adapters as POST /v1/completions and /v1/chat/completions, with no HTTP front.
#include <chrono>

#include "server/exchange.h"
#include "server/server_impl.h"
#include "util/error.h"

namespace kvscope::server {

void Server::load() {
  Impl& s = *impl_;
  s.begin_start();
  s.state.store(State::Loading, std::memory_order_release);
  s.load_model();
  if (s.state.load() != State::Ready) throw InputError(s.load_error);
}

const Model* Server::model() const { return impl_->state.load(std::memory_order_acquire) >= State::Ready ? impl_->model.get() : nullptr; }

reasoning::FormatKind Server::reasoning_format() const { return impl_->reasoning.kind; }

Server::LocalResult Server::run(GenRequest g, const std::function<void(const serving::Event&)>& on_event) {
  Impl& s = *impl_;
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto ms_since_start = [&] { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); };
  g.stream = false;
  g.n = 1;
  const Endpoint ep = g.endpoint;
  Impl::Started st;
  try {
    s.require_serving();
    st = s.launch_generation(std::move(g), json::object(), 0, ep);
  } catch (const ApiError& e) {
    if (e.code == "context_length_exceeded") throw LimitError(std::string("prompt too long: ") + e.what());
    throw InputError(e.what());
  }
  Exchange& x = *st.x;
  LocalResult res;
  res.adaptive = x.rr != nullptr;
  std::vector<serving::Event> events;
  try {
    for (;;) {
      events.clear();
      const auto status = x.poll(events, 1.0, false);
      for (const auto& ev : events) {
        const bool output = std::holds_alternative<serving::ContentDelta>(ev) || std::holds_alternative<serving::ReasoningDelta>(ev);
        if (output && res.first_output_ms == 0) res.first_output_ms = ms_since_start();
        if (on_event && !res.adaptive) on_event(ev);
      }
      if (status == Generation::Status::Finished) break;
    }
  } catch (...) {
    x.abandon();
    throw;
  }
  res.total_ms = ms_since_start();
  res.body = response_body(x, std::get<serving::Finished>(events.back()));
  res.text = x.text;
  // The final attempt's tokens: its last request's prompt past the attempt's own prompt (a cut's
  // earlier tokens and the forced text), then what that request generated.
  const std::vector<int32_t>& base = x.rr ? x.rr->prompt() : x.prompt;
  std::vector<int32_t> seq = x.attempt_prompt;
  seq.insert(seq.end(), x.completion.tokens.begin(), x.completion.tokens.end());
  if (seq.size() >= base.size() && std::equal(base.begin(), base.end(), seq.begin())) res.tokens.assign(seq.begin() + base.size(), seq.end());
  const auto& tk = s.model->tokenizer();
  while (!res.tokens.empty() && tk.is_eog(res.tokens.back())) res.tokens.pop_back();
  res.prompt_tokens = static_cast<int>(base.size());
  res.stop_reason = x.completion.stop_reason;
  if (x.state == serving::AttemptState::EarlyAnswer) res.stop_reason = StopReason::EarlyAnswer;
  return res;
}

}  // namespace kvscope::server
