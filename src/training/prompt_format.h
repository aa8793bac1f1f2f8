// How tinygsm-style prompts are put to a model, for the signal tools (kv-profile, eval-anomaly,
// train-confidence, eval-confidence):
//   the first reasoner (reasoning format kvscope, no chat template): "Question: ...\nMode: m\n"
//     text in tinygsm's classic phrasing, encoded as plain text after BOS;
//   any model with a chat template: the user turn rendered by the template at a mode's effort on
//     the model's reasoning format (fast/mixed/slow -> its levels: level line, think block), exactly
//     as `kvscope serve` renders a chat request, encoded with special tokens parsed; tinygsm's
//     broad phrasing (the chat reasoner's data).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "reasoning/format.h"
#include "tinygsm/tinygsm.h"

namespace kvscope::training {

class PromptFormat {
 public:
  // kind: the model's reasoning format (detected, or --reasoning-format). Kvscope keeps the first
  // reasoner's bare text; any other needs a chat template (InputError otherwise).
  PromptFormat(const Model& m, reasoning::FormatKind kind);
  explicit PromptFormat(const Model& m) : PromptFormat(m, reasoning::detect_format(m)) {}

  bool chat() const { return !reasoning::format_of(kind_).mode_line(); }
  reasoning::FormatKind kind() const { return kind_; }
  tinygsm::Style question_style() const { return chat() ? tinygsm::Style::Broad : tinygsm::Style::Classic; }
  const Model& model() const { return *model_; }
  // One user turn asked at mode m (kvscope: the mode line; chat: the mode's effort), as text with
  // special tokens spelled out.
  std::string render(const std::string& user, Mode m) const;
  // A whole conversation (chat) at mode m; kvscope: its last user turn.
  std::string render_messages(const std::vector<tok::ChatMessage>& msgs, Mode m) const;
  // The tokens of a prompt text (chat: special tokens parsed and BOS as the template wants;
  // kvscope: plain text after BOS, as the first reasoner is prompted).
  std::vector<int32_t> encode(const std::string& text) const;
  // The spans of a prompt's tokens that hold the users' own text (the contents of its user
  // messages, in order; reasoning::user_token_spans: special tokens parsed on a chat model, as the
  // server encodes a chat request; plain text on the first reasoner).
  std::vector<std::pair<int, int>> user_spans(const std::vector<int32_t>& tokens, const std::vector<std::string>& contents) const;
  // The plan a mode's prompt carries (kvscope: its mode line).
  reasoning::ReasoningPlan plan(Mode m) const;
  // The markers the control set misuses inside a question (training/anomaly_sets.h).
  const std::vector<std::string>& control_markers() const { return markers_; }

 private:
  const Model* model_;
  reasoning::FormatKind kind_;
  std::vector<std::string> markers_;
};

// The answer part of a whole response on the format of `plan` (after the think block; the first
// reasoner's and plain models' text as it is), for tinygsm::parse_answer.
std::string answer_text(const reasoning::ReasoningPlan& plan, const std::string& response);

}  // namespace kvscope::training
