// Per-request adaptive reasoning in the server (`"reasoning": "auto" | "fast" | "mixed" | "slow"`,
// `reasoning_effort: "auto"`): the engine adapter of the adaptive driver (reasoning/adaptive_driver.h).
//
// The request's prompt text is the question; the model's reasoning format appends the mode line
// (or renders the effort's think block). auto: the decision comes from the decision cache (keyed
// by model, question tokens and parameters) or from the estimator on the question's KV (one
// prefill request through the engine; its full blocks stay in the prefix cache, so the answer's
// request computes only the rest). While an attempt generates, the engine's step thread feeds the
// driver every token and, at each check point (Request::on_step, after the K/V of the token is
// computed, before the next is drawn), the estimate from the tap: an action ends the engine request
// at that token and the response writer carries it out (an early answer continues with the cut;
// an upgrade restarts the question at the higher effort, the question's KV reused from the prefix
// cache). An attempt that ends is offered to the driver for the answer-confidence retry. A stream
// that already sent text cannot take it back: an upgrade or retry is then refused (noted in the
// trace) and the attempt goes on.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "reasoning/adaptive_driver.h"
#include "reasoning/difficulty_features.h"
#include "reasoning/format.h"
#include "serving/job.h"

namespace kvscope::server {

struct ReasoningContext;  // the server's estimator, decision cache and counters (server_impl.h)

// Other reasoning formats (think formats, levels): the modes are efforts of the format; a mode's
// prompt comes from `render` (the chat template with that effort's think block), the estimate
// pools `question_tokens` (the prompt before its think block), and the cut is the format's close
// ("</think>") after which the model answers freely.
struct ReasoningFormatHooks {
  reasoning::FormatKind kind = reasoning::FormatKind::Kvscope;
  std::function<std::vector<int32_t>(reasoning::Mode)> render;
  std::vector<int32_t> question_tokens;
};

class ReasoningRun {
 public:
  using Action = reasoning::AdaptiveDriver::Action;
  using Do = reasoning::AdaptiveDriver::Do;

  // Decides the mode; throws ApiError (400) for auto when the server has no estimator.
  // render: the tokens of an attempt's prompt from its text (question + mode line); null encodes the
  // text as is (completions); chat requests render it with the model's chat template.
  using Render = std::function<std::vector<int32_t>(const std::string& text)>;
  using FormatHooks = ReasoningFormatHooks;
  ReasoningRun(ReasoningContext& rc, Engine& engine, serving::ReasoningMode requested, const std::string& question,
               uint64_t cache_salt, const std::string& params_key, Render render = nullptr, FormatHooks hooks = {});
  ReasoningRun(const ReasoningRun&) = delete;
  ReasoningRun& operator=(const ReasoningRun&) = delete;

  // The request's token limit is known: the driver starts the first attempt. stream: text once
  // sent cannot be taken back (upgrades and retries are refused from then on).
  void begin(int max_tokens, bool stream);
  // The prompt of the current attempt (question + mode line, or the effort's think block).
  const std::vector<int32_t>& prompt() const { return prompt_; }
  // Wires the driver into an attempt's engine request (after Generation::attach): tokens, logits,
  // the tap and the check points. continuation: the same attempt goes on (an early answer's cut,
  // a budget's cut, a refused upgrade): the tap keeps what it saw.
  void attach(Request& r, bool continuation = false);
  // The stream wrote text to the client (any thread).
  void shown() { shown_.store(true, std::memory_order_relaxed); }

  // After the attempt's request finished: the action a check point took (Cut, Restart), else
  // Continue. take_pending() clears it.
  Action take_pending();
  // The attempt ended on its own: Restart (the answer-confidence retry) or Done.
  Action on_end() { return drv_->on_end(last_stop_); }
  // The last Restart could not be carried out: noted, the attempt's mode kept.
  void refuse(const std::string& why) { drv_->refuse(why); }
  // The driver's mode's prompt (after a Restart: the next attempt's, to check that it fits).
  std::vector<int32_t> next_prompt() const { return render_mode(drv_->mode()); }
  // A Restart is carried out with that prompt (prompt() from here on): a new attempt begins.
  void restart(std::vector<int32_t> prompt);
  // The attempt could not go on (the cut does not fit the context): its end is that.
  void ended(StopReason why) { last_stop_ = why; }

  reasoning::AdaptiveDriver& driver() { return *drv_; }
  const reasoning::AdaptiveDriver& driver() const { return *drv_; }
  const std::string& cue_text() const { return cue_text_; }
  const std::vector<int32_t>& cue_tokens() const { return cue_; }
  // The tokens an early answer may open with (null: any), for Request::first_token_allowed.
  const std::vector<uint8_t>* answer_start_allowed() const;
  // The tokens that may go on with it (null: any), for Request::continue_allowed.
  const std::vector<uint8_t>* answer_continue_allowed() const;
  bool is_auto() const { return auto_; }
  // The format's plan of the current attempt's mode (its think block and budget).
  reasoning::ReasoningPlan attempt_plan() const;
  reasoning::Mode mode() const { return drv_ ? drv_->mode() : choice_.mode; }

  // The "reasoning" member of the kvscope extension object.
  nlohmann::json report() const;

 private:
  std::vector<int32_t> render_mode(reasoning::Mode m) const;
  bool on_step();  // the step thread, at every token of an attempt

  ReasoningContext& rc_;
  Engine& engine_;
  std::string question_;
  Render render_;
  FormatHooks hooks_;
  bool kv_format_ = true, auto_ = false, stream_ = false;
  std::string source_;  // requested | cache | estimate
  reasoning::ModeChoice choice_;
  std::unique_ptr<reasoning::DifficultyTap> tap_;
  std::unique_ptr<reasoning::AdaptiveDriver> drv_;
  std::vector<int32_t> question_tokens_, prompt_, cue_;
  std::string cue_text_, detect_;
  // Step thread while a request runs; the response writer reads them after it finished.
  std::unique_ptr<tok::StreamDecoder> dec_;
  Action pending_;
  StopReason last_stop_ = StopReason::None;
  std::atomic<bool> shown_{false};
  double estimate_ms_ = 0;
  uint64_t hash_ = 0;
};

}  // namespace kvscope::server
