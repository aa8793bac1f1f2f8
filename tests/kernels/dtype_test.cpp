// Element types: ids, geometry, fp16/bf16 exactness, quantizer round trips, K-quant layouts.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/kernels.h"
#include "util/error.h"

namespace dtype_test {

using namespace kvscope::kernels;

namespace {
uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
__attribute__((target("f16c"))) uint16_t hw_fp16(float f) { return _cvtss_sh(f, 0); }
bool have_f16c() { return __builtin_cpu_supports("f16c"); }
}  // namespace

TEST(DType, IdsNamesAndGeometry) {
  EXPECT_EQ(dtype_from_ggml(0), DType::F32);
  EXPECT_EQ(dtype_from_ggml(1), DType::F16);
  EXPECT_EQ(dtype_from_ggml(2), DType::Q4_0);
  EXPECT_EQ(dtype_from_ggml(8), DType::Q8_0);
  EXPECT_EQ(dtype_from_ggml(12), DType::Q4_K);
  EXPECT_EQ(dtype_from_ggml(14), DType::Q6_K);
  EXPECT_EQ(dtype_from_ggml(30), DType::BF16);
  // Types kvscope does not run are named as GGML names them; ids GGML never assigned say so.
  const std::pair<uint32_t, const char*> unsupported[] = {{9u, "Q8_1"}, {16u, "IQ2_XXS"}, {19u, "IQ1_S"},
                                                          {29u, "IQ1_M"}, {31u, "Q4_0_4_4"}, {39u, "MXFP4"}};
  for (const auto& [bad, name] : unsupported) {
    try {
      dtype_from_ggml(bad);
      ADD_FAILURE() << bad;
    } catch (const kvscope::FormatError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("type ") + name + " is not supported");
    }
  }
  try {
    dtype_from_ggml(1000u);
    ADD_FAILURE();
  } catch (const kvscope::FormatError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown type id 1000");
  }
  EXPECT_EQ(dtype_from_name("q8_0"), DType::Q8_0);
  EXPECT_EQ(dtype_from_name("bf16"), DType::BF16);
  EXPECT_EQ(dtype_from_name(dtype_name(DType::Q4_0)), DType::Q4_0);
  EXPECT_EQ(dtype_from_name("q5_1"), DType::Q5_1);
  EXPECT_THROW(dtype_from_name("q3_0"), kvscope::InputError);
  EXPECT_EQ(block_size(DType::F32), 1);
  EXPECT_EQ(block_size(DType::Q8_0), 32);
  EXPECT_EQ(block_size(DType::Q4_0), 32);
  EXPECT_EQ(block_size(DType::Q4_K), 256);
  EXPECT_EQ(block_size(DType::Q6_K), 256);
  EXPECT_EQ(row_bytes(DType::F32, 7), 28u);
  EXPECT_EQ(row_bytes(DType::BF16, 7), 14u);
  EXPECT_EQ(row_bytes(DType::Q8_0, 64), 68u);
  EXPECT_EQ(row_bytes(DType::Q4_0, 96), 54u);
  EXPECT_EQ(row_bytes(DType::Q4_K, 512), 288u);
  EXPECT_EQ(row_bytes(DType::Q6_K, 256), 210u);
  EXPECT_THROW(row_bytes(DType::Q8_0, 33), kvscope::InputError);
}

TEST(DType, Fp16AllValuesRoundTrip) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_fp32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_EQ(h & 0x7c00u, 0x7c00u);
      EXPECT_NE(h & 0x3ffu, 0u);
      EXPECT_TRUE(std::isnan(fp16_to_fp32(fp32_to_fp16(f))));
      continue;
    }
    EXPECT_EQ(fp32_to_fp16(f), h) << std::hex << h;
  }
  EXPECT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_fp32(0x3c00), 1.0f);
  EXPECT_EQ(fp16_to_fp32(0x7bff), 65504.0f);
  EXPECT_EQ(fp16_to_fp32(0xfc00), -std::numeric_limits<float>::infinity());
}

TEST(DType, Fp16RoundingEdges) {
  EXPECT_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie -> even (down)
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie -> even (up)
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);             // subnormal tie -> 0
  EXPECT_EQ(fp32_to_fp16(3 * std::ldexp(1.0f, -26)), 0x0001);
  EXPECT_EQ(fp32_to_fp16(3 * std::ldexp(1.0f, -25)), 0x0002);         // 1.5 ulp tie -> 2
  EXPECT_EQ(fp32_to_fp16(-std::ldexp(1.0f, -24)), 0x8001);
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26)), 0x0400);  // up to min normal
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65519.99f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(1e10f), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(1e-30f), 0x0000);
  const uint16_t n = fp32_to_fp16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(n & 0x7c00, 0x7c00);
  EXPECT_NE(n & 0x3ff, 0);
  EXPECT_EQ(fp32_to_fp16(from_bits(0x7f800001u)) & 0x7e00, 0x7e00);  // signalling nan -> quiet
}

TEST(DType, Fp16MatchesHardware) {
  if (!have_f16c()) GTEST_SKIP() << "no F16C";
  std::mt19937 rng(1);
  for (int i = 0; i < 2000000; ++i) {
    uint32_t u = rng();
    if (i & 1) u = (u & 0x80ffffffu) | ((100u + (u >> 24) % 60u) << 23);  // focus on fp16's range
    const float f = from_bits(u);
    if (std::isnan(f)) continue;
    ASSERT_EQ(fp32_to_fp16(f), hw_fp16(f)) << std::hex << u;
  }
}

TEST(DType, Bf16) {
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie -> even
  EXPECT_EQ(fp32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(fp32_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(fp32_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds to inf
  EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(from_bits(0x7f800001u)))));  // not rounded to inf
  EXPECT_EQ(fp32_to_bf16(from_bits(0x00000001u)), 0x0000);                     // subnormals round too
  EXPECT_EQ(fp32_to_bf16(from_bits(0x00008000u)), 0x0000);
  EXPECT_EQ(fp32_to_bf16(from_bits(0x00018000u)), 0x0002);
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = bf16_to_fp32(static_cast<uint16_t>(h));
    EXPECT_EQ(bits(f), h << 16);
    if (!std::isnan(f)) {
      EXPECT_EQ(fp32_to_bf16(f), h);
    }
  }
}

TEST(DType, FloatRowsRoundTrip) {
  std::vector<float> x = {0.0f, -1.5f, 3.14159f, 1e-6f, 65504.0f, -2.0f, 1e30f};
  std::vector<uint8_t> buf(x.size() * 4);
  std::vector<float> y(x.size());
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    quantize_row(t, x.data(), buf.data(), static_cast<int64_t>(x.size()));
    dequantize_row(t, buf.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const float e = t == DType::F32 ? x[i]
                      : t == DType::F16 ? fp16_to_fp32(fp32_to_fp16(x[i]))
                                        : bf16_to_fp32(fp32_to_bf16(x[i]));
      EXPECT_EQ(bits(y[i]), bits(e));
    }
  }
}

TEST(DType, QuantRoundTripBounds) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int64_t n = 32 * 64;
  std::vector<float> x(n), y(n);
  for (auto& v : x) v = nd(rng);
  for (int j = 0; j < 32; ++j) x[32 * 5 + j] = 0.0f;  // an all-zero block
  x[100] = 40.0f;                                      // an outlier
  for (DType t : {DType::Q8_0, DType::Q4_0}) {
    std::vector<uint8_t> q(row_bytes(t, n));
    quantize_row(t, x.data(), q.data(), n);
    dequantize_row(t, q.data(), y.data(), n);
    for (int64_t b = 0; b < n / 32; ++b) {
      float amax = 0.0f;
      for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
      // Q8_0: step d = amax/127, rounding error <= d/2, plus fp16 scale error <= 127 * d * 2^-11.
      // Q4_0: step |d| = amax/8; the clamp at 15 costs one full step on the side opposite `max`.
      const float bound = t == DType::Q8_0 ? amax / 127.0f * 0.5f + amax * 1.0e-3f : amax / 8.0f + amax * 1.0e-3f;
      for (int j = 0; j < 32; ++j) {
        const int64_t i = b * 32 + j;
        EXPECT_LE(std::fabs(y[i] - x[i]), bound) << dtype_name(t) << " i=" << i;
      }
    }
    for (int j = 0; j < 32; ++j) EXPECT_EQ(y[32 * 5 + j], 0.0f);
  }
  // Q8_0's extreme maps exactly to +-127 * d; Q4_0's signed max maps to -8 * d, exactly.
  std::vector<float> one(32, 0.25f);
  one[3] = -2.0f;
  std::vector<uint8_t> q(row_bytes(DType::Q4_0, 32));
  quantize_row(DType::Q4_0, one.data(), q.data(), 32);
  BlockQ4_0 b4;
  std::memcpy(&b4, q.data(), sizeof b4);
  EXPECT_EQ(fp16_to_fp32(b4.d), 0.25f);
  EXPECT_EQ(b4.qs[3] & 0xF, 0);  // -2 / 0.25 + 8.5 = 0.5 -> 0
  EXPECT_EQ(b4.qs[0] & 0xF, 9);  // 0.25/0.25 + 8.5 -> 9
  q.resize(row_bytes(DType::Q8_0, 32));
  quantize_row(DType::Q8_0, one.data(), q.data(), 32);
  BlockQ8_0 b8;
  std::memcpy(&b8, q.data(), sizeof b8);
  EXPECT_EQ(b8.qs[3], -127);
  EXPECT_EQ(b8.qs[0], static_cast<int8_t>(std::roundf(0.25f * (1.0f / (2.0f / 127.0f)))));
}

// Independent decoders written from the layout descriptions (bit positions per element).
static float q4k_elem(const BlockQ4_K& b, int e) {
  const int sb = e / 32;
  int sc, mn;
  if (sb < 4) {
    sc = b.scales[sb] & 63;
    mn = b.scales[sb + 4] & 63;
  } else {
    sc = (b.scales[sb + 4] & 0xF) | ((b.scales[sb - 4] >> 6) << 4);
    mn = (b.scales[sb + 4] >> 4) | ((b.scales[sb] >> 6) << 4);
  }
  const uint8_t byte = b.qs[(e / 64) * 32 + e % 32];
  const int q = (e % 64) < 32 ? (byte & 0xF) : (byte >> 4);
  return fp16_to_fp32(b.d) * static_cast<float>(sc) * static_cast<float>(q) - fp16_to_fp32(b.dmin) * static_cast<float>(mn);
}
static float q6k_elem(const BlockQ6_K& b, int e) {
  const int h = e / 128, l = e % 128, qd = l / 32, ll = l % 32;
  const uint8_t lb = b.ql[h * 64 + ll + (qd & 1) * 32];
  const int lo = qd < 2 ? (lb & 0xF) : (lb >> 4);
  const int hi = (b.qh[h * 32 + ll] >> (2 * qd)) & 3;
  const int q = (lo | (hi << 4)) - 32;
  return fp16_to_fp32(b.d) * static_cast<float>(b.scales[h * 8 + qd * 2 + ll / 16]) * static_cast<float>(q);
}

TEST(DType, KQuantDequantLayouts) {
  std::mt19937 rng(3);
  for (int rep = 0; rep < 20; ++rep) {
    BlockQ4_K a[2];
    BlockQ6_K c[2];
    for (auto* blk : {&a[0], &a[1]}) {
      auto* p = reinterpret_cast<uint8_t*>(blk);
      for (size_t i = 0; i < sizeof *blk; ++i) p[i] = static_cast<uint8_t>(rng());
      blk->d = fp32_to_fp16(0.01f * (1 + rep));
      blk->dmin = fp32_to_fp16(0.003f * (1 + rep));
    }
    for (auto* blk : {&c[0], &c[1]}) {
      auto* p = reinterpret_cast<uint8_t*>(blk);
      for (size_t i = 0; i < sizeof *blk; ++i) p[i] = static_cast<uint8_t>(rng());
      blk->d = fp32_to_fp16(-0.02f * (1 + rep));
    }
    float ya[512], yc[512];
    dequantize_row(DType::Q4_K, a, ya, 512);
    dequantize_row(DType::Q6_K, c, yc, 512);
    for (int e = 0; e < 512; ++e) {
      EXPECT_FLOAT_EQ(ya[e], q4k_elem(a[e / 256], e % 256)) << e;
      EXPECT_FLOAT_EQ(yc[e], q6k_elem(c[e / 256], e % 256)) << e;
    }
  }
}

}  // namespace dtype_test
