// Reasoning formats: how a model shows its thinking and how an effort level is put to it.
//
//   qwen3        think block, switched by the template's enable_thinking (off: an empty block)
//   deepseek-r1  always thinks; "no thinking" is an empty think block prefilled
//   think        any other model whose vocabulary or template has <think> ... </think>
//   gpt-oss      effort levels in the system message ("Reasoning: low|medium|high"), analysis and
//                final channels
//   levels       effort levels in the system message as gpt-oss does ("Reasoning: low|medium|high"),
//                thinking in a <think> block the prompt opens (the embedded model, ChatML turns)
//   kvscope      the first embedded model's private control line "Mode: fast|mixed|slow" and
//                "Answer:" cue, no chat template (kvscope-reasoner-v1)
//   none         no reasoning format: the model answers as it is prompted
//
// The format is detected from the chat template, the vocabulary and the model's name, and can be
// overridden (--reasoning-format). An effort maps onto a format (plan()): for think formats
// none/minimal = no thinking, low/medium = thinking under a token budget (at the budget the engine
// writes </think> itself and the model answers), high = unbounded; a format with levels of its own
// uses them. The Splitter divides a response's text into reasoning and answer as it streams.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include <vector>

#include "core/mode.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace kvscope {
class Model;
}

namespace kvscope::reasoning {

enum class FormatKind { None, Think, Qwen3, DeepSeekR1, GptOss, Levels, Kvscope };

struct ReasoningPlan;
struct EffortBudgets;

// One reasoning format: how its model shows its thinking and how an effort is put to it. There is
// one implementation per format (format.cpp), registered by name; callers ask the format object
// what it does instead of comparing kinds.
class Format {
 public:
  virtual ~Format() = default;
  virtual FormatKind kind() const = 0;
  virtual std::string_view name() const = 0;  // none|think|qwen3|deepseek-r1|gpt-oss|levels|kvscope

  // The model reasons at all (every format but none).
  virtual bool reasons() const { return true; }
  // Thinking is a <think> block the prompt opens, or leaves empty when there is to be none (think,
  // qwen3, deepseek-r1): effort none skips the thinking, low and medium are budgets, and a model the
  // prompt did not open a block for may open one itself.
  virtual bool think_block() const { return false; }
  // The first embedded model's private control line after a bare question ("Mode: fast|mixed|slow",
  // no chat template): efforts run as its modes through an adaptive run, and its cut is the answer
  // cue "Answer:" followed by a number, as an early answer's is.
  virtual bool mode_line() const { return false; }
  // The level goes in a system turn after the conversation (levels), so without a plan the prompt is
  // the conversation alone: what every level's prompt continues.
  virtual bool level_after_conversation() const { return false; }

  // The effort a request without reasoning options gets (the model's own default).
  virtual Effort default_effort() const { return Effort::High; }
  // The difficulty controller's modes as efforts of the format.
  virtual Effort effort_for_mode(Mode m) const;
  // Fills thinking and budget of a plan whose format, effort and mode are set.
  virtual void shape(ReasoningPlan& p, const EffortBudgets& b) const;
  // budget 0 ("no thinking") on a plan: think formats drop the block, others take their lowest level.
  virtual void no_thinking(ReasoningPlan& p) const;

  // Text after the rendered generation prompt (the think block the plan opens, or an empty one).
  virtual std::string prompt_suffix(const ReasoningPlan&) const { return ""; }
  // What the engine writes when the budget is cut.
  virtual std::string cut_text() const { return ""; }
  // The system-message line with the plan's level ("Reasoning: medium"), "" for formats without.
  virtual std::string system_line(const ReasoningPlan&) const { return ""; }
  // The effort level the format shows ("low", "fast", ...), for reports.
  virtual std::string level_name(const ReasoningPlan& p) const;

  // The splitter's delimiters: the reasoning's opening and closing markers, and a header to skip
  // after the close before the answer (gpt-oss's final channel). close empty: no reasoning.
  struct Delimiters {
    std::string open, close, after_close;
  };
  virtual Delimiters delimiters() const { return {}; }
};

// The format of a kind (one instance each, alive for the program's life).
const Format& format_of(FormatKind f);
std::string_view format_name(FormatKind f);  // format_of(f).name()
// By name ("deepseek" is deepseek-r1); nullopt for an unknown name.
std::optional<FormatKind> parse_format(std::string_view s);
// Every registered name, comma-separated, for errors that list them.
std::string format_names();

// From the chat template's text, the vocabulary (<think> and </think> tokens) and general.name.
FormatKind detect_format(const std::string& chat_template, const tok::Tokenizer& tk, const std::string& model_name);
FormatKind detect_format(const Model& m);

// Thinking-token budgets of the budgeted efforts on think formats.
struct EffortBudgets {
  int low = 256, medium = 1024;
};

// What one request (or one attempt of an auto request) asks of the model.
struct ReasoningPlan {
  FormatKind format = FormatKind::None;
  Effort effort = Effort::None;  // the effort this plan expresses (never Auto)
  bool requested = false;        // an effort, a budget or enable_thinking was given (else: as the model does)
  bool thinking = false;         // think formats: the think block is open; kvscope: always true
  int budget = -1;               // reasoning tokens before the cut; -1: unbounded
  Mode mode = Mode::Slow;        // kvscope: the mode line; gpt-oss: the level (fast=low, mixed=medium, slow=high)

  const Format& fmt() const { return format_of(format); }

  // Text put after the rendered generation prompt: "<think>\n" (open) or an empty think block for
  // think formats; "" for the others (kvscope's mode line goes after the question, gpt-oss's level
  // into the system message).
  std::string prompt_suffix() const;
  // The text the engine writes when the budget is cut: "\n</think>\n\n", kvscope's "Answer:", or
  // gpt-oss's switch to the final channel.
  std::string cut_text() const;
  // The system-message line of gpt-oss and levels ("Reasoning: medium"), "" for other formats.
  std::string system_line() const;
  // The effort level the format shows ("low", "fast", ...), for reports.
  std::string level_name() const;
};

// The options of one request. A given effort is checked against the format: an effort the model
// cannot express (any but none/minimal on a model without a reasoning format), a negative budget
// other than -1, or enable_thinking true on a model that cannot think throw InputError naming the
// format.
struct PlanRequest {
  std::optional<Effort> effort;
  std::optional<bool> enable_thinking;
  std::optional<int> budget;  // thinking_token_budget / reasoning_budget: -1 unbounded, 0 no thinking
};
ReasoningPlan plan(FormatKind f, const PlanRequest& r, const EffortBudgets& b = {});
// The plan of a concrete effort (auto's decision, an upgrade), keeping an explicit budget.
ReasoningPlan plan_for_effort(FormatKind f, Effort e, const EffortBudgets& b = {}, std::optional<int> budget = std::nullopt);

// The difficulty controller's modes as efforts of a format (Format::effort_for_mode): think
// formats fast = none (answer directly), mixed = medium, slow = high; the others use their own
// three levels.
inline Effort effort_for_mode(FormatKind f, Mode m) { return format_of(f).effort_for_mode(m); }
Mode mode_for_effort(FormatKind f, Effort e);

// Divides streamed response text into reasoning and answer. Partial delimiters are held back
// until they are decided, so a stream never shows half a "</think>".
// A conversation as the model's chat template renders it, as the server and `kvscope run --chat`
// put it to the model: the template's turns, plan's level line (gpt-oss, levels) and the think
// block it opens. Without a plan a levels model's prompt is the conversation alone (what every
// level's prompt continues). InputError when the model has no chat template.
std::string render_chat(const Model& model, const std::vector<tok::ChatMessage>& msgs, const ReasoningPlan* plan);
// Tokens of a rendered prompt (special tokens parsed; BOS unless the text spells it out already).
std::vector<int32_t> encode_rendered(const Model& model, const std::string& prompt);

class Splitter {
 public:
  // open: the response starts inside the reasoning (a think block opened by the prompt; kvscope
  // and gpt-oss always). Not open: a think format whose model may write <think> itself.
  Splitter(FormatKind f, bool open);
  struct Delta {
    std::string reasoning, content;
  };
  Delta push(std::string_view text);
  Delta flush();  // at the end: what was held back
  // The next text is reasoning (use before push to count a token as a reasoning token).
  bool in_reasoning() const { return state_ == State::Reasoning || state_ == State::Start; }
  bool answered() const { return state_ == State::Content || state_ == State::AfterClose; }
  bool in_content() const { return state_ == State::Content; }  // the answer's text has begun
  // The next text is the answer itself: the reasoning is closed and nothing more of the format's
  // delimiters is awaited (gpt-oss: the final channel's header was seen). Structured output starts here.
  bool answering() const { return state_ == State::Content || (state_ == State::AfterClose && awaits_.empty()); }
  bool active() const { return active_; }

 private:
  enum class State { Start, Reasoning, AfterClose, Content };
  bool active_;
  State state_;
  bool fresh_ = true;  // nothing of the reasoning seen yet (a leading "<think>" is dropped)
  std::string held_;
  std::string open_, close_;
  std::string awaits_;  // after the close: a header to skip before the answer (gpt-oss's final channel)
  void step(Delta& d, bool final);
};

}  // namespace kvscope::reasoning
