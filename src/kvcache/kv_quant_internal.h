// Layout arithmetic shared by the scalar and SIMD KV kernels (private to src/kvcache).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kvcache/kv_quant.h"

namespace kvscope::kvq {

inline size_t elem_bytes(KVType t) {
  switch (t) {
    case KVType::F32: return 4;
    case KVType::F16:
    case KVType::BF16: return 2;
    default: return 1;
  }
}

// Bytes of one packed code row.
inline size_t packed_bytes(KVType t, int kv_dim) { return static_cast<size_t>(kv_dim) * kv_code_bits(t) / 8; }

// Groups of kv_group(kv_dim) channels in a row.
inline size_t n_groups(int kv_dim) { return static_cast<size_t>(kv_dim / kv_group(kv_dim)); }

// Row stride of row-layout blocks (everything but per-channel K).
inline size_t row_stride(KVType t, int kv_dim) {
  if (t == KVType::INT8) return 4 + static_cast<size_t>(kv_dim);
  if (t == KVType::INT4 || t == KVType::INT2) return 4 * n_groups(kv_dim) + packed_bytes(t, kv_dim);
  if (kv_compact(t)) return 2 * n_groups(kv_dim) + packed_bytes(t, kv_dim);
  return elem_bytes(t) * kv_dim;
}

// Per-channel K: parameters, then block_size code rows.
inline size_t kc_param_bytes(KVType t, int kv_dim) {
  if (t == KVType::FP8_E4M3C) return 2 * static_cast<size_t>(kv_dim);  // f16 means
  if (kv_compact(t)) return 2 * static_cast<size_t>(kv_dim) + 4 * n_groups(kv_dim);
  return 4 * static_cast<size_t>(kv_dim);  // f16 scales, f16 mins
}
inline size_t kc_row_bytes(KVType t, int kv_dim) { return t == KVType::FP8_E4M3C ? kv_dim : packed_bytes(t, kv_dim); }
inline const uint16_t* kc_scales(const KVBlockRef& b) { return reinterpret_cast<const uint16_t*>(b.data); }
inline const uint16_t* kc_mins(const KVBlockRef& b) { return reinterpret_cast<const uint16_t*>(b.data) + b.kv_dim; }
inline const uint8_t* kc_codes(const KVBlockRef& b, int row) {
  return b.data + kc_param_bytes(b.type, b.kv_dim) + row * kc_row_bytes(b.type, b.kv_dim);
}
// Per-channel K parameters of channels [off, off + n) as floats: k = min + scale * code (FP8_E4M3C:
// scale 1, min the channel mean, code the E4M3 value).
void kc_params(const KVBlockRef& b, int off, int n, float* scale, float* min);

// 8-bit log-scales: 2^(e/12 - 14), 0 for e = 0.
const float* log_scales();
// Scale and min of group g of a per-token-group row (INT4/INT2 and their compact forms as V).
void vg_params(KVType t, const uint8_t* row, int g, float* scale, float* min);

inline float load_f32(const uint8_t* p) {
  float f;
  std::memcpy(&f, p, 4);
  return f;
}
inline uint16_t load_u16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return h;
}

}  // namespace kvscope::kvq

namespace kvscope::detail::kv_avx2 {
// Return false when the shape is not handled (head slice not a multiple of 8 channels); the caller
// falls back to the scalar reference.
// The query heads of one GQA group (1 to 8) at once; one head is a group of one.
bool kv_dot_group(const KVBlockRef& b, int n, int off, int hd, const float* q, int group, float scale, float* scores,
                  size_t stride);
bool kv_axpy_group(const KVBlockRef& b, int n, int off, int hd, const float* p, size_t stride, int group, float* out);
}  // namespace kvscope::detail::kv_avx2
