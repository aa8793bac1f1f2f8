// Per-request adaptive reasoning in the server (`"reasoning": "auto" | "fast" | "mixed" | "slow"`).
//
// The request's prompt text is the question; the model's reasoning format appends the mode line.
// auto: the decision comes from the decision cache (keyed by model, question tokens and
// parameters) or from the estimator on the question's KV (one prefill request through the engine;
// its full blocks stay in the prefix cache, so the answer's request computes only the rest). While
// the answer is generated the asynchronous analyzer re-estimates d from the tap; the response
// writer polls pending() and switches: an early answer continues from the tokens so far plus the
// answer cue; an upgrade restarts the question in the slower mode (not once a stream has sent
// text, since a stream cannot take text back; the extension says so). When an auto request's
// fast or mixed attempt ends, its answer confidence (mean max token probability of the attempt)
// below the controller's retry_below retries it in the next slower mode (not once a stream has
// sent text, for the same reason).
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "reasoning/async_analyzer.h"
#include "reasoning/controller.h"
#include "reasoning/difficulty_features.h"
#include "reasoning/format.h"
#include "signals/coe_scores.h"

namespace kvscope::server {

struct ReasoningContext;  // the server's estimator, analyzer and decision cache (server_impl.h)

// Other reasoning formats (think formats): the modes are efforts of the format; a mode's prompt
// comes from `render` (the chat template with that effort's think block), the estimate pools
// `question_tokens` (the prompt before its think block), and the cut is the format's close
// ("</think>") after which the model answers freely.
struct ReasoningFormatHooks {
  reasoning::FormatKind kind = reasoning::FormatKind::Kvscope;
  std::function<std::vector<int32_t>(reasoning::Mode)> render;
  std::vector<int32_t> question_tokens;
};

class ReasoningRun {
 public:
  enum class Switch { None, EarlyAnswer, Upgrade };

  // Decides the mode; throws ApiError (400) for auto when the server has no estimator.
  // render: the tokens of an attempt's prompt from its text (question + mode line); null encodes the
  // text as is (completions); chat requests render it with the model's chat template.
  using Render = std::function<std::vector<int32_t>(const std::string& text)>;
  using FormatHooks = ReasoningFormatHooks;
  ReasoningRun(ReasoningContext& rc, Engine& engine, const std::string& requested, const std::string& question,
               uint64_t cache_salt, const std::string& params_key, Render render = nullptr, FormatHooks hooks = {});
  ~ReasoningRun();

  // The prompt of the current attempt (question + mode line).
  const std::vector<int32_t>& prompt() const { return prompt_; }
  // Wires the tap and the token counter into an attempt's engine request (after Generation::attach).
  void attach(Request& r);

  // What the controller asked for since the last switch (None without runtime analysis).
  Switch pending() const;
  // The next attempt's prompt: an early answer continues `generated` with the cue; an upgrade is the
  // question in the new mode. Call once per switch; the analyzer starts counting anew.
  std::vector<int32_t> next(Switch s, const std::vector<int32_t>& generated);
  // A stream that already sent text cannot restart: noted, analysis goes on.
  void upgrade_refused();
  // An attempt has ended after `generated` tokens: true when its answer confidence asks for a retry
  // in the next slower mode and `can_restart` (nothing sent yet); prompt() is then the new attempt's.
  // A retry that cannot be carried out is noted as refused.
  // The new prompt must leave room for a token within `limit`.
  bool retry_after_answer(int generated, bool can_restart, int limit);
  const std::string& cue_text() const { return cue_text_; }
  int answer_max_tokens() const;
  // The tokens an early answer may open with (null: any), for Request::first_token_allowed.
  const std::vector<uint8_t>* answer_start_allowed() const;
  // The tokens that may go on with it (null: any), for Request::continue_allowed.
  const std::vector<uint8_t>* answer_continue_allowed() const;
  bool answering() const { return answering_; }
  bool is_auto() const { return auto_; }
  // The reasoning was closed outside the run (a thinking budget's cut): no more switches.
  void answer_started() { answering_ = true; }
  // The format's plan of the current attempt's mode (its think block and budget).
  reasoning::ReasoningPlan attempt_plan() const;
  // Tokens the attempt may generate in its mode: kvscope's mode cap; think formats: what is left.
  int attempt_cap(int remaining) const;
  reasoning::Mode mode() const { return mode_; }

  // The "reasoning" member of the kvscope extension object.
  nlohmann::json report() const;

 private:
  ReasoningContext& rc_;
  Engine& engine_;
  std::string question_;
  Render render_;
  FormatHooks hooks_;
  bool kv_format_ = true;
  std::string detect_;  // the text that shows the model began its answer itself
  std::vector<int32_t> render_mode(reasoning::Mode m) const;
  bool auto_ = false, answering_ = false;
  std::string source_;  // requested | cache | estimate
  reasoning::Mode mode_ = reasoning::Mode::Slow;
  reasoning::ModeChoice choice_;
  std::unique_ptr<reasoning::DifficultyTap> tap_;
  std::shared_ptr<reasoning::AsyncAnalyzer::Watch> watch_;
  std::vector<int32_t> question_tokens_, prompt_, cue_;
  std::string cue_text_;
  // The attempt's logit statistics, fed on the engine's step thread (shared with its callbacks).
  struct AnswerStats {
    std::mutex mu;
    signals::LogitStats stats;
  };
  std::shared_ptr<AnswerStats> answer_stats_;
  std::unique_ptr<reasoning::Controller> ctl_;  // auto without the analyzer (which owns its own)
  double answer_confidence_ = -1;
  double estimate_ms_ = 0;
  uint64_t hash_ = 0;
  int attempts_ = 1, refused_upgrades_ = 0, refused_retries_ = 0;
};

}  // namespace kvscope::server
