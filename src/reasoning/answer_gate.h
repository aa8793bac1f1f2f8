// Structured output from a reasoning model: the answer's constraint (response_format JSON, a forced
// tool call's arguments) applies only once the reasoning has ended, as vLLM gates its structured
// outputs with a reasoning parser. Until then every token may come; the gate follows the response's
// text through the format's splitter, and from the token that closes the reasoning (or the cut the
// engine writes, given to forced()) it hands mask/accept to the answer's constraint.
#pragma once
#include <memory>
#include <string_view>

#include "reasoning/format.h"
#include "sampling/constraint.h"
#include "tokenizer/tokenizer.h"

namespace kvscope::reasoning {

class AnswerGate final : public TokenConstraint {
 public:
  // split: where the response starts (response_splitter(plan)); a splitter that starts in the answer
  // (no thinking) makes the gate open from the first token. answer null: the request ends where the
  // reasoning does (done()), so the caller can write what the answer must open with (a forced tool
  // call's marker) and go on under that call's schema. The tokenizer must outlive the gate.
  AnswerGate(const tok::Tokenizer& tk, Splitter split, std::shared_ptr<TokenConstraint> answer);
  bool mask(float* logits, int n_vocab) override;
  void accept(int32_t token) override;
  bool done() const override { return open_ && (!answer_ || answer_->done()); }

  // Text the engine wrote between attempts (a budget cut's "</think>", an early answer's cue):
  // it may close the reasoning. Called between the attempts' requests, never while one runs.
  void forced(std::string_view text);
  bool open() const { return open_; }

 private:
  void follow(std::string_view text);
  tok::StreamDecoder dec_;
  Splitter split_;
  std::shared_ptr<TokenConstraint> answer_;
  bool open_ = false;
};

}  // namespace kvscope::reasoning
