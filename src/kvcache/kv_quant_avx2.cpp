// AVX2+FMA+F16C attention loops over quantized KV blocks: each 8-channel chunk is decoded in
// registers (FP8 through the fp16 converter, integer codes by variable shifts) and fed to FMAs.
// The AVX-512 dispatch level uses these too: head slices are short, 8 lanes already cover them.
// One call serves a whole GQA group of query heads (a single head is a group of one).
#include <immintrin.h>

#include <algorithm>
#include <type_traits>

#include "kvcache/kv_quant_internal.h"
#include "kernels/avx2_common.h"

namespace kvscope::detail::kv_avx2 {
namespace {

using kvq::load_f32;

constexpr int kMaxHead = 512, kMaxRows = 256;

using simd256::hsum;

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

// Per-channel parameters of channels [off, off + hd) as floats, the FP8 factor folded into the scale.
void channel_params(const KVBlockRef& b, int off, int hd, float* sc, float* mn) {
  if (b.type == KVType::INT4 || b.type == KVType::INT2) {
    for (int c = 0; c < hd; c += 8) {
      _mm256_store_ps(sc + c, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kvq::kc_scales(b) + off + c))));
      _mm256_store_ps(mn + c, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kvq::kc_mins(b) + off + c))));
    }
    return;
  }
  kvq::kc_params(b, off, hd, sc, mn);
  if (b.type == KVType::FP8_E4M3C)
    for (int c = 0; c < hd; ++c) sc[c] *= 256.0f;
}

// Channels [c, c+8) of a per-channel code row (integer codes, or E4M3 read as fp16).
inline __m256 channel_codes(int bits, const uint8_t* codes, int c) {
  return bits ? codes8(bits, codes, c) : load8(KVType::FP8_E4M3, codes, c);
}

template <int G>
void dot_group(const KVBlockRef& b, int n, int off, int hd, const float* q, float scale, float* scores, size_t stride) {
  __m256 acc[G];
  if (kv_grouped_by_channel(b.type, b.is_k)) {
    alignas(32) float sc[kMaxHead], mn[kMaxHead], qs[G][kMaxHead];
    float qm[G];
    channel_params(b, off, hd, sc, mn);
    for (int g = 0; g < G; ++g) {
      __m256 m = _mm256_setzero_ps();
      for (int c = 0; c < hd; c += 8) {
        const __m256 qv = _mm256_loadu_ps(q + g * hd + c);
        _mm256_store_ps(qs[g] + c, _mm256_mul_ps(qv, _mm256_load_ps(sc + c)));
        m = _mm256_fmadd_ps(qv, _mm256_load_ps(mn + c), m);
      }
      qm[g] = hsum(m);
    }
    const int bits = kv_code_bits(b.type);
    const uint8_t* codes0 = kvq::kc_codes(b, 0);
    const size_t rb = kvq::kc_row_bytes(b.type, b.kv_dim);
    for (int i = 0; i < n; ++i) {
      for (int g = 0; g < G; ++g) acc[g] = _mm256_setzero_ps();
      for (int c = 0; c < hd; c += 8) {
        const __m256 x = channel_codes(bits, codes0 + rb * i, off + c);
        for (int g = 0; g < G; ++g) acc[g] = _mm256_fmadd_ps(_mm256_load_ps(qs[g] + c), x, acc[g]);
      }
      for (int g = 0; g < G; ++g) scores[g * stride + i] = (hsum(acc[g]) + qm[g]) * scale;
    }
    return;
  }
  const size_t rs = kvq::row_stride(b.type, b.kv_dim);
  for (int i = 0; i < n; ++i) {
    const uint8_t* d = b.data + rs * i;
    for (int g = 0; g < G; ++g) acc[g] = _mm256_setzero_ps();
    for (int c = 0; c < hd; c += 8) {
      const __m256 x = load8(b.type, d, off + c);
      for (int g = 0; g < G; ++g) acc[g] = _mm256_fmadd_ps(x, _mm256_loadu_ps(q + g * hd + c), acc[g]);
    }
    const float f = row_scale(b.type, d) * scale;
    for (int g = 0; g < G; ++g) scores[g * stride + i] = hsum(acc[g]) * f;
  }
}

template <int G>
void axpy_group(const KVBlockRef& b, int n, int off, int hd, const float* p, size_t stride, float* out) {
  __m256 acc[G];
  float w[G][kMaxRows];
  if (kv_grouped_by_channel(b.type, b.is_k)) {  // per-channel V: out += s * sum p code + min * sum p
    alignas(32) float sc[kMaxHead], mn[kMaxHead];
    channel_params(b, off, hd, sc, mn);
    float psum[G];
    for (int g = 0; g < G; ++g) {
      psum[g] = 0;
      for (int i = 0; i < n; ++i) psum[g] += p[g * stride + i];
    }
    const int bits = kv_code_bits(b.type);
    const uint8_t* codes0 = kvq::kc_codes(b, 0);
    const size_t rb = kvq::kc_row_bytes(b.type, b.kv_dim);
    for (int c = 0; c < hd; c += 8) {
      for (int g = 0; g < G; ++g) acc[g] = _mm256_setzero_ps();
      for (int i = 0; i < n; ++i) {
        const __m256 x = channel_codes(bits, codes0 + rb * i, off + c);
        for (int g = 0; g < G; ++g) acc[g] = _mm256_fmadd_ps(_mm256_set1_ps(p[g * stride + i]), x, acc[g]);
      }
      const __m256 s = _mm256_load_ps(sc + c), m = _mm256_load_ps(mn + c);
      for (int g = 0; g < G; ++g) {
        float* o = out + g * hd + c;
        _mm256_storeu_ps(o, _mm256_fmadd_ps(s, acc[g], _mm256_fmadd_ps(m, _mm256_set1_ps(psum[g]), _mm256_loadu_ps(o))));
      }
    }
    return;
  }
  const size_t rs = kvq::row_stride(b.type, b.kv_dim);
  if (const int bits = kv_code_bits(b.type)) {  // per-token groups: v = min_i + s_i code
    const int VG = kv_group(b.kv_dim);
    const size_t code_off = rs - kvq::packed_bytes(b.type, b.kv_dim);
    float bias[G] = {};
    for (int c = 0, cur = -1; c < hd; c += 8) {
      if ((off + c) / VG != cur) {  // a new channel group: its per-row scales and mins
        cur = (off + c) / VG;
        for (int g = 0; g < G; ++g) bias[g] = 0;
        for (int i = 0; i < n; ++i) {
          float sg, mg;
          kvq::vg_params(b.type, b.data + rs * i, cur, &sg, &mg);
          for (int g = 0; g < G; ++g) w[g][i] = p[g * stride + i] * sg, bias[g] += p[g * stride + i] * mg;
        }
      }
      for (int g = 0; g < G; ++g) acc[g] = _mm256_add_ps(_mm256_loadu_ps(out + g * hd + c), _mm256_set1_ps(bias[g]));
      for (int i = 0; i < n; ++i) {
        const __m256 x = codes8(bits, b.data + rs * i + code_off, off + c);
        for (int g = 0; g < G; ++g) acc[g] = _mm256_fmadd_ps(_mm256_set1_ps(w[g][i]), x, acc[g]);
      }
      for (int g = 0; g < G; ++g) _mm256_storeu_ps(out + g * hd + c, acc[g]);
    }
    return;
  }
  for (int i = 0; i < n; ++i) {
    const float f = row_scale(b.type, b.data + rs * i);
    for (int g = 0; g < G; ++g) w[g][i] = p[g * stride + i] * f;
  }
  for (int c = 0; c < hd; c += 8) {
    for (int g = 0; g < G; ++g) acc[g] = _mm256_loadu_ps(out + g * hd + c);
    for (int i = 0; i < n; ++i) {
      const __m256 x = load8(b.type, b.data + rs * i, off + c);
      for (int g = 0; g < G; ++g) acc[g] = _mm256_fmadd_ps(_mm256_set1_ps(w[g][i]), x, acc[g]);
    }
    for (int g = 0; g < G; ++g) _mm256_storeu_ps(out + g * hd + c, acc[g]);
  }
}

template <typename F>
bool by_group(int group, F&& f) {
  switch (group) {
    case 1: f(std::integral_constant<int, 1>{}); return true;
    case 2: f(std::integral_constant<int, 2>{}); return true;
    case 3: f(std::integral_constant<int, 3>{}); return true;
    case 4: f(std::integral_constant<int, 4>{}); return true;
    case 5: f(std::integral_constant<int, 5>{}); return true;
    case 6: f(std::integral_constant<int, 6>{}); return true;
    case 7: f(std::integral_constant<int, 7>{}); return true;
    case 8: f(std::integral_constant<int, 8>{}); return true;
    default: return false;
  }
}

}  // namespace

bool kv_dot_group(const KVBlockRef& b, int n, int off, int hd, const float* q, int group, float scale, float* scores,
                  size_t stride) {
  if (!shape_ok(b, n, off, hd)) return false;
  if (!kv_grouped_by_channel(b.type, b.is_k) && kv_code_bits(b.type)) return false;  // per-token groups: a V layout
  return by_group(group, [&](auto G) { dot_group<decltype(G)::value>(b, n, off, hd, q, scale, scores, stride); });
}

bool kv_axpy_group(const KVBlockRef& b, int n, int off, int hd, const float* p, size_t stride, int group, float* out) {
  if (!shape_ok(b, n, off, hd)) return false;
  if (kv_grouped_by_channel(b.type, b.is_k) && !kv_code_bits(b.type)) return false;  // per-channel FP8 is a K layout
  return by_group(group, [&](auto G) { axpy_group<decltype(G)::value>(b, n, off, hd, p, stride, out); });
}

}  // namespace kvscope::detail::kv_avx2
