#include "server/generation.h"

#include <algorithm>
#include <cmath>

namespace kvscope::server {

using clock_type = std::chrono::steady_clock;

Generation::Generation(Engine& engine, std::vector<std::string> stop, int logprobs, Metrics& metrics)
    : engine_(engine), tk_(engine.model().tokenizer()), metrics_(metrics), logprobs_(logprobs), decoder_(tk_),
      stop_(std::move(stop)) {}

void Generation::attach(Request& r) {
  auto self = shared_from_this();
  r.on_token = [self](const TokenEvent& e) { self->on_token(e); };
  if (logprobs_ >= 0) r.on_logits = [self](const float* l, int n) { self->on_logits(l, n); };
}

void Generation::on_logits(const float* logits, int n_vocab) { logits_.assign(logits, logits + n_vocab); }

void Generation::on_token(const TokenEvent& e) {
  if (e.finished) {
    std::string tail;
    if (!stop_.stopped()) {
      tail = stop_.push(decoder_.flush());
      tail += stop_.flush();
    }
    std::lock_guard lk(mu_);
    finish_reason_ = serving::finish_reason_of(e.stop_reason, stop_.stopped());
    queue_.push_back({std::move(tail), std::move(pending_lp_)});
    finished_ = true;
    cv_.notify_all();
    return;
  }
  if (stop_.stopped()) return;  // tokens sampled before the cancel took effect are not part of the answer
  const auto now = clock_type::now();
  if (n_seen_++ == 0) {
    const double ttft = std::chrono::duration<double>(now - t0_).count();
    metrics_.ttft.observe(ttft);
    if (tenant_) tenant_->ttft.observe(ttft);
  } else {
    metrics_.itl.observe(std::chrono::duration<double>(now - last_token_).count());
  }
  last_token_ = now;
  metrics_.generation_tokens.fetch_add(1, std::memory_order_relaxed);
  if (tenant_) tenant_->generation_tokens.fetch_add(1, std::memory_order_relaxed);

  if (logprobs_ >= 0 && !logits_.empty()) {
    // Log-softmax of the model's distribution at this position (before sampling transforms).
    const int n = static_cast<int>(logits_.size());
    const float mx = *std::max_element(logits_.begin(), logits_.end());
    double sum = 0;
    for (float l : logits_) sum += std::exp(double(l) - mx);
    const float lse = mx + static_cast<float>(std::log(sum));
    TokenLogprob t;
    t.piece = tk_.token_to_piece(e.token);
    t.logprob = logits_[e.token] - lse;
    if (logprobs_ > 0) {
      std::vector<int32_t> idx(n);
      for (int i = 0; i < n; ++i) idx[i] = i;
      const int k = std::min(logprobs_, n);
      std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int32_t a, int32_t b) { return logits_[a] > logits_[b]; });
      for (int i = 0; i < k; ++i) t.top.emplace_back(tk_.token_to_piece(idx[i]), logits_[idx[i]] - lse);
    }
    pending_lp_.push_back(std::move(t));
  }

  std::string text;
  if (render_control_ && !tk_.is_eog(e.token) && tk_.token_to_piece(e.token).empty()) {
    text = stop_.push(decoder_.flush() + tk_.token_to_piece(e.token, true));
  } else {
    text = stop_.push(decoder_.push(e.token));
  }
  {
    std::lock_guard lk(mu_);
    ++n_counted_;
  }
  if (stop_.stopped()) engine_.cancel(e.id);  // its final event follows at the next step
  if (!text.empty()) {
    std::lock_guard lk(mu_);
    queue_.push_back({std::move(text), std::move(pending_lp_)});
    pending_lp_.clear();
    cv_.notify_all();
  }
}

Generation::Status Generation::wait(std::vector<Piece>& out, double timeout_s) {
  std::unique_lock lk(mu_);
  const bool any = cv_.wait_for(lk, std::chrono::duration<double>(timeout_s), [&] { return !queue_.empty(); });
  if (!any) return Status::Timeout;
  while (!queue_.empty()) {
    out.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return finished_ ? Status::Finished : Status::Output;
}

}  // namespace kvscope::server
