// Element types of the KV cache and their block layouts, with scalar reference (de)quantizers and
// the attention inner loops (q.k over a block's rows, sum of p*v) that read quantized blocks
// directly. The loops are SIMD-dispatched (kernels::active_isa()) and each has a scalar reference.
//
// One block holds block_size token rows of kv_dim channels of one layer's K or V. Layouts:
//   F32 / F16 / BF16     rows of kv_dim elements
//   FP8_E4M3 / FP8_E5M2  rows of kv_dim bytes (OCP FP8; saturating, no inf/nan produced)
//   INT8                 rows of [f32 scale][kv_dim int8], symmetric, one scale per token row
//   INT4 / INT2 as K     per-channel groups over the block's tokens (KIVI): [kv_dim f16 scale]
//                        [kv_dim f16 min][block_size rows of kv_dim packed codes]; quantized when
//                        the block fills, the partial block is kept in F32 staging until then
//   INT4 / INT2 as V     per-token groups of kv_group(kv_dim) channels: rows of
//                        [n_groups x (f16 scale, f16 min)][kv_dim packed codes]
//   FP8_E4M3C as K       per-channel centred FP8 (keys carry large per-channel offsets, and FP8's
//                        error is relative): [kv_dim f16 block mean][block_size rows of kv_dim
//                        E4M3 bytes of k - mean]; staged and quantized when the block fills
//   FP8_E4M3C as V       the FP8_E4M3 rows
//   INT4C / INT2C as K   INT4/INT2 K with 8-bit parameters: [kv_dim u8 log-scale][kv_dim u8 min
//                        index][n_groups x (f16 base, f16 step)][codes]; min = base + step * index
//   INT4C / INT2C as V   rows of [n_groups x (u8 log-scale, i8 zero point z)][packed codes];
//                        value = scale * (code + z)
//   INT4CH / INT2CH      K and V both in the INT4C/INT2C K layout (per channel over the block's
//                        tokens, staged until the block fills): some models' V carries per-channel
//                        structure too, and per-token groups then cost several times the divergence
// Packed codes: channel c of a row in byte c*bits/8, lowest bits first. value = min + scale * code.
// An 8-bit log-scale e stands for 2^(e/12 - 14) (0 for e = 0): 6% steps from 6e-5 to 152.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace kvscope {

// Values are stored in session files: never renumber.
enum class KVType : uint8_t {
  F32 = 0, F16 = 1, BF16 = 2, FP8_E4M3 = 3, FP8_E5M2 = 4, INT8 = 5, INT4 = 6, INT2 = 7,
  FP8_E4M3C = 8, INT4C = 9, INT2C = 10, INT4CH = 11, INT2CH = 12
};
constexpr int kKVTypeCount = 13;

struct KVLayerType {
  KVType k = KVType::F32, v = KVType::F32;
  bool operator==(const KVLayerType&) const = default;
};

const char* kv_type_name(KVType t);
// f32 f16 bf16 fp8_e4m3 (fp8) fp8_e5m2 int8 (q8_0, q8) int4 (q4_0, q4) int2 (q2) fp8_e4m3c (fp8c)
// int4c int2c int4ch int2ch; InputError otherwise.
KVType kv_type_from_name(const std::string& name);
// Names accepted by kv_type_from_name, for messages and help.
const char* kv_type_names();

// K of INT4/INT2(C) and FP8_E4M3C, and K and V of INT4CH/INT2CH, are grouped over tokens (per
// channel), so their blocks are written whole.
inline bool kv_grouped_by_channel(KVType t, bool is_k) {
  if (t == KVType::INT4CH || t == KVType::INT2CH) return true;
  return is_k && (t == KVType::INT4 || t == KVType::INT2 || t == KVType::FP8_E4M3C || t == KVType::INT4C || t == KVType::INT2C);
}
int kv_code_bits(KVType t);  // 4 or 2 for INT4(C/CH) / INT2(C/CH), else 0
// 8-bit parameters (INT4C/INT2C, and INT4CH/INT2CH whose layout is INT4C/INT2C K's).
inline bool kv_compact(KVType t) {
  return t == KVType::INT4C || t == KVType::INT2C || t == KVType::INT4CH || t == KVType::INT2CH;
}
int kv_group(int kv_dim);    // channels per V group of INT4/INT2 (32, 16 or 8); InputError otherwise

// Bytes of one block (block_size rows) of K (is_k) or V in type t; InputError if kv_dim does not fit.
size_t kv_block_bytes(KVType t, bool is_k, int kv_dim, int block_size);
// Average stored bits per element, scales included.
double kv_bits(KVType t, bool is_k, int kv_dim, int block_size);

// A read-only view of one block.
struct KVBlockRef {
  KVType type = KVType::F32;
  bool is_k = true;
  const uint8_t* data = nullptr;
  int kv_dim = 0;
  int block_size = 0;
};

// Row-wise quantizers (every layout but the per-channel ones): writes row `row` of the block at `block`.
void kv_quantize_row(KVType t, bool is_k, const float* x, uint8_t* block, int row, int kv_dim);
// Per-channel layouts (kv_grouped_by_channel; K and V alike): quantizes all block_size rows (row-major [block_size x kv_dim] floats).
// reuse: `block` already holds this block quantized (it is being rewritten after a truncation); its
// parameters are kept when every row fits them, so rows that did not change get their codes back.
void kv_quantize_block(KVType t, const float* rows, uint8_t* block, int kv_dim, int block_size, bool reuse = false);
// Dequantizes row `row` (kv_dim floats) of any layout.
void kv_dequantize_row(const KVBlockRef& b, int row, float* y);

// Attention loops over rows [0, n) of a block, on the head slice [off, off + hd):
//   kv_dot:  scores[i] = scale * dot(q, row i)
//   kv_axpy: out += sum_i p[i] * row i
void kv_dot(const KVBlockRef& b, int n, int off, int hd, const float* q, float scale, float* scores);
void kv_axpy(const KVBlockRef& b, int n, int off, int hd, const float* p, float* out);
// The same for the `group` query heads that share one KV head (GQA), so each row is decoded once
// for all of them: query head g reads q + g*hd and writes scores + g*stride (kv_dot_group), or reads
// p + g*stride and adds into out + g*hd (kv_axpy_group).
void kv_dot_group(const KVBlockRef& b, int n, int off, int hd, const float* q, int group, float scale, float* scores,
                  size_t stride);
void kv_axpy_group(const KVBlockRef& b, int n, int off, int hd, const float* p, size_t stride, int group, float* out);

namespace kv_ref {  // scalar references
void kv_dot(const KVBlockRef& b, int n, int off, int hd, const float* q, float scale, float* scores);
void kv_axpy(const KVBlockRef& b, int n, int off, int hd, const float* p, float* out);
void kv_dot_group(const KVBlockRef& b, int n, int off, int hd, const float* q, int group, float scale, float* scores,
                  size_t stride);
void kv_axpy_group(const KVBlockRef& b, int n, int off, int hd, const float* p, size_t stride, int group, float* out);
}  // namespace kv_ref

// Scalar FP8 conversions (round to nearest even, saturating at the largest finite value).
uint8_t fp32_to_e4m3(float x);
float e4m3_to_fp32(uint8_t b);
uint8_t fp32_to_e5m2(float x);
float e5m2_to_fp32(uint8_t b);

}  // namespace kvscope
