// Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS: quantizers (written from the block format descriptions in
// dtype.h), dequantizers, the Q8_1/Q8_K activation converters and the scalar reference rows.
#include "kernels/legacy_quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace kvscope::kernels::legacy {

bool handles(DType t) {
  return t == DType::Q4_1 || t == DType::Q5_0 || t == DType::Q5_1 || t == DType::IQ4_NL || t == DType::IQ4_XS;
}

namespace {

inline uint16_t ld16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline uint32_t ld32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline float h2f(const uint8_t* p) { return fp16_to_fp32(ld16(p)); }
inline float round_fp16(float x) { return fp16_to_fp32(fp32_to_fp16(x)); }

// Largest-magnitude element (its sign kept; the first one on ties) and the minimum / maximum.
struct Range {
  float amax = 0.0f, signed_max = 0.0f, lo = 0.0f, hi = 0.0f;
};
Range range_of(const float* x, int n) {
  Range r;
  r.lo = r.hi = x[0];
  for (int j = 0; j < n; ++j) {
    if (std::fabs(x[j]) > r.amax) {
      r.amax = std::fabs(x[j]);
      r.signed_max = x[j];
    }
    r.lo = std::min(r.lo, x[j]);
    r.hi = std::max(r.hi, x[j]);
  }
  return r;
}

// Nibble packing shared by Q4_1/Q5_x/IQ4_NL: element j < 16 in the low nibble of byte j, element
// 16 + j in its high nibble.
void pack_nibbles(const uint8_t* q, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
}
void unpack_nibbles(const uint8_t* qs, uint8_t* q) {
  for (int j = 0; j < 16; ++j) {
    q[j] = qs[j] & 0xF;
    q[j + 16] = qs[j] >> 4;
  }
}

// Asymmetric 4/5-bit block: codes 0..qmax over [min, max]; value = q * d + m.
void quant_affine(const float* x, int qmax, float* d_out, float* m_out, uint8_t* q) {
  const Range r = range_of(x, 32);
  const float d = (r.hi - r.lo) / static_cast<float>(qmax);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < 32; ++j)
    q[j] = static_cast<uint8_t>(std::min(qmax, static_cast<int>((x[j] - r.lo) * id + 0.5f)));
  *d_out = d;
  *m_out = r.lo;
}

int nearest_iq4(float v) {
  int best = 0;
  float be = std::fabs(v - kIQ4Values[0]);
  for (int i = 1; i < 16; ++i) {
    const float e = std::fabs(v - kIQ4Values[i]);
    if (e < be) be = e, best = i;
  }
  return best;
}

// Codes and scale of n elements on the IQ4 codebook: tries scales that put the largest-magnitude
// element near either end of the codebook, refits each by least squares for its codes and keeps the
// one with the smallest squared error. Returns the scale (0 for an all-zero block).
float quant_iq4_block(const float* x, int n, uint8_t* q) {
  const Range r = range_of(x, n);
  if (r.amax == 0.0f) {
    for (int j = 0; j < n; ++j) q[j] = 8;  // codebook value 1, times scale 0
    return 0.0f;
  }
  float best_d = 0.0f, best_err = INFINITY;
  uint8_t cand[256];
  for (float end : {-127.0f, 113.0f}) {
    for (int t = -6; t <= 6; ++t) {
      const float d0 = r.signed_max / (end * (1.0f + 0.015f * static_cast<float>(t)));
      const float id = 1.0f / d0;
      double sxv = 0, svv = 0;
      for (int j = 0; j < n; ++j) {
        cand[j] = static_cast<uint8_t>(nearest_iq4(x[j] * id));
        const double v = kIQ4Values[cand[j]];
        sxv += x[j] * v;
        svv += v * v;
      }
      const float d = svv > 0 ? static_cast<float>(sxv / svv) : d0;
      double err = 0;
      for (int j = 0; j < n; ++j) {
        const double e = x[j] - d * kIQ4Values[cand[j]];
        err += e * e;
      }
      if (err < best_err) {
        best_err = static_cast<float>(err);
        best_d = d;
        std::memcpy(q, cand, static_cast<size_t>(n));
      }
    }
  }
  return best_d;
}

void requant_iq4(const float* x, int n, float d, uint8_t* q) {
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < n; ++j) q[j] = static_cast<uint8_t>(d != 0.0f ? nearest_iq4(x[j] * id) : 8);
}

void quant_q8_k_row(const float* x, BlockQ8_K* y, int64_t nb);

}  // namespace

bool quantize_row(DType t, const float* x, void* dst, int64_t n) {
  auto* o = static_cast<uint8_t*>(dst);
  uint8_t q[32];
  switch (t) {
    case DType::Q4_1:
    case DType::Q5_1:
      for (int64_t b = 0; b < n / 32; ++b) {
        float d, m;
        quant_affine(x + b * 32, t == DType::Q4_1 ? 15 : 31, &d, &m, q);
        const uint16_t dh = fp32_to_fp16(d), mh = fp32_to_fp16(m);
        if (t == DType::Q4_1) {
          BlockQ4_1 blk;
          blk.d = dh, blk.m = mh;
          pack_nibbles(q, blk.qs);
          std::memcpy(o + b * sizeof blk, &blk, sizeof blk);
        } else {
          BlockQ5_1 blk;
          blk.d = dh, blk.m = mh;
          uint32_t qh = 0;
          for (int j = 0; j < 32; ++j) qh |= static_cast<uint32_t>(q[j] >> 4) << j;
          std::memcpy(blk.qh, &qh, 4);
          pack_nibbles(q, blk.qs);
          std::memcpy(o + b * sizeof blk, &blk, sizeof blk);
        }
      }
      return true;
    case DType::Q5_0:
      for (int64_t b = 0; b < n / 32; ++b) {
        // Symmetric: the largest-magnitude element maps to code 0 (value -16 * d).
        const float* xb = x + b * 32;
        const Range r = range_of(xb, 32);
        const float d = r.signed_max / -16.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        uint32_t qh = 0;
        for (int j = 0; j < 32; ++j) {
          q[j] = static_cast<uint8_t>(std::clamp(static_cast<int>(std::floor(xb[j] * id + 16.5f)), 0, 31));
          qh |= static_cast<uint32_t>(q[j] >> 4) << j;
        }
        BlockQ5_0 blk;
        blk.d = fp32_to_fp16(d);
        std::memcpy(blk.qh, &qh, 4);
        pack_nibbles(q, blk.qs);
        std::memcpy(o + b * sizeof blk, &blk, sizeof blk);
      }
      return true;
    case DType::IQ4_NL:
      for (int64_t b = 0; b < n / 32; ++b) {
        BlockIQ4_NL blk;
        const float d = quant_iq4_block(x + b * 32, 32, q);
        blk.d = fp32_to_fp16(d);
        requant_iq4(x + b * 32, 32, fp16_to_fp32(blk.d), q);  // codes for the scale as stored
        pack_nibbles(q, blk.qs);
        std::memcpy(o + b * sizeof blk, &blk, sizeof blk);
      }
      return true;
    case DType::IQ4_XS:
      for (int64_t b = 0; b < n / 256; ++b) {
        const float* xb = x + b * 256;
        float sc[8];
        float smax = 0.0f;
        for (int j = 0; j < 8; ++j) {
          sc[j] = quant_iq4_block(xb + 32 * j, 32, q);
          if (std::fabs(sc[j]) > std::fabs(smax)) smax = sc[j];
        }
        // Sub-block scales are 6-bit integers l - 32 in [-32, 31] times the super-block's d.
        BlockIQ4_XS blk{};
        blk.d = fp32_to_fp16(smax / -32.0f);
        const float d = fp16_to_fp32(blk.d);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int j = 0; j < 8; ++j) {
          const int l = std::clamp(static_cast<int>(std::lround(sc[j] * id)), -32, 31);
          const int ls = l + 32;
          blk.scales_l[j / 2] |= static_cast<uint8_t>((ls & 0xF) << (4 * (j % 2)));
          blk.scales_h |= static_cast<uint16_t>((ls >> 4) << (2 * j));
          requant_iq4(xb + 32 * j, 32, d * static_cast<float>(l), q);
          pack_nibbles(q, blk.qs + 16 * j);
        }
        std::memcpy(o + b * sizeof blk, &blk, sizeof blk);
      }
      return true;
    case DType::Q8_1:
      for (int64_t b = 0; b < n / 32; ++b) {
        BlockQ8_1 blk;
        float d;
        int32_t s;
        float sd;
        quant_q8_1(x + b * 32, blk.qs, &d, &s, &sd, 1, false);
        blk.d = fp32_to_fp16(d);
        blk.s = fp32_to_fp16(sd);
        std::memcpy(o + b * sizeof blk, &blk, sizeof blk);
      }
      return true;
    case DType::Q8_K: {
      std::vector<BlockQ8_K> blks(static_cast<size_t>(n / 256));
      quant_q8_k_row(x, blks.data(), n / 256);
      std::memcpy(o, blks.data(), blks.size() * sizeof(BlockQ8_K));
      return true;
    }
    default: return false;
  }
}

bool dequantize_row(DType t, const void* src, float* y, int64_t n) {
  const auto* s = static_cast<const uint8_t*>(src);
  uint8_t q[32];
  switch (t) {
    case DType::Q4_1:
    case DType::Q5_1:
    case DType::Q5_0:
    case DType::IQ4_NL: {
      const size_t bb = block_bytes(t);
      for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = s + b * bb;
        const float d = h2f(blk);
        float* o = y + b * 32;
        if (t == DType::IQ4_NL) {
          unpack_nibbles(blk + 2, q);
          for (int j = 0; j < 32; ++j) o[j] = d * kIQ4Values[q[j]];
        } else if (t == DType::Q4_1) {
          const float m = h2f(blk + 2);
          unpack_nibbles(blk + 4, q);
          for (int j = 0; j < 32; ++j) o[j] = q[j] * d + m;
        } else {
          const bool one = t == DType::Q5_1;
          const uint8_t* p = blk + (one ? 4 : 2);
          const uint32_t qh = ld32(p);
          unpack_nibbles(p + 4, q);
          const float m = one ? h2f(blk + 2) : 0.0f;
          for (int j = 0; j < 32; ++j) {
            const int v = q[j] | static_cast<int>(((qh >> j) & 1) << 4);
            o[j] = one ? v * d + m : (v - 16) * d;
          }
        }
      }
      return true;
    }
    case DType::IQ4_XS:
      for (int64_t b = 0; b < n / 256; ++b) {
        const uint8_t* blk = s + b * sizeof(BlockIQ4_XS);
        const float d = h2f(blk);
        for (int j = 0; j < 8; ++j) {
          const float dl = d * static_cast<float>(iq4xs_scale(blk, j));
          unpack_nibbles(blk + 8 + 16 * j, q);
          for (int i = 0; i < 32; ++i) y[b * 256 + 32 * j + i] = dl * kIQ4Values[q[i]];
        }
      }
      return true;
    case DType::Q8_1:
      for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = s + b * sizeof(BlockQ8_1);
        const float d = h2f(blk);
        for (int j = 0; j < 32; ++j) y[b * 32 + j] = d * static_cast<int8_t>(blk[4 + j]);
      }
      return true;
    case DType::Q8_K:
      for (int64_t b = 0; b < n / 256; ++b) {
        BlockQ8_K blk;
        std::memcpy(&blk, s + b * sizeof blk, sizeof blk);
        for (int j = 0; j < 256; ++j) y[b * 256 + j] = blk.d * blk.qs[j];
      }
      return true;
    default: return false;
  }
}

// ---- activation converters ----------------------------------------------------------------------

void quant_q8_1(const float* x, int8_t* q, float* d, int32_t* s, float* sd, int64_t nb, bool simd) {
  if (simd)
    detail::avx2::quant_q8(x, q, d, s, nb);
  else
    detail::scalar::quant_q8(x, q, d, s, nb);
  for (int64_t b = 0; b < nb; ++b) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
    sd[b] = round_fp16(amax / 127.0f * static_cast<float>(s[b]));
  }
}

namespace {
void quant_q8_k_row(const float* x, BlockQ8_K* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) quant_q8_k(x + b * 256, y[b].qs, &y[b].d, y[b].bsums, 1);
}
}  // namespace

void quant_q8_k(const float* x, int8_t* q, float* d, int16_t* bsums, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = x + b * 256;
    int8_t* qb = q + b * 256;
    const Range r = range_of(xb, 256);
    if (r.amax == 0.0f) {
      d[b] = 0.0f;
      std::memset(qb, 0, 256);
      std::fill(bsums + b * 16, bsums + b * 16 + 16, int16_t{0});
      continue;
    }
    const float iscale = -127.0f / r.signed_max;
    for (int j = 0; j < 256; ++j) qb[j] = static_cast<int8_t>(std::min(127, static_cast<int>(std::nearbyintf(iscale * xb[j]))));
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += qb[16 * g + j];
      bsums[b * 16 + g] = static_cast<int16_t>(sum);
    }
    d[b] = 1.0f / iscale;
  }
}

// ---- scalar reference rows ----------------------------------------------------------------------

namespace scalar {

void matmul_rows(const detail::MatArgs& a, int64_t n0, int64_t n1) {
  const DType t = a.wt;
  const size_t bb = block_bytes(t);
  uint8_t q[32];
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* w = a.w + static_cast<size_t>(n) * a.wstride;
    for (int64_t m = 0; m < a.M; ++m) {
      const int8_t* xq = a.x.q + m * a.x.ldq;
      const float* xd = a.x.d + m * a.x.nb;
      float sum = 0.0f;
      if (t == DType::IQ4_XS) {
        for (int64_t b = 0; b < a.x.nb; ++b) {
          const uint8_t* blk = w + b * bb;
          int32_t si = 0;
          for (int j = 0; j < 8; ++j) {
            unpack_nibbles(blk + 8 + 16 * j, q);
            int32_t sj = 0;
            for (int i = 0; i < 32; ++i) sj += kIQ4Values[q[i]] * xq[b * 256 + 32 * j + i];
            si += iq4xs_scale(blk, j) * sj;
          }
          sum += static_cast<float>(si) * (h2f(blk) * xd[b]);
        }
        a.y[m * a.ldy + n] = sum;
        continue;
      }
      for (int64_t b = 0; b < a.x.nb; ++b) {
        const uint8_t* blk = w + b * bb;
        const int8_t* qx = xq + b * 32;
        const float dw = h2f(blk);
        int32_t si = 0;
        switch (t) {
          case DType::Q4_1:
            unpack_nibbles(blk + 4, q);
            for (int j = 0; j < 32; ++j) si += q[j] * qx[j];
            sum += static_cast<float>(si) * (dw * xd[b]) + h2f(blk + 2) * a.x.sd[m * a.x.nb + b];
            break;
          case DType::Q5_1:
          case DType::Q5_0: {
            const bool one = t == DType::Q5_1;
            const uint8_t* p = blk + (one ? 4 : 2);
            const uint32_t qh = ld32(p);
            unpack_nibbles(p + 4, q);
            for (int j = 0; j < 32; ++j) si += (q[j] | static_cast<int>(((qh >> j) & 1) << 4)) * qx[j];
            if (one) {
              sum += static_cast<float>(si) * (dw * xd[b]) + h2f(blk + 2) * a.x.sd[m * a.x.nb + b];
            } else {
              si -= 16 * a.x.s[m * a.x.nb + b];
              sum += static_cast<float>(si) * (dw * xd[b]);
            }
            break;
          }
          default:  // IQ4_NL
            unpack_nibbles(blk + 2, q);
            for (int j = 0; j < 32; ++j) si += kIQ4Values[q[j]] * qx[j];
            sum += static_cast<float>(si) * (dw * xd[b]);
            break;
        }
      }
      a.y[m * a.ldy + n] = sum;
    }
  }
}

}  // namespace scalar

}  // namespace kvscope::kernels::legacy
