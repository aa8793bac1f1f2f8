#include "sampling/constraint.h"

#include <limits>
#include <string_view>

namespace kvscope {

namespace {

constexpr int kMaxWhitespaceRun = 16;  // JSON's whitespace is free; a sampled model must not pad forever

// Pushes to -infinity every token whose bytes `state` refuses. One trial per first byte rules out a
// whole group before any token of it is tried.
template <class State>
bool mask_by_state(const State& state, const TokenPieces& tp, float* logits, int n_vocab) {
  constexpr float kOut = -std::numeric_limits<float>::infinity();
  for (int32_t id : tp.without_bytes)
    if (id < n_vocab) logits[id] = kOut;
  for (int id = static_cast<int>(tp.pieces.size()); id < n_vocab; ++id) logits[id] = kOut;
  bool any = false;
  for (int b = 0; b < 256; ++b) {
    const auto& group = tp.by_first_byte[static_cast<size_t>(b)];
    State after = state;
    const bool opens = !group.empty() && after.push(static_cast<unsigned char>(b));
    for (int32_t id : group) {
      if (id >= n_vocab) continue;
      if (opens) {
        State trial = after;
        if (trial.push(std::string_view(tp.pieces[static_cast<size_t>(id)]).substr(1))) {
          any = true;
          continue;
        }
      }
      logits[id] = kOut;
    }
  }
  return any;
}

}  // namespace

TokenPieces::TokenPieces(std::vector<std::string> p) : pieces(std::move(p)) {
  for (size_t id = 0; id < pieces.size(); ++id)
    (pieces[id].empty() ? without_bytes : by_first_byte[static_cast<unsigned char>(pieces[id][0])])
        .push_back(static_cast<int32_t>(id));
}

JsonConstraint::JsonConstraint(std::shared_ptr<const TokenPieces> pieces, bool object_only)
    : pieces_(std::move(pieces)), state_(object_only, kMaxWhitespaceRun) {}

bool JsonConstraint::mask(float* logits, int n_vocab) { return mask_by_state(state_, *pieces_, logits, n_vocab); }

void JsonConstraint::accept(int32_t token) {
  if (token < 0 || token >= static_cast<int32_t>(pieces_->pieces.size())) return;
  state_.push(pieces_->pieces[static_cast<size_t>(token)]);
}

SchemaConstraint::SchemaConstraint(std::shared_ptr<const TokenPieces> pieces, std::shared_ptr<const JsonSchema> schema)
    : pieces_(std::move(pieces)), schema_(std::move(schema)), state_(*schema_) {}

bool SchemaConstraint::mask(float* logits, int n_vocab) { return mask_by_state(state_, *pieces_, logits, n_vocab); }

void SchemaConstraint::accept(int32_t token) {
  if (token < 0 || token >= static_cast<int32_t>(pieces_->pieces.size())) return;
  state_.push(pieces_->pieces[static_cast<size_t>(token)]);
}

}  // namespace kvscope
