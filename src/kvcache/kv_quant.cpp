// KV element types: names, block geometry, scalar (de)quantizers and the scalar attention loops.
#include "kvcache/kv_quant.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/kernels.h"
#include "kvcache/kv_quant_internal.h"
#include "util/error.h"

namespace kvscope {

using namespace kvq;
using kernels::fp16_to_fp32;
using kernels::fp32_to_fp16;

const char* kv_type_name(KVType t) {
  switch (t) {
    case KVType::F32: return "f32";
    case KVType::F16: return "f16";
    case KVType::BF16: return "bf16";
    case KVType::FP8_E4M3: return "fp8_e4m3";
    case KVType::FP8_E5M2: return "fp8_e5m2";
    case KVType::INT8: return "int8";
    case KVType::INT4: return "int4";
    case KVType::INT2: return "int2";
    case KVType::FP8_E4M3C: return "fp8_e4m3c";
    case KVType::INT4C: return "int4c";
    case KVType::INT2C: return "int2c";
    case KVType::INT4CH: return "int4ch";
    case KVType::INT2CH: return "int2ch";
  }
  return "?";
}

const char* kv_type_names() {
  return "f32, f16, bf16, fp8_e4m3 (fp8), fp8_e5m2, int8 (q8_0), int4 (q4_0), int2, fp8_e4m3c (fp8c), int4c, int2c, int4ch, int2ch";
}

KVType kv_type_from_name(const std::string& name) {
  std::string s = name;
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "f32") return KVType::F32;
  if (s == "f16") return KVType::F16;
  if (s == "bf16") return KVType::BF16;
  if (s == "fp8_e4m3" || s == "fp8" || s == "e4m3") return KVType::FP8_E4M3;
  if (s == "fp8_e5m2" || s == "e5m2") return KVType::FP8_E5M2;
  if (s == "int8" || s == "q8_0" || s == "q8") return KVType::INT8;
  if (s == "int4" || s == "q4_0" || s == "q4") return KVType::INT4;
  if (s == "int2" || s == "q2") return KVType::INT2;
  if (s == "fp8_e4m3c" || s == "fp8c") return KVType::FP8_E4M3C;
  if (s == "int4c") return KVType::INT4C;
  if (s == "int2c") return KVType::INT2C;
  if (s == "int4ch") return KVType::INT4CH;
  if (s == "int2ch") return KVType::INT2CH;
  throw InputError("unknown KV cache type '" + name + "' (expected one of " + kv_type_names() + ")");
}

int kv_code_bits(KVType t) {
  switch (t) {
    case KVType::INT4:
    case KVType::INT4C:
    case KVType::INT4CH: return 4;
    case KVType::INT2:
    case KVType::INT2C:
    case KVType::INT2CH: return 2;
    default: return 0;
  }
}

int kv_group(int kv_dim) {
  for (int g : {32, 16, 8})
    if (kv_dim % g == 0) return g;
  throw InputError("int4/int2 KV cache needs a K/V width that is a multiple of 8 (it is " + std::to_string(kv_dim) + ")");
}

size_t kv_block_bytes(KVType t, bool is_k, int kv_dim, int block_size) {
  if (kv_code_bits(t)) kv_group(kv_dim);  // validates the width
  if (kv_grouped_by_channel(t, is_k)) return kc_param_bytes(t, kv_dim) + block_size * kc_row_bytes(t, kv_dim);
  return row_stride(t, kv_dim) * block_size;
}

double kv_bits(KVType t, bool is_k, int kv_dim, int block_size) {
  return 8.0 * static_cast<double>(kv_block_bytes(t, is_k, kv_dim, block_size)) / (double(kv_dim) * block_size);
}

// ---- FP8 ----------------------------------------------------------------------------------------

namespace {

// Round-to-nearest-even encoding of |x| into a sign-less FP8 code with `mbits` mantissa bits and
// exponent bias `bias`, saturated at `maxcode` (the largest finite value's code).
uint8_t encode_fp8(float x, int mbits, int bias, uint8_t maxcode, float maxval) {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const float a = std::fabs(x);
  if (std::isnan(a) || a >= maxval) return sign | maxcode;
  if (a == 0.0f) return sign;
  int e;
  std::frexp(a, &e);
  int E = e - 1;  // a = 1.m * 2^E
  const int emin = 1 - bias;
  if (E < emin) {  // subnormal: units of 2^(emin - mbits); a carry into 1<<mbits is the smallest normal
    const float q = std::nearbyint(std::ldexp(a, mbits - emin));
    return sign | static_cast<uint8_t>(q);
  }
  float q = std::nearbyint(std::ldexp(a, mbits - E));  // in [2^mbits, 2^(mbits+1)]
  if (q >= static_cast<float>(2 << mbits)) {
    ++E;
    q = static_cast<float>(1 << mbits);
  }
  const int code = ((E + bias) << mbits) | (static_cast<int>(q) - (1 << mbits));
  return sign | static_cast<uint8_t>(std::min<int>(code, maxcode));
}

}  // namespace

uint8_t fp32_to_e4m3(float x) { return encode_fp8(x, 3, 7, 0x7E, 464.0f); }
uint8_t fp32_to_e5m2(float x) { return encode_fp8(x, 2, 15, 0x7B, 61440.0f); }

float e4m3_to_fp32(uint8_t b) {
  // E4M3 is fp16 with a 4-bit exponent: the same bits shifted into fp16 give the value * 2^-8.
  const uint16_t h = static_cast<uint16_t>(((b & 0x80) << 8) | ((b & 0x7F) << 7));
  return fp16_to_fp32(h) * 256.0f;
}
float e5m2_to_fp32(uint8_t b) { return fp16_to_fp32(static_cast<uint16_t>(b << 8)); }

// ---- 8-bit parameters (INT4C / INT2C) -------------------------------------------------------------

namespace kvq {

// Log-scale steps per octave and the octaves below 1 of code 0's neighbour: steps of 2^(1/12) (6%)
// from 6e-5 (V rows of attention sinks are tiny and weigh heavily) to 152.
constexpr float kLogSteps = 12.0f, kLogBias = 14.0f;

const float* log_scales() {
  static const auto table = [] {
    std::vector<float> t(256);
    for (int e = 1; e < 256; ++e) t[e] = std::exp2(e / kLogSteps - kLogBias);
    return t;
  }();
  return table.data();
}

void kc_params(const KVBlockRef& b, int off, int n, float* scale, float* min) {
  const int D = b.kv_dim;
  if (b.type == KVType::FP8_E4M3C) {
    for (int c = 0; c < n; ++c) scale[c] = 1.0f, min[c] = fp16_to_fp32(kc_scales(b)[off + c]);
    return;
  }
  if (kv_compact(b.type)) {
    const uint8_t* e = b.data;
    const uint8_t* idx = b.data + D;
    const uint8_t* ref = b.data + 2 * static_cast<size_t>(D);
    const int G = kv_group(D);
    const float* ls = log_scales();
    // Base and step are per group of G channels: converted once per group, not per channel.
    for (int c = off; c < off + n;) {
      const int g = c / G, end = std::min(off + n, (g + 1) * G);
      const float base = fp16_to_fp32(load_u16(ref + 4 * g)), step = fp16_to_fp32(load_u16(ref + 4 * g + 2));
      for (; c < end; ++c) scale[c - off] = ls[e[c]], min[c - off] = base + step * static_cast<float>(idx[c]);
    }
    return;
  }
  for (int c = 0; c < n; ++c) scale[c] = fp16_to_fp32(kc_scales(b)[off + c]), min[c] = fp16_to_fp32(kc_mins(b)[off + c]);
}

void vg_params(KVType t, const uint8_t* row, int g, float* scale, float* min) {
  if (kv_compact(t)) {
    *scale = log_scales()[row[2 * g]];
    *min = *scale * static_cast<float>(static_cast<int8_t>(row[2 * g + 1]));
    return;
  }
  *scale = fp16_to_fp32(load_u16(row + 4 * g));
  *min = fp16_to_fp32(load_u16(row + 4 * g + 2));
}

}  // namespace kvq

// ---- row and block quantizers ---------------------------------------------------------------------

namespace {

void put_u16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }

// Asymmetric min/scale over values x[0], x[stride], ...: both stored fp16; codes use the stored ones.
void minmax_params(const float* x, int n, size_t stride, int levels, uint16_t* s_h, uint16_t* m_h) {
  float mn = x[0], mx = x[0];
  for (int i = 1; i < n; ++i) mn = std::min(mn, x[i * stride]), mx = std::max(mx, x[i * stride]);
  *m_h = fp32_to_fp16(mn);
  // Scale from the stored min so the largest value stays in range after the min's rounding.
  const float span = mx - fp16_to_fp32(*m_h);
  *s_h = fp32_to_fp16(span > 0 ? span / levels : 0.0f);
}

// The smallest log-scale code whose scale is >= s (255 at most; 0 for s <= 0).
uint8_t log_scale_up(float s) {
  if (!(s > 0.0f)) return 0;
  const float* t = log_scales();
  int e = std::clamp(static_cast<int>(std::ceil(kLogSteps * (std::log2(s) + kLogBias))), 1, 255);
  while (e < 255 && t[e] < s) ++e;
  while (e > 1 && t[e - 1] >= s) --e;
  return static_cast<uint8_t>(e);
}

// fp16 of x rounded toward -inf, so a stored min never lies above the values it covers.
uint16_t fp16_down(float x) {
  uint16_t h = fp32_to_fp16(x);
  if (fp16_to_fp32(h) > x) h = (h & 0x8000) ? static_cast<uint16_t>(h + 1) : h == 0 ? 0x8001 : static_cast<uint16_t>(h - 1);
  return h;
}

int code_of(float x, float s, float m, int levels) {
  if (s <= 0.0f) return 0;
  return std::clamp(static_cast<int>(std::nearbyint((x - m) / s)), 0, levels);
}

void set_code(uint8_t* row, int c, int bits, int q) {
  const int per = 8 / bits, shift = (c % per) * bits;
  row[c / per] = static_cast<uint8_t>((row[c / per] & ~(((1 << bits) - 1) << shift)) | (q << shift));
}
int get_code(const uint8_t* row, int c, int bits) {
  const int per = 8 / bits;
  return (row[c / per] >> ((c % per) * bits)) & ((1 << bits) - 1);
}

}  // namespace

namespace {

// Per-channel centred FP8: the block's channel mean in f16, then E4M3 of the residual.
void quantize_block_fp8c(const float* rows, uint8_t* block, int D, int bs) {
  uint8_t* codes = block + kc_param_bytes(KVType::FP8_E4M3C, D);
  for (int c = 0; c < D; ++c) {
    double sum = 0;
    for (int i = 0; i < bs; ++i) sum += rows[static_cast<size_t>(i) * D + c];
    const uint16_t mh = fp32_to_fp16(static_cast<float>(sum / bs));
    put_u16(block + 2 * c, mh);
    const float m = fp16_to_fp32(mh);
    for (int i = 0; i < bs; ++i) codes[static_cast<size_t>(i) * D + c] = fp32_to_e4m3(rows[static_cast<size_t>(i) * D + c] - m);
  }
}

// INT4C/INT2C K: per channel a log-scale and a min index into its group's [base, base + 255 step].
void quantize_block_compact(KVType t, const float* rows, uint8_t* block, int D, int bs) {
  const int bits = kv_code_bits(t), levels = (1 << bits) - 1, G = kv_group(D);
  const size_t pb = packed_bytes(t, D);
  uint8_t* codes = block + kc_param_bytes(t, D);
  uint8_t* ref = block + 2 * static_cast<size_t>(D);
  std::memset(codes, 0, pb * bs);
  std::vector<float> mn(D), mx(D);
  for (int c = 0; c < D; ++c) {
    mn[c] = mx[c] = rows[c];
    for (int i = 1; i < bs; ++i) mn[c] = std::min(mn[c], rows[static_cast<size_t>(i) * D + c]), mx[c] = std::max(mx[c], rows[static_cast<size_t>(i) * D + c]);
  }
  for (int g = 0; g < D / G; ++g) {
    float lo = mn[g * G], hi = mn[g * G];
    for (int c = g * G + 1; c < (g + 1) * G; ++c) lo = std::min(lo, mn[c]), hi = std::max(hi, mn[c]);
    const uint16_t base_h = fp16_down(lo), step_h = fp32_to_fp16((hi - fp16_to_fp32(base_h)) / 255.0f);
    put_u16(ref + 4 * g, base_h);
    put_u16(ref + 4 * g + 2, step_h);
    const float base = fp16_to_fp32(base_h), step = fp16_to_fp32(step_h);
    for (int c = g * G; c < (g + 1) * G; ++c) {
      // Index rounded down: the stored min stays at or below the channel's values.
      const int ix = step > 0 ? std::clamp(static_cast<int>(std::floor((mn[c] - base) / step)), 0, 255) : 0;
      const float m = base + step * static_cast<float>(ix);
      block[D + c] = static_cast<uint8_t>(ix);
      block[c] = log_scale_up((mx[c] - m) / levels);
      const float s = log_scales()[block[c]];
      for (int i = 0; i < bs; ++i) set_code(codes + i * pb, c, bits, code_of(rows[static_cast<size_t>(i) * D + c], s, m, levels));
    }
  }
}

// Codes of all rows under the block's stored parameters, if every value fits them (false otherwise).
bool requantize_with_stored_params(KVType t, const float* rows, uint8_t* block, int D, int bs) {
  const KVBlockRef r{t, true, block, D, bs};
  std::vector<float> s(D), m(D);
  kc_params(r, 0, D, s.data(), m.data());
  const int bits = kv_code_bits(t), levels = (1 << bits) - 1;
  if (bits)
    for (int i = 0; i < bs; ++i)
      for (int c = 0; c < D; ++c) {
        const float x = rows[static_cast<size_t>(i) * D + c];
        if (x < m[c] - 0.5f * s[c] || x > m[c] + (levels + 0.5f) * s[c]) return false;
      }
  uint8_t* codes = block + kc_param_bytes(t, D);
  const size_t rb = kc_row_bytes(t, D);
  if (bits) std::memset(codes, 0, rb * bs);
  for (int i = 0; i < bs; ++i)
    for (int c = 0; c < D; ++c) {
      const float x = rows[static_cast<size_t>(i) * D + c];
      if (bits)
        set_code(codes + i * rb, c, bits, code_of(x, s[c], m[c], levels));
      else
        codes[i * rb + c] = fp32_to_e4m3(x - m[c]);
    }
  return true;
}

}  // namespace

void kv_quantize_row(KVType t, bool is_k, const float* x, uint8_t* block, int row, int kv_dim) {
  if (kv_grouped_by_channel(t, is_k)) throw InputError("kv_quantize_row: per-channel layouts are quantized a block at a time");
  uint8_t* d = block + row_stride(t, kv_dim) * row;
  switch (t) {
    case KVType::F32: std::memcpy(d, x, 4 * static_cast<size_t>(kv_dim)); return;
    case KVType::F16:
      for (int c = 0; c < kv_dim; ++c) put_u16(d + 2 * c, fp32_to_fp16(x[c]));
      return;
    case KVType::BF16:
      for (int c = 0; c < kv_dim; ++c) put_u16(d + 2 * c, kernels::fp32_to_bf16(x[c]));
      return;
    case KVType::FP8_E4M3:
      for (int c = 0; c < kv_dim; ++c) d[c] = fp32_to_e4m3(x[c]);
      return;
    case KVType::FP8_E5M2:
      for (int c = 0; c < kv_dim; ++c) d[c] = fp32_to_e5m2(x[c]);
      return;
    case KVType::INT8: {
      float amax = 0;
      for (int c = 0; c < kv_dim; ++c) amax = std::max(amax, std::fabs(x[c]));
      const float s = amax / 127.0f;
      std::memcpy(d, &s, 4);
      for (int c = 0; c < kv_dim; ++c)
        d[4 + c] = static_cast<uint8_t>(static_cast<int8_t>(s > 0 ? std::clamp(std::nearbyint(x[c] / s), -127.0f, 127.0f) : 0));
      return;
    }
    case KVType::INT4:
    case KVType::INT2: {
      const int bits = kv_code_bits(t), levels = (1 << bits) - 1, G = kv_group(kv_dim), ng = kv_dim / G;
      uint8_t* codes = d + 4 * ng;
      std::memset(codes, 0, packed_bytes(t, kv_dim));
      for (int g = 0; g < ng; ++g) {
        uint16_t sh, mh;
        minmax_params(x + g * G, G, 1, levels, &sh, &mh);
        put_u16(d + 4 * g, sh);
        put_u16(d + 4 * g + 2, mh);
        const float s = fp16_to_fp32(sh), m = fp16_to_fp32(mh);
        for (int c = g * G; c < (g + 1) * G; ++c) set_code(codes, c, bits, code_of(x[c], s, m, levels));
      }
      return;
    }
    case KVType::INT4C:
    case KVType::INT2C: {
      // value = s * (code + z): a log-scale and an integer zero point, 16 bits per group.
      const int bits = kv_code_bits(t), levels = (1 << bits) - 1, G = kv_group(kv_dim), ng = kv_dim / G;
      uint8_t* codes = d + 2 * ng;
      std::memset(codes, 0, packed_bytes(t, kv_dim));
      for (int g = 0; g < ng; ++g) {
        float mn = x[g * G], mx = x[g * G];
        for (int c = g * G + 1; c < (g + 1) * G; ++c) mn = std::min(mn, x[c]), mx = std::max(mx, x[c]);
        // z in [-128, 127] needs s >= -mn / 128 and s >= mx / (127 + levels).
        uint8_t e = log_scale_up(std::max({(mx - mn) / levels, -mn / 128.0f, mx / (127.0f + levels)}));
        int z = 0;
        for (; e; ++e) {
          const float s = log_scales()[e];
          z = std::clamp(static_cast<int>(std::floor(mn / s)), -128, 127);
          if (s * static_cast<float>(z + levels) >= mx || e == 255) break;
        }
        d[2 * g] = e;
        d[2 * g + 1] = static_cast<uint8_t>(static_cast<int8_t>(z));
        const float s = log_scales()[e], m = s * static_cast<float>(z);
        for (int c = g * G; c < (g + 1) * G; ++c) set_code(codes, c, bits, code_of(x[c], s, m, levels));
      }
      return;
    }
    case KVType::FP8_E4M3C:
      for (int c = 0; c < kv_dim; ++c) d[c] = fp32_to_e4m3(x[c]);
      return;
    case KVType::INT4CH:
    case KVType::INT2CH: return;  // per-channel for K and V: refused above
  }
}

void kv_quantize_block(KVType t, const float* rows, uint8_t* block, int kv_dim, int block_size, bool reuse) {
  if (!kv_grouped_by_channel(t, true)) throw InputError("kv_quantize_block: " + std::string(kv_type_name(t)) + " is not quantized per channel");
  if (reuse && requantize_with_stored_params(t, rows, block, kv_dim, block_size)) return;
  if (t == KVType::FP8_E4M3C) return quantize_block_fp8c(rows, block, kv_dim, block_size);
  if (kv_compact(t)) return quantize_block_compact(t, rows, block, kv_dim, block_size);
  const int bits = kv_code_bits(t), levels = (1 << bits) - 1;
  const size_t pb = packed_bytes(t, kv_dim);
  uint8_t* codes = block + 4 * static_cast<size_t>(kv_dim);
  std::memset(codes, 0, pb * block_size);
  for (int c = 0; c < kv_dim; ++c) {
    uint16_t sh, mh;
    minmax_params(rows + c, block_size, kv_dim, levels, &sh, &mh);
    put_u16(block + 2 * c, sh);
    put_u16(block + 2 * (kv_dim + c), mh);
    const float s = fp16_to_fp32(sh), m = fp16_to_fp32(mh);
    for (int i = 0; i < block_size; ++i)
      set_code(codes + i * pb, c, bits, code_of(rows[static_cast<size_t>(i) * kv_dim + c], s, m, levels));
  }
}

void kv_dequantize_row(const KVBlockRef& b, int row, float* y) {
  const int D = b.kv_dim;
  if (kv_grouped_by_channel(b.type, b.is_k)) {
    thread_local std::vector<float> s, m;
    s.resize(D), m.resize(D);
    kc_params(b, 0, D, s.data(), m.data());
    const uint8_t* codes = kc_codes(b, row);
    if (b.type == KVType::FP8_E4M3C) {
      for (int c = 0; c < D; ++c) y[c] = m[c] + e4m3_to_fp32(codes[c]);
      return;
    }
    const int bits = kv_code_bits(b.type);
    for (int c = 0; c < D; ++c) y[c] = m[c] + s[c] * static_cast<float>(get_code(codes, c, bits));
    return;
  }
  const uint8_t* d = b.data + row_stride(b.type, D) * row;
  switch (b.type) {
    case KVType::F32: std::memcpy(y, d, 4 * static_cast<size_t>(D)); return;
    case KVType::F16:
      for (int c = 0; c < D; ++c) y[c] = fp16_to_fp32(load_u16(d + 2 * c));
      return;
    case KVType::BF16:
      for (int c = 0; c < D; ++c) y[c] = kernels::bf16_to_fp32(load_u16(d + 2 * c));
      return;
    case KVType::FP8_E4M3:
    case KVType::FP8_E4M3C:
      for (int c = 0; c < D; ++c) y[c] = e4m3_to_fp32(d[c]);
      return;
    case KVType::FP8_E5M2:
      for (int c = 0; c < D; ++c) y[c] = e5m2_to_fp32(d[c]);
      return;
    case KVType::INT8: {
      const float s = load_f32(d);
      for (int c = 0; c < D; ++c) y[c] = s * static_cast<float>(static_cast<int8_t>(d[4 + c]));
      return;
    }
    case KVType::INT4:
    case KVType::INT2:
    case KVType::INT4C:
    case KVType::INT2C: {
      const int bits = kv_code_bits(b.type), G = kv_group(D);
      const uint8_t* codes = d + (row_stride(b.type, D) - packed_bytes(b.type, D));
      for (int c = 0; c < D; ++c) {
        float s, m;
        vg_params(b.type, d, c / G, &s, &m);
        y[c] = m + s * static_cast<float>(get_code(codes, c, bits));
      }
      return;
    }
    case KVType::INT4CH:
    case KVType::INT2CH: return;  // per-channel: handled above
  }
}

// ---- attention loops ----------------------------------------------------------------------------

namespace kv_ref {

// The reference dequantizes each row's head slice and runs the scalar F32 ops on it.
void kv_dot(const KVBlockRef& b, int n, int off, int hd, const float* q, float scale, float* scores) {
  thread_local std::vector<float> row;
  row.resize(b.kv_dim);
  for (int i = 0; i < n; ++i) {
    kv_dequantize_row(b, i, row.data());
    scores[i] = kernels::ref::dot_f32(q, row.data() + off, hd) * scale;
  }
}

void kv_axpy(const KVBlockRef& b, int n, int off, int hd, const float* p, float* out) {
  thread_local std::vector<float> row;
  row.resize(b.kv_dim);
  for (int i = 0; i < n; ++i) {
    kv_dequantize_row(b, i, row.data());
    kernels::ref::axpy(p[i], row.data() + off, out, hd);
  }
}

void kv_dot_group(const KVBlockRef& b, int n, int off, int hd, const float* q, int group, float scale, float* scores,
                  size_t stride) {
  for (int g = 0; g < group; ++g) kv_ref::kv_dot(b, n, off, hd, q + static_cast<size_t>(g) * hd, scale, scores + g * stride);
}

void kv_axpy_group(const KVBlockRef& b, int n, int off, int hd, const float* p, size_t stride, int group, float* out) {
  for (int g = 0; g < group; ++g) kv_ref::kv_axpy(b, n, off, hd, p + g * stride, out + static_cast<size_t>(g) * hd);
}

}  // namespace kv_ref

void kv_dot_group(const KVBlockRef& b, int n, int off, int hd, const float* q, int group, float scale, float* scores,
                  size_t stride) {
  if (kernels::active_isa() != kernels::Isa::Scalar &&
      detail::kv_avx2::kv_dot_group(b, n, off, hd, q, group, scale, scores, stride))
    return;
  for (int g = 0; g < group; ++g) kv_dot(b, n, off, hd, q + static_cast<size_t>(g) * hd, scale, scores + g * stride);
}

void kv_axpy_group(const KVBlockRef& b, int n, int off, int hd, const float* p, size_t stride, int group, float* out) {
  if (kernels::active_isa() != kernels::Isa::Scalar &&
      detail::kv_avx2::kv_axpy_group(b, n, off, hd, p, stride, group, out))
    return;
  for (int g = 0; g < group; ++g) kv_axpy(b, n, off, hd, p + g * stride, out + static_cast<size_t>(g) * hd);
}

void kv_dot(const KVBlockRef& b, int n, int off, int hd, const float* q, float scale, float* scores) {
  if (kernels::active_isa() != kernels::Isa::Scalar && detail::kv_avx2::kv_dot_group(b, n, off, hd, q, 1, scale, scores, 0))
    return;
  kv_ref::kv_dot(b, n, off, hd, q, scale, scores);
}

void kv_axpy(const KVBlockRef& b, int n, int off, int hd, const float* p, float* out) {
  if (kernels::active_isa() != kernels::Isa::Scalar && detail::kv_avx2::kv_axpy_group(b, n, off, hd, p, 0, 1, out)) return;
  kv_ref::kv_axpy(b, n, off, hd, p, out);
}

}  // namespace kvscope
