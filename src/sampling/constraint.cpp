#include "sampling/constraint.h"

#include "sampling/mask.h"

#include <limits>
#include <string_view>

namespace kvscope {

namespace {

constexpr int kMaxWhitespaceRun = 16;  // JSON's whitespace is free; a sampled model must not pad forever

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
