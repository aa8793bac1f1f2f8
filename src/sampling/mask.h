// The mask of a byte-level constraint over a vocabulary (TokenPieces), shared by the constraints
// that follow a byte state (JSON, JSON schema, tool calls' arguments).
#pragma once
#include <limits>
#include <string_view>

#include "sampling/constraint.h"

namespace kvscope {

// Pushes to -infinity every token whose bytes `state` refuses. One trial per first byte rules out a
// whole group before any token of it is tried.
template <class State>
inline bool mask_by_state(const State& state, const TokenPieces& tp, float* logits, int n_vocab) {
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

}  // namespace kvscope
