#include "sampling/constraint.h"

#include <limits>

namespace kvscope {

namespace {
constexpr int kMaxWhitespaceRun = 16;  // JSON's whitespace is free; a sampled model must not pad forever
}  // namespace

JsonConstraint::JsonConstraint(std::shared_ptr<const std::vector<std::string>> pieces, bool object_only)
    : pieces_(std::move(pieces)), state_(object_only, kMaxWhitespaceRun) {}

bool JsonConstraint::mask(float* logits, int n_vocab) {
  const auto& pieces = *pieces_;
  bool any = false;
  for (int id = 0; id < n_vocab; ++id) {
    const std::string* p = id < static_cast<int>(pieces.size()) ? &pieces[static_cast<size_t>(id)] : nullptr;
    bool ok = p && !p->empty();
    if (ok) {
      JsonPrefix trial = state_;
      ok = trial.push(*p);
    }
    if (ok)
      any = true;
    else
      logits[id] = -std::numeric_limits<float>::infinity();
  }
  return any;
}

void JsonConstraint::accept(int32_t token) {
  if (token < 0 || token >= static_cast<int32_t>(pieces_->size())) return;
  state_.push((*pieces_)[static_cast<size_t>(token)]);
}

}  // namespace kvscope
