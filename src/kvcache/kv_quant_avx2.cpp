// AVX2+FMA+F16C attention loops over quantized KV blocks: each 8-channel chunk is decoded in
// registers (FP8 through the fp16 converter, integer codes by variable shifts) and fed to FMAs.
// The AVX-512 dispatch level uses these too: head slices are short, 8 lanes already cover them.
#include <immintrin.h>

#include "kvcache/kv_quant_internal.h"

namespace kvscope::detail::kv_avx2 {
namespace {

using kvq::load_f32;

constexpr int kMaxHead = 512, kMaxRows = 256;

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline __m128i load64(const uint8_t* p) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)); }

// Channels [c, c+8) of a row-layout row starting at d, before the row's scale (INT8: s, E4M3: 256).
inline __m256 load8(KVType t, const uint8_t* d, int c) {
  switch (t) {
    case KVType::F32: return _mm256_loadu_ps(reinterpret_cast<const float*>(d) + c);
    case KVType::F16: return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d + 2 * c)));
    case KVType::BF16:
      return _mm256_castsi256_ps(
          _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d + 2 * c))), 16));
    case KVType::FP8_E5M2: return _mm256_cvtph_ps(_mm_slli_epi16(_mm_cvtepu8_epi16(load64(d + c)), 8));
    case KVType::FP8_E4M3:
    case KVType::FP8_E4M3C: {
      const __m128i x = _mm_cvtepu8_epi16(load64(d + c));
      const __m128i h = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(x, _mm_set1_epi16(0x80)), 8),
                                     _mm_slli_epi16(_mm_and_si128(x, _mm_set1_epi16(0x7F)), 7));
      return _mm256_cvtph_ps(h);
    }
    case KVType::INT8: return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(load64(d + 4 + c)));
    default: return _mm256_setzero_ps();
  }
}

// Integer codes of channels [c, c+8) of a packed code row.
inline __m256 codes8(int bits, const uint8_t* codes, int c) {
  if (bits == 4) {
    uint32_t w;
    std::memcpy(&w, codes + c / 2, 4);
    const __m256i v = _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(w)), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
    return _mm256_cvtepi32_ps(_mm256_and_si256(v, _mm256_set1_epi32(15)));
  }
  uint16_t w;
  std::memcpy(&w, codes + c / 4, 2);
  const __m256i v = _mm256_srlv_epi32(_mm256_set1_epi32(w), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14));
  return _mm256_cvtepi32_ps(_mm256_and_si256(v, _mm256_set1_epi32(3)));
}

inline float row_scale(KVType t, const uint8_t* d) {
  return t == KVType::INT8 ? load_f32(d) : t == KVType::FP8_E4M3 || t == KVType::FP8_E4M3C ? 256.0f : 1.0f;
}

bool shape_ok(const KVBlockRef& b, int n, int off, int hd) {
  return hd % 8 == 0 && off % 8 == 0 && hd <= kMaxHead && n <= kMaxRows && off + hd <= b.kv_dim;
}

}  // namespace

bool kv_dot(const KVBlockRef& b, int n, int off, int hd, const float* q, float scale, float* scores) {
  if (!shape_ok(b, n, off, hd)) return false;
  if (kv_grouped_by_channel(b.type, b.is_k)) {
    // k = min + s * code per channel: q.k = sum (q*s) code + sum q*min, the second term per block.
    // FP8_E4M3C: k = mean + e4m3, the E4M3 byte read as fp16 times 256 (folded into q the same way).
    alignas(32) float qs[kMaxHead];
    __m256 qm = _mm256_setzero_ps();
    if (b.type == KVType::INT4 || b.type == KVType::INT2) {
      const uint16_t* sc = kvq::kc_scales(b) + off;
      const uint16_t* mn = kvq::kc_mins(b) + off;
      for (int c = 0; c < hd; c += 8) {
        const __m256 qv = _mm256_loadu_ps(q + c);
        _mm256_store_ps(qs + c, _mm256_mul_ps(qv, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc + c)))));
        qm = _mm256_fmadd_ps(qv, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(mn + c))), qm);
      }
    } else {
      alignas(32) float sc[kMaxHead], mn[kMaxHead];
      kvq::kc_params(b, off, hd, sc, mn);
      const __m256 f = _mm256_set1_ps(b.type == KVType::FP8_E4M3C ? 256.0f : 1.0f);
      for (int c = 0; c < hd; c += 8) {
        const __m256 qv = _mm256_loadu_ps(q + c);
        _mm256_store_ps(qs + c, _mm256_mul_ps(qv, _mm256_mul_ps(_mm256_load_ps(sc + c), f)));
        qm = _mm256_fmadd_ps(qv, _mm256_load_ps(mn + c), qm);
      }
    }
    const float qm_sum = hsum(qm);
    const int bits = kv_code_bits(b.type);
    const uint8_t* codes0 = kvq::kc_codes(b, 0);
    const size_t rb = kvq::kc_row_bytes(b.type, b.kv_dim);
    for (int i = 0; i < n; ++i) {
      const uint8_t* codes = codes0 + rb * i;
      __m256 acc = _mm256_setzero_ps();
      if (bits)
        for (int c = 0; c < hd; c += 8) acc = _mm256_fmadd_ps(_mm256_load_ps(qs + c), codes8(bits, codes, off + c), acc);
      else
        for (int c = 0; c < hd; c += 8) acc = _mm256_fmadd_ps(_mm256_load_ps(qs + c), load8(KVType::FP8_E4M3, codes, off + c), acc);
      scores[i] = (hsum(acc) + qm_sum) * scale;
    }
    return true;
  }
  if (kv_code_bits(b.type)) return false;  // per-token groups are a V layout
  const size_t stride = kvq::row_stride(b.type, b.kv_dim);
  for (int i = 0; i < n; ++i) {
    const uint8_t* d = b.data + stride * i;
    __m256 acc = _mm256_setzero_ps();
    for (int c = 0; c < hd; c += 8) acc = _mm256_fmadd_ps(load8(b.type, d, off + c), _mm256_loadu_ps(q + c), acc);
    scores[i] = hsum(acc) * row_scale(b.type, d) * scale;
  }
  return true;
}

bool kv_axpy(const KVBlockRef& b, int n, int off, int hd, const float* p, float* out) {
  if (!shape_ok(b, n, off, hd)) return false;
  if (kv_grouped_by_channel(b.type, b.is_k)) {
    // Per-channel V (INT4CH/INT2CH): v = min_c + s_c code, so out += s * (sum_i p_i code_i) + min * sum_i p_i.
    const int bits = kv_code_bits(b.type);
    if (!bits) return false;
    alignas(32) float sc[kMaxHead], mn[kMaxHead];
    kvq::kc_params(b, off, hd, sc, mn);
    float psum = 0;
    for (int i = 0; i < n; ++i) psum += p[i];
    const __m256 ps = _mm256_set1_ps(psum);
    const uint8_t* codes0 = kvq::kc_codes(b, 0);
    const size_t rb = kvq::kc_row_bytes(b.type, b.kv_dim);
    for (int c = 0; c < hd; c += 8) {
      __m256 acc = _mm256_setzero_ps();
      for (int i = 0; i < n; ++i) acc = _mm256_fmadd_ps(_mm256_set1_ps(p[i]), codes8(bits, codes0 + rb * i, off + c), acc);
      const __m256 o = _mm256_fmadd_ps(_mm256_load_ps(sc + c), acc, _mm256_fmadd_ps(_mm256_load_ps(mn + c), ps, _mm256_loadu_ps(out + c)));
      _mm256_storeu_ps(out + c, o);
    }
    return true;
  }
  const size_t stride = kvq::row_stride(b.type, b.kv_dim);
  if (const int bits = kv_code_bits(b.type)) {
    // v = min_g + s_g * code per token group (INT4C: min = s z): out += sum_i (p_i s_ig) code + sum_i p_i min_ig.
    const int G = kv_group(b.kv_dim);
    alignas(32) float w[kMaxRows];
    for (int c = 0; c < hd; c += 8) {
      const int g = (off + c) / G;
      float bias = 0;
      for (int i = 0; i < n; ++i) {
        float sg, mg;
        kvq::vg_params(b.type, b.data + stride * i, g, &sg, &mg);
        w[i] = p[i] * sg;
        bias += p[i] * mg;
      }
      const size_t code_off = stride - kvq::packed_bytes(b.type, b.kv_dim);
      __m256 acc = _mm256_loadu_ps(out + c);
      for (int i = 0; i < n; ++i)
        acc = _mm256_fmadd_ps(_mm256_set1_ps(w[i]), codes8(bits, b.data + stride * i + code_off, off + c), acc);
      _mm256_storeu_ps(out + c, _mm256_add_ps(acc, _mm256_set1_ps(bias)));
    }
    return true;
  }
  alignas(32) float w[kMaxRows];
  for (int i = 0; i < n; ++i) w[i] = p[i] * row_scale(b.type, b.data + stride * i);
  for (int c = 0; c < hd; c += 8) {
    __m256 acc = _mm256_loadu_ps(out + c);
    for (int i = 0; i < n; ++i) acc = _mm256_fmadd_ps(_mm256_set1_ps(w[i]), load8(b.type, b.data + stride * i, off + c), acc);
    _mm256_storeu_ps(out + c, acc);
  }
  return true;
}

}  // namespace kvscope::detail::kv_avx2
