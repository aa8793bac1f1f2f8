// Element types of weight tensors, numbered as GGML numbers them (so GGUF type ids map 1:1).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace kvscope::kernels {

enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,     // activations only (Q4_1/Q5_1 dot products), never a weight type
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,    // activations only (K-quant and IQ4_XS dot products), never a weight type
  IQ4_NL = 20,
  IQ4_XS = 23,
  BF16 = 30,
};

// Throws FormatError("type IQ1_S is not supported" / "unknown type id 77") for ids we do not run
// (activation-only types included).
DType dtype_from_ggml(uint32_t id);
const char* dtype_name(DType t);
// "f32","f16","bf16","q8_0","q4_0","q4_1","q5_0","q5_1","q2_k".."q6_k","iq4_nl","iq4_xs" (throws InputError)
DType dtype_from_name(const std::string& name);
bool is_kquant(DType t);            // Q2_K..Q6_K (256-element super-blocks, multiplied with Q8_K activations)
int64_t block_size(DType t);        // elements per block (1 for float types)
size_t block_bytes(DType t);        // bytes per block
size_t row_bytes(DType t, int64_t n);  // n must be a multiple of block_size (throws otherwise)

// Block layouts, identical to GGML's so GGUF bytes are used in place.
struct BlockQ8_0 {  // 34 bytes
  uint16_t d;       // fp16 scale
  int8_t qs[32];
};
struct BlockQ4_0 {  // 18 bytes
  uint16_t d;       // fp16 scale
  uint8_t qs[16];   // low nibbles: elements 0..15, high nibbles: 16..31; value = (q - 8) * d
};
struct BlockQ4_K {  // 144 bytes, 256 elements
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
struct BlockQ6_K {  // 210 bytes, 256 elements
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};
struct BlockQ4_1 {  // 20 bytes; value = q * d + m, nibbles as Q4_0
  uint16_t d;
  uint16_t m;
  uint8_t qs[16];
};
struct BlockQ5_0 {  // 22 bytes; value = (q - 16) * d, q = nibble | (bit j of qh) << 4
  uint16_t d;
  uint8_t qh[4];    // bit j (little-endian u32) is the 5th bit of element j
  uint8_t qs[16];   // low nibbles: elements 0..15, high nibbles: 16..31
};
struct BlockQ5_1 {  // 24 bytes; value = q * d + m
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ8_1 {  // 36 bytes (activations): s = d * sum(qs), both fp16
  uint16_t d;
  uint16_t s;
  int8_t qs[32];
};
struct BlockIQ4_NL {  // 18 bytes; value = kIQ4Values[nibble] * d, nibbles as Q4_0
  uint16_t d;
  uint8_t qs[16];
};
struct BlockIQ4_XS {  // 136 bytes, 256 elements in 8 sub-blocks of 32
  uint16_t d;
  uint16_t scales_h;    // 2 high bits of sub-block j's scale at bits 2j..2j+1
  uint8_t scales_l[4];  // 4 low bits of sub-block j's scale: byte j/2, nibble j%2
  uint8_t qs[128];      // sub-block j: bytes 16j..16j+15, low nibbles first 16, high nibbles last 16
};                      // value = d * (scale_j - 32) * kIQ4Values[nibble]
// IQ4_NL / IQ4_XS's 16-entry non-linear codebook (from the format description).
inline constexpr int8_t kIQ4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockIQ4_XS) == 136);
// K-quants: 256-element super-blocks of 16 (Q2_K, Q3_K, Q6_K) or 8 (Q4_K, Q5_K) sub-blocks, each with
// its own quantized scale (and min) relative to the fp16 super-block scale(s). Layouts as in GGUF.
struct BlockQ2_K {   // 84 bytes: value = d * (scales[j] & 15) * q - dmin * (scales[j] >> 4), q in 0..3
  uint8_t scales[16];
  uint8_t qs[64];    // element 128h + 32j + l: bits 2j..2j+1 of qs[32h + l]
  uint16_t d;
  uint16_t dmin;
};
struct BlockQ3_K {   // 110 bytes: value = d * (s6_j - 32) * (q - 4), q in 0..7
  uint8_t hmask[32]; // element 128h + 32j + l: bit 4h + j of hmask[l] is q's bit 2
  uint8_t qs[64];    // same 2-bit layout as Q2_K
  uint8_t scales[12];  // 16 6-bit scales: low nibbles in bytes 0..7 (j<8: low, j>=8: high nibble of j-8),
                       // top 2 bits of scale j at bit 2*(j/4) of byte 8 + j%4
  uint16_t d;
};
struct BlockQ5_K {   // 176 bytes: as Q4_K plus a fifth bit per element
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[32];    // element 64c + l (l<32): bit 2c of qh[l]; element 64c + 32 + l: bit 2c+1
  uint8_t qs[128];
};
struct BlockQ8_K {   // 292 bytes: activations for K-quant dot products
  float d;
  int8_t qs[256];
  int16_t bsums[16];  // sums of qs over each 16 elements
};
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ8_K) == 292);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ6_K) == 210);

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);   // round to nearest even
float bf16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);   // round to nearest even

// Row conversion (scalar reference; used by tests, writer, and as fallback).
void quantize_row(DType t, const float* x, void* dst, int64_t n);   // every type (Q8_1/Q8_K as activations are)
void dequantize_row(DType t, const void* src, float* y, int64_t n);  // all types

}  // namespace kvscope::kernels
