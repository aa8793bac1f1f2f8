#include "reasoning/answer_gate.h"

namespace kvscope::reasoning {

AnswerGate::AnswerGate(const tok::Tokenizer& tk, Splitter split, std::shared_ptr<TokenConstraint> answer)
    : dec_(tk), split_(std::move(split)), answer_(std::move(answer)) {
  open_ = split_.answering();
}

bool AnswerGate::mask(float* logits, int n_vocab) { return open_ && answer_ ? answer_->mask(logits, n_vocab) : true; }

void AnswerGate::accept(int32_t token) {
  if (open_) {
    if (answer_) answer_->accept(token);
    return;
  }
  follow(dec_.push(token));
}

void AnswerGate::forced(std::string_view text) {
  if (!open_) follow(text);
}

void AnswerGate::follow(std::string_view text) {
  // The answer's first token is the one after the close: whatever of it the closing token carried
  // is the delimiter's trailing whitespace, which JSON allows anyway.
  split_.push(text);
  if (split_.answering()) open_ = true;
}

}  // namespace kvscope::reasoning
