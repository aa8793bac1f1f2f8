// The "legacy" block types Q4_1, Q5_0, Q5_1 and the non-linear IQ4_NL / IQ4_XS: quantizers,
// dequantizers, their activation converters (Q8_1, Q8_K) and the matmul rows of every ISA.
// Private to src/kernels.
//
// Activation pairing (as GGML's vec_dot_type, so results round as llama.cpp's do):
//   Q4_1, Q5_1 -> Q8_1 (Q8_0 quants plus s = fp16(d * sum q) per block, for the weight's min term)
//   Q5_0, IQ4_NL -> Q8_0
//   IQ4_XS -> Q8_K (float scale per 256 elements, sums of each 16 quants)
// Reference semantics (ref/scalar rows): per 32-element (sub-)block an exact integer dot of the
// weight's integer codes with the activation quants, then in float:
//   Q4_1/Q5_1: sum += (d_w * d_x) * dot(q, x_q) + m_w * s_x
//   Q5_0:      sum += (d_w * d_x) * dot(q - 16, x_q)
//   IQ4_NL:    sum += (d_w * d_x) * dot(kIQ4Values[q], x_q)
//   IQ4_XS:    sum += (d_w * d_x) * sum_j (scale_j - 32) * dot(kIQ4Values[q_j], x_q_j)   per 256
#pragma once
#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/internal.h"

namespace kvscope::kernels::legacy {

// Sub-block j's signed scale (l - 32) of an IQ4_XS block.
inline int iq4xs_scale(const uint8_t* blk, int j) {
  const int sh = blk[2] | (blk[3] << 8);
  const int ls = ((blk[4 + j / 2] >> (4 * (j % 2))) & 0xF) | (((sh >> (2 * j)) & 3) << 4);
  return ls - 32;
}

// True for the weight types this file implements.
bool handles(DType t);

// Row (de)quantizers for this file's types (and Q8_1/Q8_K, the activation formats); false for
// other types. n is a multiple of the block size (checked by the caller).
bool quantize_row(DType t, const float* x, void* dst, int64_t n);
bool dequantize_row(DType t, const void* src, float* y, int64_t n);

// Q8_1 activations: q, d (fp16-rounded), s (integer sum of q) exactly as quant_q8 (Q8_0) gives
// them, plus sd = fp16(amax/127 * s) per block. Same results on every ISA.
void quant_q8_1(const float* x, int8_t* q, float* d, int32_t* s, float* sd, int64_t nb, bool simd);
// Q8_K activations for nb 256-blocks: d = max/-127 with max the element of largest magnitude,
// q = min(127, round_half_even(x / d)); bsums[16 per block] = sums of each 16 quants.
void quant_q8_k(const float* x, int8_t* q, float* d, int16_t* bsums, int64_t nb);

namespace scalar {
void matmul_rows(const detail::MatArgs& a, int64_t n0, int64_t n1);
}
namespace avx2 {
void matmul_rows(const detail::MatArgs& a, int64_t n0, int64_t n1);
}
namespace avx512 {
void matmul_rows(const detail::MatArgs& a, int64_t n0, int64_t n1);  // VNNI; falls back to avx2 without it
}

}  // namespace kvscope::kernels::legacy
