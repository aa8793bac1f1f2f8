// Compute kernels: matrix products over quantized weights and the element-wise ops of a
// transformer layer. Each op has a scalar reference (namespace ref) and SIMD variants chosen at
// run time from the CPU's features; tests compare every variant against the reference.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/threadpool.h"

namespace kvscope::kernels {

enum class Isa { Scalar = 0, AVX2 = 1, AVX512 = 2 };
Isa detected_isa();            // best the CPU supports
Isa active_isa();              // what dispatch uses (KVSCOPE_ISA=scalar|avx2|avx512 env overrides, capped at detected)
void set_active_isa(Isa isa);  // for tests; capped at detected_isa()
const char* isa_name(Isa isa);

// A weight matrix as stored in GGUF: `rows` rows of `cols` elements, each row contiguous in `type`.
struct WeightRef {
  const void* data = nullptr;
  DType type = DType::F32;
  int64_t rows = 0;  // output features (N)
  int64_t cols = 0;  // input features (K)
  // The same matrix re-laid out for this CPU's fastest kernel by pack_weight(), or null. `data`
  // stays valid and is what every other ISA level (and the scalar reference) reads.
  const void* packed = nullptr;
};

// Owns the bytes that pack_weight() lays out (64-byte aligned), for as long as the weights are used.
class PackedStore {
 public:
  uint8_t* alloc(size_t bytes, bool zero = true);  // zero = false: the caller writes every byte
  size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::vector<std::unique_ptr<uint8_t, Free>> bufs_;  // arenas; the last one is being filled
  size_t arena_size_ = 0, arena_used_ = 0;
  size_t bytes_ = 0;
};

// Re-lays out a matrix for this CPU's fastest kernels: F32/F16/BF16 (AVX-512) in groups of 16 rows
// stored column by column (one load is element k of 16 rows; a group is one sequential stream);
// the quantized types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, the K-quants, IQ4_XS; AVX-512 VNNI
// or AVX2) in 16-row groups interleaved so that one vpdpbusd advances all 16 output rows by 4
// elements and the 16 rows' block scales are one vector (no horizontal sums, no scalar scale
// loads); the AVX2 kernels read the same layout 8 rows at a time. Sets w.packed
// and returns true; returns false and leaves w alone for other types, on other CPUs, or when the
// environment sets KVSCOPE_REPACK=0. Same results as the unpacked kernels up to summation order.
// With a pool, the matrix's row groups are laid out by its workers in parallel (model load).
bool pack_weight(WeightRef& w, PackedStore& store, ThreadPool* pool = nullptr);

// The activation type a weight type is multiplied with (as GGML's vec_dot_type): F32->F32,
// F16->F16, BF16->BF16, Q8_0/Q4_0->Q8_0, Q4_K/Q6_K->Q8_K-like (implementation's choice).
// Activations are converted to it once per matmul, so results match llama.cpp's rounding.
DType activation_type(DType weight_type);

// y[m*N + n] = dot(W row n, x row m), for m in [0,M). x is F32 row-major [M x K], y is F32 [M x N].
// M == 1 is the decode path (matrix-vector, memory bound); M > 1 is the prefill path (blocked GEMM
// that reuses each loaded weight tile across many activation rows). Parallel over the pool.
void matmul(const WeightRef& w, const float* x, int64_t M, float* y, ThreadPool& pool);

// Several matrices applied to the same activations (Q/K/V, gate/up): for decode (M == 1) they run
// in one pass of the pool with one activation conversion; otherwise one matmul each. At most 8.
void matmul_multi(const WeightRef* ws, float* const* ys, int n_mats, const float* x, int64_t M, ThreadPool& pool);

// Element-wise / row ops (F32). All are SIMD-dispatched with scalar references.
void rmsnorm(const float* x, const float* weight, float* y, int64_t n, float eps);
void softmax_inplace(float* x, int64_t n);
void silu_mul(const float* gate, const float* up, float* y, int64_t n);  // y = silu(gate) * up
// y = gelu(gate) * up with GELU's tanh approximation (Gemma's GeGLU). As GGML's CPU backend does,
// gate is rounded to fp16 before GELU and GELU's result to fp16 after it (|gate| < 10), so the
// activations match llama.cpp's to the bit; the rounding is far below the model's own noise.
void gelu_mul(const float* gate, const float* up, float* y, int64_t n);
void softcap(float* x, int64_t n, float cap);  // x = cap * tanh(x / cap) (Gemma 2's logit soft-capping)
void add_inplace(float* y, const float* x, int64_t n);
float dot_f32(const float* a, const float* b, int64_t n);
void axpy(float a, const float* x, float* y, int64_t n);  // y += a * x

namespace ref {
void matmul(const WeightRef& w, const float* x, int64_t M, float* y);  // single-threaded scalar
void rmsnorm(const float* x, const float* weight, float* y, int64_t n, float eps);
void softmax_inplace(float* x, int64_t n);
void silu_mul(const float* gate, const float* up, float* y, int64_t n);
void gelu_mul(const float* gate, const float* up, float* y, int64_t n);
void softcap(float* x, int64_t n, float cap);
void add_inplace(float* y, const float* x, int64_t n);
float dot_f32(const float* a, const float* b, int64_t n);
void axpy(float a, const float* x, float* y, int64_t n);
}  // namespace ref

}  // namespace kvscope::kernels
