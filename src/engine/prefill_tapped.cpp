#include "engine/prefill_tapped.h"

namespace kvscope {

void prefill_tapped(Context& ctx, const std::vector<int32_t>& tokens, KVTap* tap) {
  KVTap* prev = ctx.tap();
  ctx.set_tap(tap);
  ctx.reset();
  try {
    ctx.eval(tokens);
  } catch (...) {
    ctx.set_tap(prev);
    throw;
  }
  ctx.set_tap(prev);
}

}  // namespace kvscope
