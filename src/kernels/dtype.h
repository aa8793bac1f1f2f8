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
  Q8_0 = 8,
  Q4_K = 12,
  Q6_K = 14,
  BF16 = 30,
};

// Throws FormatError("unsupported tensor type <id>") for ids we do not implement.
DType dtype_from_ggml(uint32_t id);
const char* dtype_name(DType t);
DType dtype_from_name(const std::string& name);  // "f32","f16","bf16","q8_0","q4_0" (throws InputError)
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
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ6_K) == 210);

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);   // round to nearest even
float bf16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);   // round to nearest even

// Row conversion (scalar reference; used by tests, writer, and as fallback).
void quantize_row(DType t, const float* x, void* dst, int64_t n);   // F32/F16/BF16/Q8_0/Q4_0
void dequantize_row(DType t, const void* src, float* y, int64_t n);  // all types

}  // namespace kvscope::kernels
