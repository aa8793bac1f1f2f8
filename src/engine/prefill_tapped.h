// One prompt's features from a tap: the prefill the signal tools (kv-profile, the difficulty data,
// the confidence probe's prompt prior) run on a Context.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/context.h"

namespace kvscope {

// Resets ctx and evaluates tokens alone with tap attached; the tap attached before is restored,
// also when eval throws.
void prefill_tapped(Context& ctx, const std::vector<int32_t>& tokens, KVTap* tap);

}  // namespace kvscope
