#include "sampling/constraint.h"

#include <limits>
#include <string_view>

namespace kvscope {

namespace {

constexpr int kMaxWhitespaceRun = 16;  // JSON's whitespace is free; a sampled model must not pad forever

// Marks the tokens whose bytes `state` accepts; the rest go to -infinity. One trial per first byte
// rules out whole groups before any token of them is tried.
template <class State>
bool mask_by_state(const State& state, const TokenPieces& tp, float* logits, int n_vocab) {
  std::vector<uint8_t> ok(static_cast<size_t>(n_vocab), 0);
  bool any = false;
  for (int b = 0; b < 256; ++b) {
    const auto& group = tp.by_first_byte[static_cast<size_t>(b)];
    if (group.empty()) continue;
    State after = state;
    if (!after.push(static_cast<unsigned char>(b))) continue;
    for (int32_t id : group) {
      if (id >= n_vocab) continue;
      State trial = after;
      if (trial.push(std::string_view(tp.pieces[static_cast<size_t>(id)]).substr(1))) {
        ok[static_cast<size_t>(id)] = 1;
        any = true;
      }
    }
  }
  for (int id = 0; id < n_vocab; ++id)
    if (!ok[static_cast<size_t>(id)]) logits[id] = -std::numeric_limits<float>::infinity();
  return any;
}

}  // namespace

TokenPieces::TokenPieces(std::vector<std::string> p) : pieces(std::move(p)) {
  for (size_t id = 0; id < pieces.size(); ++id)
    if (!pieces[id].empty()) by_first_byte[static_cast<unsigned char>(pieces[id][0])].push_back(static_cast<int32_t>(id));
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
