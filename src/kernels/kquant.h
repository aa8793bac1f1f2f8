// K-quant weight types (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K) and their Q8_K activations: row quantizers
// (written from the GGUF block layouts in dtype.h), dequantizers, and the per-block decomposition
// every dot-product kernel (scalar reference, AVX2, AVX-512) shares.
//
// Every K-quant block is read as 256 unsigned codes u (0..3, 0..7, 0..15, 0..31 or 0..63), 16
// integer scales s_j and 16 integer offsets m_j, one per 16 elements (Q4_K/Q5_K repeat their 32-element
// scale and min), and two float factors D and Dmin, so that element 16j+l is
//   D * s_j * u - Dmin * m_j
// (Q3_K: m_j = 4 s_j, Q6_K: m_j = 32 s_j, both with Dmin = D). Against Q8_K activations (scale dy,
// int8 codes x, bsums b_j = sum of x over each 16 elements) a block's dot product is then
//   dy * (D * isum - Dmin * msum),  isum = sum_j s_j sum_l u x,  msum = sum_j m_j b_j,
// both exact integers; Q3_K/Q6_K use dy * D * (isum - msum). llama.cpp's vec_dot for K-quants sums
// the same integers, so the only differences are float rounding of the per-block products.
#pragma once
#include <cstdint>

#include "kernels/dtype.h"

namespace kvscope::kernels::kquant {

void quantize_row(DType t, const float* x, void* dst, int64_t n);    // Q2_K..Q6_K, Q8_K
void dequantize_row(DType t, const void* src, float* y, int64_t n);  // Q2_K, Q3_K, Q5_K, Q8_K

struct BlockScales {
  int16_t s[16];
  int16_t m[16];
  float D, Dmin;
  bool sym;  // Dmin == D and the block result is dy * D * (isum - msum) (Q3_K, Q6_K)
};
void block_scales(DType t, const uint8_t* blk, BlockScales& out);
void block_codes(DType t, const uint8_t* blk, uint8_t u[256]);  // the unsigned codes, element order

// Q8_K activation row of K elements (K % 256 == 0) held unpacked: q[K], d[K/256], bsums[K/16].
// Rounding: per 256-block the element of largest magnitude maps to -127 (iscale = -127/max), codes
// round to nearest even and are capped at 127, d = 1/iscale, as llama.cpp quantizes K-quant activations.
void quantize_act_q8k(const float* x, int8_t* q, float* d, int16_t* bsums, int64_t K);

// Scalar reference dot of one K-quant weight row with one Q8_K activation row (blocks summed in order).
float dot_ref(DType t, const uint8_t* w, const int8_t* q, const float* d, const int16_t* bsums, int64_t nb);

}  // namespace kvscope::kernels::kquant
