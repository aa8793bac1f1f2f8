// Run-time ISA selection and dispatch of the element-wise ops.
#include <atomic>
#include <cpuid.h>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/internal.h"
#include "kernels/kernels.h"
#include "util/env.h"

namespace kvscope::kernels {

// F16C from CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports does not know "f16c".
static bool cpu_has_f16c() {
  unsigned a, b, c, d;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
}

Isa detected_isa() {
  static const Isa isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c())
      return Isa::AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c())
      return Isa::AVX2;
    return Isa::Scalar;
  }();
  return isa;
}

namespace {
Isa cap(Isa isa) { return static_cast<int>(isa) > static_cast<int>(detected_isa()) ? detected_isa() : isa; }

Isa initial_isa() {
  const auto s = util::env_choice("KVSCOPE_ISA", {"scalar", "ref", "none", "avx2", "avx512"});
  if (!s) return detected_isa();
  if (*s == "avx2") return cap(Isa::AVX2);
  if (*s == "avx512") return cap(Isa::AVX512);
  return Isa::Scalar;
}

std::atomic<int>& active_slot() {
  static std::atomic<int> a{static_cast<int>(initial_isa())};
  return a;
}
}  // namespace

Isa active_isa() { return static_cast<Isa>(active_slot().load(std::memory_order_relaxed)); }
void set_active_isa(Isa isa) { active_slot().store(static_cast<int>(cap(isa)), std::memory_order_relaxed); }

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::AVX2: return "avx2";
    case Isa::AVX512: return "avx512";
  }
  return "?";
}

#define KVSCOPE_DISPATCH(call)                     \
  switch (active_isa()) {                          \
    case Isa::AVX512: return detail::avx512::call; \
    case Isa::AVX2: return detail::avx2::call;     \
    default: return ref::call;                     \
  }

void rmsnorm(const float* x, const float* weight, float* y, int64_t n, float eps) {
  KVSCOPE_DISPATCH(rmsnorm(x, weight, y, n, eps))
}
void softmax_inplace(float* x, int64_t n) { KVSCOPE_DISPATCH(softmax_inplace(x, n)) }
void silu_mul(const float* gate, const float* up, float* y, int64_t n) {
  KVSCOPE_DISPATCH(silu_mul(gate, up, y, n))
}
void add_inplace(float* y, const float* x, int64_t n) { KVSCOPE_DISPATCH(add_inplace(y, x, n)) }
float dot_f32(const float* a, const float* b, int64_t n) { KVSCOPE_DISPATCH(dot_f32(a, b, n)) }
void axpy(float a, const float* x, float* y, int64_t n) { KVSCOPE_DISPATCH(axpy(a, x, y, n)) }

#undef KVSCOPE_DISPATCH

}  // namespace kvscope::kernels
