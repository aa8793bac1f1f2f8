// Element types: names, block geometry, fp16/bf16 conversion and the scalar row (de)quantizers.
// Quantizers follow GGML's reference quantizers (quantize_row_*_ref) so files we write load in
// llama.cpp with identical values and vice versa.
#include "kernels/dtype.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

#include "kernels/ggml_types.h"
#include "kernels/legacy_quant.h"
#include "kernels/kquant.h"
#include "util/error.h"

namespace kvscope::kernels {

DType dtype_from_ggml(uint32_t id) {
  switch (id) {
    case 0: return DType::F32;
    case 1: return DType::F16;
    case 2: return DType::Q4_0;
    case 3: return DType::Q4_1;
    case 6: return DType::Q5_0;
    case 7: return DType::Q5_1;
    case 8: return DType::Q8_0;
    case 20: return DType::IQ4_NL;
    case 23: return DType::IQ4_XS;
    case 10: return DType::Q2_K;
    case 11: return DType::Q3_K;
    case 12: return DType::Q4_K;
    case 13: return DType::Q5_K;
    case 14: return DType::Q6_K;
    case 15: return DType::Q8_K;
    case 30: return DType::BF16;
    default:
      if (ggml_type_info(id)) throw FormatError(std::string("type ") + ggml_type_name(id) + " is not supported");
      throw FormatError("unknown type id " + std::to_string(id));
  }
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::Q4_0: return "q4_0";
    case DType::Q8_0: return "q8_0";
    case DType::Q4_1: return "q4_1";
    case DType::Q5_0: return "q5_0";
    case DType::Q5_1: return "q5_1";
    case DType::Q8_1: return "q8_1";
    case DType::Q8_K: return "q8_K";
    case DType::IQ4_NL: return "iq4_nl";
    case DType::IQ4_XS: return "iq4_xs";
    case DType::Q2_K: return "q2_K";
    case DType::Q3_K: return "q3_K";
    case DType::Q4_K: return "q4_K";
    case DType::Q5_K: return "q5_K";
    case DType::Q6_K: return "q6_K";
    case DType::BF16: return "bf16";
  }
  return "?";
}

DType dtype_from_name(const std::string& name) {
  std::string s = name;
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "f32") return DType::F32;
  if (s == "f16") return DType::F16;
  if (s == "bf16") return DType::BF16;
  if (s == "q8_0") return DType::Q8_0;
  if (s == "q4_0") return DType::Q4_0;
  if (s == "q4_1") return DType::Q4_1;
  if (s == "q5_0") return DType::Q5_0;
  if (s == "q5_1") return DType::Q5_1;
  if (s == "iq4_nl") return DType::IQ4_NL;
  if (s == "iq4_xs") return DType::IQ4_XS;
  if (s == "q2_k") return DType::Q2_K;
  if (s == "q3_k") return DType::Q3_K;
  if (s == "q4_k") return DType::Q4_K;
  if (s == "q5_k") return DType::Q5_K;
  if (s == "q6_k") return DType::Q6_K;
  throw InputError("unknown tensor type '" + name +
                   "' (expected f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl or "
                   "iq4_xs)");
}

int64_t block_size(DType t) {
  switch (t) {
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_1:
    case DType::IQ4_NL: return 32;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::Q8_K:
    case DType::IQ4_XS: return 256;
    default: return 1;
  }
}

size_t block_bytes(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::F16:
    case DType::BF16: return 2;
    case DType::Q8_0: return sizeof(BlockQ8_0);
    case DType::Q4_0: return sizeof(BlockQ4_0);
    case DType::Q4_K: return sizeof(BlockQ4_K);
    case DType::Q6_K: return sizeof(BlockQ6_K);
    case DType::Q4_1: return sizeof(BlockQ4_1);
    case DType::Q5_0: return sizeof(BlockQ5_0);
    case DType::Q5_1: return sizeof(BlockQ5_1);
    case DType::Q8_1: return sizeof(BlockQ8_1);
    case DType::Q8_K: return sizeof(BlockQ8_K);
    case DType::IQ4_NL: return sizeof(BlockIQ4_NL);
    case DType::IQ4_XS: return sizeof(BlockIQ4_XS);
    case DType::Q2_K: return sizeof(BlockQ2_K);
    case DType::Q3_K: return sizeof(BlockQ3_K);
    case DType::Q5_K: return sizeof(BlockQ5_K);
  }
  return 0;
}

bool is_kquant(DType t) {
  return t == DType::Q2_K || t == DType::Q3_K || t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K;
}

size_t row_bytes(DType t, int64_t n) {
  const int64_t bs = block_size(t);
  if (n < 0 || n % bs != 0)
    throw FormatError("row of " + std::to_string(n) + " elements is not a multiple of the " +
                      dtype_name(t) + " block size " + std::to_string(bs));
  return static_cast<size_t>(n / bs) * block_bytes(t);
}

// ---- fp16 / bf16 -------------------------------------------------------------------------------

static inline uint32_t f2u(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static inline float u2f(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return u2f(sign | 0x7f800000u | (mant << 13));  // inf / nan (payload kept)
  if (exp != 0) return u2f(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return u2f(sign);
  // Subnormal: value = mant * 2^-24, exactly representable in fp32.
  const float v = static_cast<float>(mant) * 5.9604644775390625e-08f;
  return sign ? -v : v;
}

uint16_t fp32_to_fp16(float f) {
  const uint32_t u = f2u(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // quiet nan
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65536: inf
  if (a < 0x38800000u) {
    // Result is an fp16 subnormal (or zero): round a * 2^24 to an integer, ties to even.
    if (a < 0x33000000u) return sign;  // < 2^-25: rounds to zero (2^-25 itself is a tie -> 0)
    const uint32_t e = a >> 23;        // 102..112
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;    // value = m * 2^(e-150); in units of 2^-24: m >> (126-e)
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return static_cast<uint16_t>(sign | q);  // q may become 0x400 = smallest normal: still right
  }
  // Normal range: rebias exponent, round 13 dropped bits to nearest even (carry may bump exponent).
  uint32_t r = a - 0x38000000u;  // exponent bias 127 -> 15
  r += 0xfffu + ((r >> 13) & 1u);
  return static_cast<uint16_t>(sign | (r >> 13));
}

float bf16_to_fp32(uint16_t h) { return u2f(static_cast<uint32_t>(h) << 16); }

uint16_t fp32_to_bf16(float f) {
  const uint32_t u = f2u(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 64u);  // quiet nan
  return static_cast<uint16_t>((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
}

// ---- rows ----------------------------------------------------------------------------------------

static void check_blocks(DType t, int64_t n) {
  if (n < 0 || n % block_size(t) != 0)
    throw InputError(std::string("row length ") + std::to_string(n) + " is not a multiple of the " +
                     dtype_name(t) + " block size");
}

void quantize_row(DType t, const float* x, void* dst, int64_t n) {
  check_blocks(t, n);
  switch (t) {
    case DType::F32: std::memcpy(dst, x, static_cast<size_t>(n) * 4); return;
    case DType::F16: {
      auto* o = static_cast<uint8_t*>(dst);
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_fp16(x[i]);
        std::memcpy(o + 2 * i, &h, 2);
      }
      return;
    }
    case DType::BF16: {
      auto* o = static_cast<uint8_t*>(dst);
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_bf16(x[i]);
        std::memcpy(o + 2 * i, &h, 2);
      }
      return;
    }
    case DType::Q8_0: {
      auto* o = static_cast<uint8_t*>(dst);
      for (int64_t b = 0; b < n / 32; ++b) {
        const float* xb = x + b * 32;
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(xb[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        BlockQ8_0 blk;
        blk.d = fp32_to_fp16(d);
        for (int j = 0; j < 32; ++j) blk.qs[j] = static_cast<int8_t>(std::roundf(xb[j] * id));
        std::memcpy(o + b * sizeof(BlockQ8_0), &blk, sizeof blk);
      }
      return;
    }
    case DType::Q4_0: {
      auto* o = static_cast<uint8_t*>(dst);
      for (int64_t b = 0; b < n / 32; ++b) {
        const float* xb = x + b * 32;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < 32; ++j) {
          if (amax < std::fabs(xb[j])) {
            amax = std::fabs(xb[j]);
            max = xb[j];
          }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        BlockQ4_0 blk;
        blk.d = fp32_to_fp16(d);
        for (int j = 0; j < 16; ++j) {
          const int q0 = std::min(15, static_cast<int>(static_cast<int8_t>(xb[j] * id + 8.5f)));
          const int q1 = std::min(15, static_cast<int>(static_cast<int8_t>(xb[j + 16] * id + 8.5f)));
          blk.qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
        std::memcpy(o + b * sizeof(BlockQ4_0), &blk, sizeof blk);
      }
      return;
    }
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::Q8_K: return kquant::quantize_row(t, x, dst, n);
    default:
      if (legacy::quantize_row(t, x, dst, n)) return;
      throw InputError(std::string("quantize_row: unsupported target type ") + dtype_name(t));
  }
}

static inline void scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

void dequantize_row(DType t, const void* src, float* y, int64_t n) {
  check_blocks(t, n);
  const auto* s = static_cast<const uint8_t*>(src);
  switch (t) {
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q5_K:
    case DType::Q8_K: return kquant::dequantize_row(t, src, y, n);
    case DType::F32: std::memcpy(y, src, static_cast<size_t>(n) * 4); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, s + 2 * i, 2);
        y[i] = fp16_to_fp32(h);
      }
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, s + 2 * i, 2);
        y[i] = bf16_to_fp32(h);
      }
      return;
    case DType::Q8_0:
      for (int64_t b = 0; b < n / 32; ++b) {
        BlockQ8_0 blk;
        std::memcpy(&blk, s + b * sizeof blk, sizeof blk);
        const float d = fp16_to_fp32(blk.d);
        for (int j = 0; j < 32; ++j) y[b * 32 + j] = blk.qs[j] * d;
      }
      return;
    case DType::Q4_0:
      for (int64_t b = 0; b < n / 32; ++b) {
        BlockQ4_0 blk;
        std::memcpy(&blk, s + b * sizeof blk, sizeof blk);
        const float d = fp16_to_fp32(blk.d);
        for (int j = 0; j < 16; ++j) {
          y[b * 32 + j] = ((blk.qs[j] & 0xF) - 8) * d;
          y[b * 32 + j + 16] = ((blk.qs[j] >> 4) - 8) * d;
        }
      }
      return;
    case DType::Q4_K:
      for (int64_t b = 0; b < n / 256; ++b) {
        BlockQ4_K blk;
        std::memcpy(&blk, s + b * sizeof blk, sizeof blk);
        const float d = fp16_to_fp32(blk.d), dmin = fp16_to_fp32(blk.dmin);
        const uint8_t* q = blk.qs;
        float* o = y + b * 256;
        for (int j = 0, is = 0; j < 256; j += 64, is += 2, q += 32) {
          uint8_t sc, m;
          scale_min_k4(is, blk.scales, &sc, &m);
          const float d1 = d * sc, m1 = dmin * m;
          scale_min_k4(is + 1, blk.scales, &sc, &m);
          const float d2 = d * sc, m2 = dmin * m;
          for (int l = 0; l < 32; ++l) *o++ = d1 * (q[l] & 0xF) - m1;
          for (int l = 0; l < 32; ++l) *o++ = d2 * (q[l] >> 4) - m2;
        }
      }
      return;
    case DType::Q6_K:
      for (int64_t b = 0; b < n / 256; ++b) {
        BlockQ6_K blk;
        std::memcpy(&blk, s + b * sizeof blk, sizeof blk);
        const float d = fp16_to_fp32(blk.d);
        const uint8_t* ql = blk.ql;
        const uint8_t* qh = blk.qh;
        const int8_t* sc = blk.scales;
        float* o = y + b * 256;
        for (int h = 0; h < 256; h += 128, o += 128, ql += 64, qh += 32, sc += 8) {
          for (int l = 0; l < 32; ++l) {
            const int is = l / 16;
            const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            o[l] = d * sc[is] * q1;
            o[l + 32] = d * sc[is + 2] * q2;
            o[l + 64] = d * sc[is + 4] * q3;
            o[l + 96] = d * sc[is + 6] * q4;
          }
        }
      }
      return;
    default:
      if (legacy::dequantize_row(t, src, y, n)) return;
      throw InputError(std::string("dequantize_row: unsupported type ") + dtype_name(t));
  }
}

}  // namespace kvscope::kernels
