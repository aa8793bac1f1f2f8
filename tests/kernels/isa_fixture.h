// Shared by the kernel tests: the ISA levels this CPU can run (every SIMD path is compared with the
// scalar reference on each), and a guard that restores the active level when a test switches it.
#pragma once
#include <vector>

#include "kernels/kernels.h"

namespace kvscope::kernels {

inline std::vector<Isa> isas() {
  std::vector<Isa> v = {Isa::Scalar};
  if (static_cast<int>(detected_isa()) >= static_cast<int>(Isa::AVX2)) v.push_back(Isa::AVX2);
  if (detected_isa() == Isa::AVX512) v.push_back(Isa::AVX512);
  return v;
}

struct IsaGuard {
  Isa saved = active_isa();
  ~IsaGuard() { set_active_isa(saved); }
};

}  // namespace kvscope::kernels
