// Private interface between the matmul/ops dispatcher and the per-ISA implementations.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/kernels.h"

namespace kvscope::kernels::detail {

// Activations after conversion to the weight type's activation type (done once per matmul).
// Float kinds (F32, F16, BF16 and the K-quants) are held as F32 rows `f` (F16/BF16 activations
// are rounded to that type and widened back, which is exact). Q8_0 activations are held as int8
// rows `q` with one fp16-rounded scale `d` and the integer sum `s` of the 32 quants per block.
struct Act {
  const float* f = nullptr;
  int64_t ldf = 0;           // floats between rows of f
  const int8_t* q = nullptr;
  int64_t ldq = 0;           // bytes between rows of q
  const float* d = nullptr;  // [M][nb]
  const int32_t* s = nullptr;  // [M][nb]
  const int16_t* bs = nullptr;  // Q8_K: [M][nb*16] sums of each 16 quants (d is then [M][nb] of 256-blocks)
  int64_t nb = 0;            // blocks per row
  const float* sd = nullptr;  // Q8_1: fp16(amax/127 * s) per block [M][nb] (Q4_1/Q5_1's min term)
};

struct MatArgs {
  const uint8_t* w = nullptr;
  size_t wstride = 0;  // bytes between weight rows
  DType wt = DType::F32;
  int64_t K = 0;
  int64_t M = 0;
  Act x;
  float* y = nullptr;
  int64_t ldy = 0;
  const uint8_t* packed = nullptr;  // WeightRef::packed (read by the AVX-512 VNNI path only)
};

// Packed 32-block layout (pack_weight; Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL): groups of 16 weight
// rows (the last one zero-padded), each group one contiguous stream of block pairs: the quants of
// blocks 2p and 2p+1 (packed_quant_bytes each), then their 16 fp16 scales each (64 bytes), then for
// Q4_1/Q5_1 their 16 fp16 mins each (64 bytes), so the scales arrive in the same stream as the
// quants (a separate short scale run per group defeated the hardware prefetcher). Quant vector s
// (64 bytes) of a block holds, for row r of the group, 4 consecutive bytes at 4r: Q8_0 elements
// 4s..4s+3 plus 128 (unsigned, s < 8); the 4-bit types the file's bytes 4s..4s+3 (s < 4), whose
// low nibbles are elements 4s.. and high nibbles 16+4s.. (IQ4_NL: codebook indexes). Q5_0/Q5_1
// add a fifth vector (bytes 256..319): byte 4r+i, bit s = the fifth bit of element 4s+i, bit 4+s
// that of element 16+4s+i (s < 4). Every quant vector and scale pair is 64-byte aligned.
constexpr int kPackRows = 16;
inline bool packed32_type(DType t) {
  return t == DType::Q8_0 || t == DType::Q4_0 || t == DType::Q4_1 || t == DType::Q5_0 || t == DType::Q5_1 || t == DType::IQ4_NL;
}
inline bool packed_has_min(DType t) { return t == DType::Q4_1 || t == DType::Q5_1; }
inline size_t packed_quant_bytes(DType t) {
  if (t == DType::Q8_0) return 512;
  return t == DType::Q5_0 || t == DType::Q5_1 ? 320 : 256;
}
inline size_t packed_pair_bytes(DType t) { return 2 * packed_quant_bytes(t) + (packed_has_min(t) ? 8 : 4) * kPackRows; }
inline size_t packed_group_bytes(DType t, int64_t nb) { return static_cast<size_t>((nb + 1) / 2) * packed_pair_bytes(t); }
inline size_t packed_quant_offset(DType t, int64_t b) {
  return static_cast<size_t>(b / 2) * packed_pair_bytes(t) + static_cast<size_t>(b % 2) * packed_quant_bytes(t);
}
inline size_t packed_scale_offset(DType t, int64_t b) {
  return static_cast<size_t>(b / 2) * packed_pair_bytes(t) + 2 * packed_quant_bytes(t) + static_cast<size_t>(b % 2) * 2 * kPackRows;
}
inline size_t packed_min_offset(DType t, int64_t b) { return packed_scale_offset(t, b) + 4 * kPackRows; }  // Q4_1/Q5_1
// Packed K-quant / IQ4_XS layout (pack_weight, AVX-512 VNNI): groups of 16 weight rows (the last
// zero-padded); a group is one contiguous stream of its 256-element blocks, each kqp_block_bytes
// long and 64-byte aligned. Every code becomes unsigned (Q3_K codes 0..7, Q6_K 0..63, IQ4_XS the
// 4-bit codebook index; the kernel turns signed codes back through a per-slot offset) and is stored
// at its own bit width, split in a low plane (4 bits, or 2 for Q2_K/Q3_K) and a high plane (Q5_K,
// Q3_K: 1 bit; Q6_K: 2 bits). A block is its 8 chunks of 32 elements (32c..32c+31), each chunk its
// low plane then its high plane (kqp_chunk_bytes; one sequential stream: a separate high-plane run
// per block read 2-3x slower from DRAM, as the prefetcher lost track). "Group" g of a chunk = 4
// consecutive elements 32c+4g..32c+4g+3; in a 64-byte vector, byte 4r+i = row r, element i:
//   4-bit low plane, chunk bytes 64s (s < 4): low nibble = group s, high nibble = group 4+s
//   2-bit low plane, chunk bytes 64v (v < 2): bits 2k..2k+1 = group 4v+k
//   1-bit high plane, chunk bytes kqp_hi_offset: bit g = the code's bit above the low plane, group g
//   2-bit high plane, chunk bytes kqp_hi_offset + 64h (h < 2): bits 2k..2k+1 = bits 4-5 of group 4h+k
// After its 8 chunks each block holds the ns slot scales (16 or 8 per block, one per 16 or 32
// elements), slot j at bytes 16j, byte r = row r's scale as int8; for types with a separate min
// (Q2_K, Q4_K, Q5_K) the slot mins in pairs, pair p at bytes 32p, byte 2r+q = row r's min of slot
// 2p+q (u8); then the 16 rows' fp16 D, and Dmin for types with mins. (Scales ahead of the chunks
// read 15% slower from DRAM on Q6_K.) One vpdpbusd advances 16 rows by 4 elements and
// every per-row factor is one vector load. Costs 1-5% more than the file's bytes (Q2_K 19%).
struct KqPackGeom {
  int lo_bits = 0, hi_bits = 0;  // bits per code in the low / high plane
  int ns = 0;                    // scale slots per 256-block (16: 16 elements each; 8: 32)
  bool mins = false;             // separate min per slot, Dmin per block (block = D s u - Dmin m)
  int bias = 0;                  // sym types: value = code - bias (the offset enters as -bias * slot sum of x)
  bool lut = false;              // IQ4_XS: the code indexes kIQ4Values (stored + 128 in the lookup)
};
constexpr KqPackGeom kqp_geom(DType t) {
  switch (t) {
    case DType::Q2_K: return {2, 0, 16, true, 0, false};
    case DType::Q3_K: return {2, 1, 16, false, 4, false};
    case DType::Q4_K: return {4, 0, 8, true, 0, false};
    case DType::Q5_K: return {4, 1, 8, true, 0, false};
    case DType::Q6_K: return {4, 2, 16, false, 32, false};
    case DType::IQ4_XS: return {4, 0, 8, false, 128, true};
    default: return {};
  }
}
constexpr bool kqp_type(DType t) { return kqp_geom(t).ns != 0; }
constexpr size_t kqp_chunk_bytes(const KqPackGeom& g) { return static_cast<size_t>(64 * (g.lo_bits + g.hi_bits)); }
constexpr size_t kqp_hi_offset(const KqPackGeom& g) { return static_cast<size_t>(64 * g.lo_bits); }  // in a chunk
constexpr size_t kqp_code_offset(const KqPackGeom&) { return 0; }
constexpr size_t kqp_scale_offset(const KqPackGeom& g) { return 8 * kqp_chunk_bytes(g); }
constexpr size_t kqp_min_offset(const KqPackGeom& g) { return kqp_scale_offset(g) + static_cast<size_t>(16 * g.ns); }
constexpr size_t kqp_d_offset(const KqPackGeom& g) { return kqp_min_offset(g) + (g.mins ? static_cast<size_t>(16 * g.ns) : 0); }
constexpr size_t kqp_block_bytes(const KqPackGeom& g) { return (kqp_d_offset(g) + (g.mins ? 64 : 32) + 63) & ~size_t{63}; }
bool packed_kernels_available(DType t);  // AVX-512 for the float types, AVX2 for the quantized ones; KVSCOPE_REPACK != 0
// True when packed BF16 matrices use the column-pair layout for vdpbf16ps (AVX512_BF16): group
// g, pair k/2, row r at uint16 offset ((g * Kp/2 + k/2) * 16 + r) * 2 + k % 2, Kp = K rounded up to
// even (the odd tail zero). Otherwise BF16 packs column by column as F16 does.
bool bf16_pair_layout();
namespace avx512 {
void packed_matmul_rows(const MatArgs& a, int64_t n0, int64_t n1);  // a.packed set, a 32-block type (packed_has_min etc.)
// a.packed set, F32/F16/BF16: 16-row groups stored column by column (BF16: see bf16_pair_layout)
void packed_float_matmul_rows(const MatArgs& a, int64_t n0, int64_t n1);
void kq_packed_rows(const MatArgs& a, int64_t n0, int64_t n1);  // a.packed set, kqp_type(a.wt)
}

// Computes y[m*ldy + n] for every m < M and n in [n0, n1). Called concurrently on disjoint ranges.
using RowsFn = void (*)(const MatArgs& a, int64_t n0, int64_t n1);

// Activation converters (identical results on every ISA; the AVX-512 path uses the AVX2 ones).
// quant_q8: per 32-block d = amax/127 (stored fp16-rounded), q = round-half-even(x * 127/amax),
// as GGML's x86 quantize_row_q8_0 does at run time; s = sum of q.
#define KVSCOPE_DECLARE_CONV(ns)                                                        \
  namespace ns {                                                                        \
  void round_f16(const float* x, float* y, int64_t n);                                  \
  void round_bf16(const float* x, float* y, int64_t n);                                 \
  void quant_q8(const float* x, int8_t* q, float* d, int32_t* s, int64_t nb);           \
  }
KVSCOPE_DECLARE_CONV(scalar)
KVSCOPE_DECLARE_CONV(avx2)
#undef KVSCOPE_DECLARE_CONV

// K-quant weights (Q2_K..Q6_K) times Q8_K activations (x.q, x.d, x.bs; see kquant.h). Each works on
// the file's blocks in place: codes and scales are unpacked in registers, never to F32 in memory.
namespace scalar {
void kquant_rows(const MatArgs& a, int64_t n0, int64_t n1);
}
namespace avx2 {
void kquant_rows(const MatArgs& a, int64_t n0, int64_t n1);
// a.packed set: the AVX-512 layouts read as two 8-row halves (CPUs without VNNI); 32-block types
// and kqp_type types respectively
void packed_matmul_rows(const MatArgs& a, int64_t n0, int64_t n1);
void kq_packed_rows(const MatArgs& a, int64_t n0, int64_t n1);
void quant_q8k(const float* x, int8_t* q, float* d, int16_t* bsums, int64_t K);  // = kquant::quantize_act_q8k
}
namespace avx512 {
void kquant_rows(const MatArgs& a, int64_t n0, int64_t n1);
}

namespace scalar {
void matmul_rows(const MatArgs& a, int64_t n0, int64_t n1);
}

// Each SIMD namespace mirrors the public ops.
#define KVSCOPE_DECLARE_ISA(ns)                                                        \
  namespace ns {                                                                       \
  void matmul_rows(const MatArgs& a, int64_t n0, int64_t n1);                          \
  void rmsnorm(const float* x, const float* weight, float* y, int64_t n, float eps);   \
  void softmax_inplace(float* x, int64_t n);                                           \
  void silu_mul(const float* gate, const float* up, float* y, int64_t n);              \
  void gelu_mul(const float* gate, const float* up, float* y, int64_t n);              \
  void softcap(float* x, int64_t n, float cap);                                        \
  void add_inplace(float* y, const float* x, int64_t n);                               \
  float dot_f32(const float* a, const float* b, int64_t n);                            \
  void axpy(float a, const float* x, float* y, int64_t n);                             \
  }
KVSCOPE_DECLARE_ISA(avx2)
KVSCOPE_DECLARE_ISA(avx512)
#undef KVSCOPE_DECLARE_ISA

// Thread-local growable scratch (64-byte aligned), reused across calls.
void* scratch(int slot, size_t bytes);

}  // namespace kvscope::kernels::detail
