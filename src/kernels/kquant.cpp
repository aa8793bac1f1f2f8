// K-quant row quantizers, dequantizers and the scalar reference dot product (see kquant.h).
// The quantizers are our own: each sub-block gets a least-squares scale (and min) chosen among a
// few candidate roundings, then the sub-block scales are themselves quantized against the fp16
// super-block scale and the codes are recomputed with the scales as stored.
#include "kernels/kquant.h"

#include <algorithm>
#include <cstddef>
#include <cmath>
#include <cstring>
#include <limits>

#include "util/error.h"

namespace kvscope::kernels::kquant {

namespace {

inline uint16_t ld16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline float h2f(const uint8_t* p) { return fp16_to_fp32(ld16(p)); }
inline float round_h(float f) { return fp16_to_fp32(fp32_to_fp16(f)); }
inline int iround(float v) { return static_cast<int>(std::nearbyintf(v)); }

// x ~= a * q - m with q in [0, nmax], a >= 0, m >= 0 (the K-quant "min" is subtracted).
void fit_asym(const float* x, int n, int nmax, float* a_out, float* m_out) {
  float lo = 0.0f, hi = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  if (!(hi > lo)) {  // all equal and <= 0 (or empty): represent exactly through the min
    *a_out = 0.0f;
    *m_out = -lo;
    return;
  }
  float best_err = std::numeric_limits<float>::infinity(), best_a = (hi - lo) / nmax, best_m = -lo;
  int q[32];
  for (int step = -4; step <= 4; ++step) {
    const float iscale = (static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / (hi - lo);
    double sq = 0, sqq = 0, sx = 0, sqx = 0;
    for (int i = 0; i < n; ++i) {
      q[i] = std::clamp(iround(iscale * (x[i] - lo)), 0, nmax);
      sq += q[i];
      sqq += static_cast<double>(q[i]) * q[i];
      sx += x[i];
      sqx += static_cast<double>(q[i]) * x[i];
    }
    // Least squares for x = a q + b, b <= 0.
    double a = 0, b = 0;
    const double det = n * sqq - sq * sq;
    if (det > 0) {
      a = (n * sqx - sq * sx) / det;
      b = (sqq * sx - sq * sqx) / det;
    }
    if (b > 0 || det <= 0) {
      b = 0;
      a = sqq > 0 ? sqx / sqq : 0;
    }
    if (a < 0) continue;
    double err = 0;
    for (int i = 0; i < n; ++i) {
      const double e = a * q[i] + b - x[i];
      err += e * e;
    }
    if (err < best_err) {
      best_err = static_cast<float>(err);
      best_a = static_cast<float>(a);
      best_m = static_cast<float>(-b);
    }
  }
  *a_out = best_a;
  *m_out = best_m;
}

// x ~= a * q with q in [qmin, qmax] (qmin = -qmax - 1); a may be negative so the element of largest
// magnitude can use the longer negative side.
float fit_sym(const float* x, int n, int qmin, int qmax) {
  float amax = 0.0f, vmax = 0.0f;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      vmax = x[i];
    }
  if (amax == 0.0f) return 0.0f;
  float best_err = std::numeric_limits<float>::infinity(), best_a = vmax / static_cast<float>(qmin);
  for (int step = -4; step <= 4; ++step) {
    const float iscale = (static_cast<float>(qmin) + 0.1f * static_cast<float>(step)) / vmax;
    double sqq = 0, sqx = 0;
    int q[16];
    for (int i = 0; i < n; ++i) {
      q[i] = std::clamp(iround(iscale * x[i]), qmin, qmax);
      sqq += static_cast<double>(q[i]) * q[i];
      sqx += static_cast<double>(q[i]) * x[i];
    }
    if (sqq <= 0) continue;
    const double a = sqx / sqq;
    double err = 0;
    for (int i = 0; i < n; ++i) {
      const double e = a * q[i] - x[i];
      err += e * e;
    }
    if (err < best_err) {
      best_err = static_cast<float>(err);
      best_a = static_cast<float>(a);
    }
  }
  return best_a;
}

// Codes for x ~= a * q - m, q clamped to [0, nmax] (0 where the effective scale is 0).
inline int code_asym(float x, float a, float m, int nmax) {
  if (a == 0.0f) return 0;
  return std::clamp(iround((x + m) / a), 0, nmax);
}
inline int code_sym(float x, float a, int qmin, int qmax) {
  if (a == 0.0f) return 0;
  return std::clamp(iround(x / a), qmin, qmax);
}

// Quantizes `ns` sub-block scales (>= 0) to [0, lmax] against one fp16 factor; returns the factor.
float quant_scales_u(const float* v, int ns, int lmax, int* l) {
  float mx = 0.0f;
  for (int j = 0; j < ns; ++j) mx = std::max(mx, v[j]);
  const float d = round_h(mx / static_cast<float>(lmax));
  for (int j = 0; j < ns; ++j) l[j] = d > 0.0f ? std::clamp(iround(v[j] / d), 0, lmax) : 0;
  return d;
}

// Q4_K and Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins.
void quant_q45k(const float* x, uint8_t* out, bool five) {
  const int nmax = five ? 31 : 15;
  float sc[8], mn[8];
  for (int j = 0; j < 8; ++j) fit_asym(x + 32 * j, 32, nmax, &sc[j], &mn[j]);
  int ls[8], lm[8];
  const float d = quant_scales_u(sc, 8, 63, ls), dmin = quant_scales_u(mn, 8, 63, lm);
  uint8_t scales[12];
  for (int j = 0; j < 4; ++j) {
    scales[j] = static_cast<uint8_t>(ls[j] | ((ls[j + 4] >> 4) << 6));
    scales[j + 4] = static_cast<uint8_t>(lm[j] | ((lm[j + 4] >> 4) << 6));
    scales[j + 8] = static_cast<uint8_t>((ls[j + 4] & 15) | ((lm[j + 4] & 15) << 4));
  }
  int q[256];
  for (int j = 0; j < 8; ++j) {
    const float a = d * static_cast<float>(ls[j]), m = dmin * static_cast<float>(lm[j]);
    for (int l = 0; l < 32; ++l) q[32 * j + l] = code_asym(x[32 * j + l], a, m, nmax);
  }
  const uint16_t hd = fp32_to_fp16(d), hm = fp32_to_fp16(dmin);
  if (!five) {
    BlockQ4_K b;
    b.d = hd;
    b.dmin = hm;
    std::memcpy(b.scales, scales, 12);
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) b.qs[32 * c + l] = static_cast<uint8_t>(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
    std::memcpy(out, &b, sizeof b);
  } else {
    BlockQ5_K b;
    b.d = hd;
    b.dmin = hm;
    std::memcpy(b.scales, scales, 12);
    std::memset(b.qh, 0, sizeof b.qh);
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) {
        const int lo = q[64 * c + l], hi = q[64 * c + 32 + l];
        b.qs[32 * c + l] = static_cast<uint8_t>((lo & 15) | ((hi & 15) << 4));
        b.qh[l] = static_cast<uint8_t>(b.qh[l] | ((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
      }
    std::memcpy(out, &b, sizeof b);
  }
}

// Q2_K: 16 sub-blocks of 16, 4-bit scales and mins, 2-bit codes.
void quant_q2k(const float* x, uint8_t* out) {
  float sc[16], mn[16];
  for (int j = 0; j < 16; ++j) fit_asym(x + 16 * j, 16, 3, &sc[j], &mn[j]);
  int ls[16], lm[16];
  const float d = quant_scales_u(sc, 16, 15, ls), dmin = quant_scales_u(mn, 16, 15, lm);
  BlockQ2_K b;
  b.d = fp32_to_fp16(d);
  b.dmin = fp32_to_fp16(dmin);
  std::memset(b.qs, 0, sizeof b.qs);
  for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<uint8_t>(ls[j] | (lm[j] << 4));
  for (int e = 0; e < 256; ++e) {
    const int j = e / 16;
    const int q = code_asym(x[e], d * static_cast<float>(ls[j]), dmin * static_cast<float>(lm[j]), 3);
    const int h = e / 128, jj = (e % 128) / 32, l = e % 32;
    b.qs[32 * h + l] = static_cast<uint8_t>(b.qs[32 * h + l] | (q << (2 * jj)));
  }
  std::memcpy(out, &b, sizeof b);
}

// Signed sub-block scales quantized to [-lim-1, lim] against one fp16 factor.
float quant_scales_s(const float* v, int ns, int lim, int* l) {
  float mx = 0.0f;
  for (int j = 0; j < ns; ++j) mx = std::max(mx, std::fabs(v[j]));
  const float d = round_h(mx / static_cast<float>(lim));
  for (int j = 0; j < ns; ++j) l[j] = d > 0.0f ? std::clamp(iround(v[j] / d), -lim - 1, lim) : 0;
  return d;
}

// Q3_K: 16 sub-blocks of 16, signed 6-bit scales, codes -4..3 stored as 2 low bits + a high bit.
void quant_q3k(const float* x, uint8_t* out) {
  float sc[16];
  for (int j = 0; j < 16; ++j) sc[j] = fit_sym(x + 16 * j, 16, -4, 3);
  int ls[16];
  const float d = quant_scales_s(sc, 16, 31, ls);
  BlockQ3_K b;
  b.d = fp32_to_fp16(d);
  std::memset(b.qs, 0, sizeof b.qs);
  std::memset(b.hmask, 0, sizeof b.hmask);
  std::memset(b.scales, 0, sizeof b.scales);
  for (int j = 0; j < 16; ++j) {
    const int u = ls[j] + 32;  // 0..63
    if (j < 8)
      b.scales[j] = static_cast<uint8_t>(b.scales[j] | (u & 15));
    else
      b.scales[j - 8] = static_cast<uint8_t>(b.scales[j - 8] | ((u & 15) << 4));
    b.scales[8 + j % 4] = static_cast<uint8_t>(b.scales[8 + j % 4] | ((u >> 4) << (2 * (j / 4))));
  }
  for (int e = 0; e < 256; ++e) {
    const int j = e / 16;
    const int u = code_sym(x[e], d * static_cast<float>(ls[j]), -4, 3) + 4;  // 0..7
    const int h = e / 128, jj = (e % 128) / 32, l = e % 32;
    b.qs[32 * h + l] = static_cast<uint8_t>(b.qs[32 * h + l] | ((u & 3) << (2 * jj)));
    if (u & 4) b.hmask[l] = static_cast<uint8_t>(b.hmask[l] | (1 << (4 * h + jj)));
  }
  std::memcpy(out, &b, sizeof b);
}

// Q6_K: 16 sub-blocks of 16, int8 scales, codes -32..31 stored as 4 low bits + 2 high bits.
void quant_q6k(const float* x, uint8_t* out) {
  float sc[16];
  for (int j = 0; j < 16; ++j) sc[j] = fit_sym(x + 16 * j, 16, -32, 31);
  int ls[16];
  const float d = quant_scales_s(sc, 16, 127, ls);
  BlockQ6_K b;
  b.d = fp32_to_fp16(d);
  for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<int8_t>(std::clamp(ls[j], -128, 127));
  int u[256];
  for (int e = 0; e < 256; ++e) u[e] = code_sym(x[e], d * static_cast<float>(b.scales[e / 16]), -32, 31) + 32;
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const int q1 = u[128 * h + l], q2 = u[128 * h + 32 + l], q3 = u[128 * h + 64 + l], q4 = u[128 * h + 96 + l];
      b.ql[64 * h + l] = static_cast<uint8_t>((q1 & 15) | ((q3 & 15) << 4));
      b.ql[64 * h + 32 + l] = static_cast<uint8_t>((q2 & 15) | ((q4 & 15) << 4));
      b.qh[32 * h + l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
    }
  std::memcpy(out, &b, sizeof b);
}

void quant_q8k_block(const float* x, int8_t* q, float* d, int16_t* bsums) {
  float amax = 0.0f, vmax = 0.0f;
  for (int j = 0; j < 256; ++j)
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      vmax = x[j];
    }
  if (amax == 0.0f) {
    *d = 0.0f;
    std::memset(q, 0, 256);
    std::memset(bsums, 0, 32);
    return;
  }
  const float iscale = -127.0f / vmax;
  for (int j = 0; j < 256; ++j) q[j] = static_cast<int8_t>(std::min(127, iround(iscale * x[j])));
  for (int g = 0; g < 16; ++g) {
    int s = 0;
    for (int l = 0; l < 16; ++l) s += q[16 * g + l];
    bsums[g] = static_cast<int16_t>(s);
  }
  *d = 1.0f / iscale;
}

inline void scale_min_k4(int j, const uint8_t* q, int* d, int* m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

}  // namespace

void quantize_act_q8k(const float* x, int8_t* q, float* d, int16_t* bsums, int64_t K) {
  for (int64_t b = 0; b < K / 256; ++b) quant_q8k_block(x + 256 * b, q + 256 * b, d + b, bsums + 16 * b);
}

void quantize_row(DType t, const float* x, void* dst, int64_t n) {
  auto* o = static_cast<uint8_t*>(dst);
  const size_t bb = block_bytes(t);
  for (int64_t b = 0; b < n / 256; ++b) {
    const float* xb = x + 256 * b;
    uint8_t* ob = o + bb * static_cast<size_t>(b);
    switch (t) {
      case DType::Q2_K: quant_q2k(xb, ob); break;
      case DType::Q3_K: quant_q3k(xb, ob); break;
      case DType::Q4_K: quant_q45k(xb, ob, false); break;
      case DType::Q5_K: quant_q45k(xb, ob, true); break;
      case DType::Q6_K: quant_q6k(xb, ob); break;
      case DType::Q8_K: {
        BlockQ8_K k;
        quant_q8k_block(xb, k.qs, &k.d, k.bsums);
        std::memcpy(ob, &k, sizeof k);
        break;
      }
      default: throw InputError(std::string("kquant::quantize_row: not a K-quant type: ") + dtype_name(t));
    }
  }
}

void block_scales(DType t, const uint8_t* blk, BlockScales& o) {
  switch (t) {
    case DType::Q2_K: {
      const uint8_t* sc = blk + offsetof(BlockQ2_K, scales);  // blocks may sit at any byte address
      for (int j = 0; j < 16; ++j) {
        o.s[j] = static_cast<int16_t>(sc[j] & 15);
        o.m[j] = static_cast<int16_t>(sc[j] >> 4);
      }
      o.D = h2f(blk + offsetof(BlockQ2_K, d));
      o.Dmin = h2f(blk + offsetof(BlockQ2_K, dmin));
      o.sym = false;
      return;
    }
    case DType::Q3_K: {
      const uint8_t* sc = blk + offsetof(BlockQ3_K, scales);
      for (int j = 0; j < 16; ++j) {
        const int lo = j < 8 ? sc[j] & 15 : sc[j - 8] >> 4;
        const int hi = (sc[8 + j % 4] >> (2 * (j / 4))) & 3;
        o.s[j] = static_cast<int16_t>((lo | (hi << 4)) - 32);
        o.m[j] = static_cast<int16_t>(4 * o.s[j]);
      }
      o.D = o.Dmin = h2f(blk + offsetof(BlockQ3_K, d));
      o.sym = true;
      return;
    }
    case DType::Q4_K:
    case DType::Q5_K: {
      const uint8_t* sc = blk + 4;
      for (int j = 0; j < 8; ++j) {
        int s, m;
        scale_min_k4(j, sc, &s, &m);
        o.s[2 * j] = o.s[2 * j + 1] = static_cast<int16_t>(s);
        o.m[2 * j] = o.m[2 * j + 1] = static_cast<int16_t>(m);
      }
      o.D = h2f(blk);
      o.Dmin = h2f(blk + 2);
      o.sym = false;
      return;
    }
    case DType::Q6_K: {
      const auto* sc = reinterpret_cast<const int8_t*>(blk + offsetof(BlockQ6_K, scales));
      for (int j = 0; j < 16; ++j) {
        o.s[j] = sc[j];
        o.m[j] = static_cast<int16_t>(32 * sc[j]);
      }
      o.D = o.Dmin = h2f(blk + offsetof(BlockQ6_K, d));
      o.sym = true;
      return;
    }
    default: throw InputError(std::string("kquant::block_scales: not a K-quant type: ") + dtype_name(t));
  }
}

void block_codes(DType t, const uint8_t* blk, uint8_t u[256]) {
  switch (t) {
    case DType::Q2_K:
    case DType::Q3_K: {
      const uint8_t* qs = blk + (t == DType::Q2_K ? offsetof(BlockQ2_K, qs) : offsetof(BlockQ3_K, qs));
      for (int e = 0; e < 256; ++e) {
        const int h = e / 128, j = (e % 128) / 32, l = e % 32;
        int v = (qs[32 * h + l] >> (2 * j)) & 3;
        if (t == DType::Q3_K) v |= ((blk[offsetof(BlockQ3_K, hmask) + l] >> (4 * h + j)) & 1) << 2;
        u[e] = static_cast<uint8_t>(v);
      }
      return;
    }
    case DType::Q4_K:
    case DType::Q5_K: {
      const bool five = t == DType::Q5_K;
      const uint8_t* qs = blk + (five ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs));
      const uint8_t* qh = blk + offsetof(BlockQ5_K, qh);
      for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) {
          int lo = qs[32 * c + l] & 15, hi = qs[32 * c + l] >> 4;
          if (five) {
            lo |= ((qh[l] >> (2 * c)) & 1) << 4;
            hi |= ((qh[l] >> (2 * c + 1)) & 1) << 4;
          }
          u[64 * c + l] = static_cast<uint8_t>(lo);
          u[64 * c + 32 + l] = static_cast<uint8_t>(hi);
        }
      return;
    }
    case DType::Q6_K: {
      const uint8_t* ql = blk + offsetof(BlockQ6_K, ql);
      const uint8_t* qh = blk + offsetof(BlockQ6_K, qh);
      for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 32; ++l) {
          const int a = ql[64 * h + l], b = ql[64 * h + 32 + l], c = qh[32 * h + l];
          u[128 * h + l] = static_cast<uint8_t>((a & 15) | ((c & 3) << 4));
          u[128 * h + 32 + l] = static_cast<uint8_t>((b & 15) | (((c >> 2) & 3) << 4));
          u[128 * h + 64 + l] = static_cast<uint8_t>((a >> 4) | (((c >> 4) & 3) << 4));
          u[128 * h + 96 + l] = static_cast<uint8_t>((b >> 4) | (((c >> 6) & 3) << 4));
        }
      return;
    }
    default: throw InputError(std::string("kquant::block_codes: not a K-quant type: ") + dtype_name(t));
  }
}

void dequantize_row(DType t, const void* src, float* y, int64_t n) {
  const auto* s = static_cast<const uint8_t*>(src);
  const size_t bb = block_bytes(t);
  for (int64_t b = 0; b < n / 256; ++b) {
    const uint8_t* blk = s + bb * static_cast<size_t>(b);
    float* o = y + 256 * b;
    if (t == DType::Q8_K) {
      BlockQ8_K k;
      std::memcpy(&k, blk, sizeof k);
      for (int j = 0; j < 256; ++j) o[j] = k.d * k.qs[j];
      continue;
    }
    BlockScales S;
    block_scales(t, blk, S);
    uint8_t u[256];
    block_codes(t, blk, u);
    const int bias = t == DType::Q3_K ? 4 : t == DType::Q6_K ? 32 : 0;
    for (int j = 0; j < 16; ++j) {
      const float dl = S.D * static_cast<float>(S.s[j]);
      const float ml = S.Dmin * static_cast<float>(S.m[j]);
      for (int l = 0; l < 16; ++l) {
        const int e = 16 * j + l;
        o[e] = S.sym ? dl * static_cast<float>(u[e] - bias) : dl * static_cast<float>(u[e]) - ml;
      }
    }
  }
}

float dot_ref(DType t, const uint8_t* w, const int8_t* q, const float* d, const int16_t* bsums, int64_t nb) {
  const size_t bb = block_bytes(t);
  float sum = 0.0f;
  uint8_t u[256];
  BlockScales S;
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = w + bb * static_cast<size_t>(b);
    block_scales(t, blk, S);
    block_codes(t, blk, u);
    const int8_t* qb = q + 256 * b;
    int32_t isum = 0, msum = 0;
    for (int j = 0; j < 16; ++j) {
      int32_t s = 0;
      for (int l = 0; l < 16; ++l) s += u[16 * j + l] * qb[16 * j + l];
      isum += S.s[j] * s;
      msum += S.m[j] * bsums[16 * b + j];
    }
    const float dd = d[b] * S.D;
    if (S.sym)
      sum += dd * static_cast<float>(isum - msum);
    else
      sum += dd * static_cast<float>(isum) - (d[b] * S.Dmin) * static_cast<float>(msum);
  }
  return sum;
}

}  // namespace kvscope::kernels::kquant
