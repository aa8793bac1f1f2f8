// One generation request in flight: the engine's step thread feeds it tokens (decoded to valid
// UTF-8, matched against stop strings, with log-probabilities when asked), and the HTTP worker
// that writes the response takes the text out as it becomes final.
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/metrics.h"
#include "server/protocol.h"
#include "server/stop_strings.h"
#include "tokenizer/tokenizer.h"

namespace kvscope::server {

class Generation : public std::enable_shared_from_this<Generation> {
 public:
  Generation(Engine& engine, std::vector<std::string> stop, int logprobs, Metrics& metrics);

  // Wires this generation's callbacks into an engine request (they keep it alive while the engine
  // holds the request).
  void attach(Request& r);
  // The requesting tenant's counters (time to first token, generated tokens) besides the global
  // ones; set before attach().
  void set_tenant(TenantMetrics* t) { tenant_ = t; }
  // Control tokens other than end-of-generation ones are written as their text ([TOOL_CALLS],
  // <|python_tag|>), so a tool-call parser sees the markers a model family opens its calls with.
  void set_render_control(bool on) { render_control_ = on; }

  // Text that became final, with the log-probabilities of the tokens that produced it.
  struct Piece {
    std::string text;
    std::vector<TokenLogprob> logprobs;
  };
  enum class Status { Output, Timeout, Finished };
  // Waits up to timeout_s for output and moves what is pending into `out`. Finished once the last
  // piece has been handed out.
  Status wait(std::vector<Piece>& out, double timeout_s);

  // After Finished.
  FinishReason finish_reason() const { return finish_reason_; }  // Stop, Length or Cancelled
  int completion_tokens() const { return n_counted_; }

 private:
  void on_logits(const float* logits, int n_vocab);
  void on_token(const TokenEvent& e);

  Engine& engine_;
  const tok::Tokenizer& tk_;
  Metrics& metrics_;
  TenantMetrics* tenant_ = nullptr;
  bool render_control_ = false;
  const int logprobs_;
  const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_token_;

  // Step thread only.
  tok::StreamDecoder decoder_;
  StopMatcher stop_;
  std::vector<float> logits_;
  std::vector<TokenLogprob> pending_lp_;
  int n_seen_ = 0;

  // Shared (mu_).
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Piece> queue_;
  bool finished_ = false;  // the final piece is queued
  FinishReason finish_reason_ = FinishReason::Stop;
  int n_counted_ = 0;
};

}  // namespace kvscope::server
