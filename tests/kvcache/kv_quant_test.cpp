// KV element types: round-trip error bounds, the SIMD attention loops against the scalar reference,
// and type names / per-layer maps.
#include "kvcache/kv_quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/kernels.h"
#include "kvcache/kv_type_map.h"
#include "util/error.h"

using namespace kvscope;

namespace {

const KVType kAll[] = {KVType::F32, KVType::F16, KVType::BF16, KVType::FP8_E4M3, KVType::FP8_E5M2,
                       KVType::INT8, KVType::INT4, KVType::INT2};

std::vector<float> randn(size_t n, std::mt19937& rng, float sigma = 1.0f) {
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Writes block_size rows into a block of type t (K or V layout) and returns the block bytes.
std::vector<uint8_t> fill_block(KVType t, bool is_k, const std::vector<float>& rows, int D, int bs) {
  std::vector<uint8_t> blk(kv_block_bytes(t, is_k, D, bs));
  if (kv_grouped_by_channel(t, is_k))
    kv_quantize_block(t, rows.data(), blk.data(), D, bs);
  else
    for (int i = 0; i < bs; ++i) kv_quantize_row(t, is_k, rows.data() + static_cast<size_t>(i) * D, blk.data(), i, D);
  return blk;
}

// The largest error a value may have after a round trip through type t, given the values it was
// quantized with (its row for per-token types, its channel for per-channel K).
float bound(KVType t, float x, float mn, float mx) {
  const float amax = std::max(std::fabs(mn), std::fabs(mx));
  switch (t) {
    case KVType::F32: return 0;
    case KVType::F16: return std::fabs(x) * 0x1p-11f + 0x1p-24f;
    case KVType::BF16: return std::fabs(x) * 0x1p-8f + 1e-38f;
    case KVType::FP8_E4M3: return std::max(std::fabs(x) * 0x1p-4f, 0x1p-10f);
    case KVType::FP8_E5M2: return std::max(std::fabs(x) * 0x1p-3f, 0x1p-17f);
    case KVType::INT8: return amax / 254.0f * 1.0001f + 1e-7f;
    case KVType::INT4: return (mx - mn) / 30.0f * 1.002f + amax * 0x1p-10f + 1e-6f;
    case KVType::INT2: return (mx - mn) / 6.0f * 1.002f + amax * 0x1p-10f + 1e-6f;
  }
  return 0;
}

}  // namespace

TEST(KVQuant, RoundTripStaysWithinEachTypesErrorBound) {
  std::mt19937 rng(1);
  const int D = 64, bs = 16;
  for (KVType t : kAll)
    for (bool is_k : {true, false}) {
      auto rows = randn(static_cast<size_t>(D) * bs, rng, 2.0f);
      rows[5] = 40.0f;  // an outlier channel value
      const auto blk = fill_block(t, is_k, rows, D, bs);
      const KVBlockRef r{t, is_k, blk.data(), D, bs};
      std::vector<float> y(D);
      double err2 = 0;
      for (int i = 0; i < bs; ++i) {
        kv_dequantize_row(r, i, y.data());
        for (int c = 0; c < D; ++c) {
          float mn = 1e30f, mx = -1e30f;  // the group this value was quantized in
          if (kv_grouped_by_channel(t, is_k)) {
            for (int j = 0; j < bs; ++j) mn = std::min(mn, rows[j * D + c]), mx = std::max(mx, rows[j * D + c]);
          } else {
            const int G = kv_code_bits(t) ? kv_group(D) : D, g0 = c / G * G;
            for (int j = g0; j < g0 + G; ++j) mn = std::min(mn, rows[i * D + j]), mx = std::max(mx, rows[i * D + j]);
          }
          const float x = rows[i * D + c];
          ASSERT_LE(std::fabs(y[c] - x), bound(t, x, mn, mx)) << kv_type_name(t) << (is_k ? " K" : " V") << " row " << i << " ch " << c;
          err2 += double(y[c] - x) * (y[c] - x);
        }
      }
      if (t == KVType::F32) {
        EXPECT_EQ(err2, 0.0);
      }
    }
}

TEST(KVQuant, Fp8CodesMatchTheOcpFormats) {
  EXPECT_EQ(e4m3_to_fp32(fp32_to_e4m3(448.0f)), 448.0f);
  EXPECT_EQ(e4m3_to_fp32(fp32_to_e4m3(1e6f)), 448.0f);  // saturates, no inf
  EXPECT_EQ(e4m3_to_fp32(fp32_to_e4m3(-0.001953125f)), -0.001953125f);  // smallest subnormal 2^-9
  EXPECT_EQ(fp32_to_e4m3(1.0f), 0x38);
  EXPECT_EQ(fp32_to_e4m3(1.0625f), 0x38);  // tie rounds to even
  EXPECT_EQ(fp32_to_e4m3(1.1875f), 0x3A);  // tie rounds to even (up)
  EXPECT_EQ(e5m2_to_fp32(fp32_to_e5m2(57344.0f)), 57344.0f);
  EXPECT_EQ(e5m2_to_fp32(fp32_to_e5m2(1e9f)), 57344.0f);
  EXPECT_EQ(fp32_to_e5m2(1.0f), 0x3C);
  for (int b = 0; b < 256; ++b) {  // every finite code round-trips
    if ((b & 0x7F) != 0x7F) {
      EXPECT_EQ(fp32_to_e4m3(e4m3_to_fp32(static_cast<uint8_t>(b))), b) << b;
    }
    if ((b & 0x7C) != 0x7C) {
      EXPECT_EQ(fp32_to_e5m2(e5m2_to_fp32(static_cast<uint8_t>(b))), b) << b;
    }
  }
}

TEST(KVQuant, BytesPerElementShrinkWithTheType) {
  const int D = 256, bs = 16;
  EXPECT_EQ(kv_bits(KVType::F16, true, D, bs), 16.0);
  EXPECT_EQ(kv_bits(KVType::FP8_E4M3, true, D, bs), 8.0);
  EXPECT_NEAR(kv_bits(KVType::INT8, true, D, bs), 8.125, 1e-9);
  EXPECT_NEAR(kv_bits(KVType::INT4, true, D, bs), 6.0, 1e-9);   // per-channel fp16 scale+min over 16 tokens
  EXPECT_NEAR(kv_bits(KVType::INT4, false, D, bs), 5.0, 1e-9);  // fp16 scale+min per 32 channels
  EXPECT_NEAR(kv_bits(KVType::INT2, false, D, bs), 3.0, 1e-9);
  EXPECT_THROW(kv_block_bytes(KVType::INT4, false, 12, bs), InputError);
}

// Every SIMD loop against the scalar reference, on GQA-sized head slices of 32/64/128 channels and
// row counts that are not multiples of 16.
TEST(KVQuant, SimdAttentionLoopsMatchTheScalarReference) {
  if (kernels::detected_isa() == kernels::Isa::Scalar) GTEST_SKIP() << "no SIMD on this CPU";
  std::mt19937 rng(7);
  const int bs = 16;
  for (int hd : {32, 64, 128})
    for (int n_kv : {1, 2, 4})
      for (KVType t : kAll)
        for (bool is_k : {true, false}) {
          const int D = hd * n_kv;
          auto rows = randn(static_cast<size_t>(D) * bs, rng);
          const auto blk = fill_block(t, is_k, rows, D, bs);
          const KVBlockRef r{t, is_k, blk.data(), D, bs};
          for (int n : {1, 5, 13, 16}) {
            const int off = static_cast<int>(rng() % n_kv) * hd;
            const auto q = randn(hd, rng), p = randn(n, rng);
            std::vector<float> s(n), s_ref(n), o(hd, 0.5f), o_ref(hd, 0.5f);
            kv_dot(r, n, off, hd, q.data(), 0.125f, s.data());
            kv_ref::kv_dot(r, n, off, hd, q.data(), 0.125f, s_ref.data());
            kv_axpy(r, n, off, hd, p.data(), o.data());
            kv_ref::kv_axpy(r, n, off, hd, p.data(), o_ref.data());
            for (int i = 0; i < n; ++i)
              ASSERT_NEAR(s[i], s_ref[i], 1e-4f * (1 + std::fabs(s_ref[i]))) << kv_type_name(t) << " hd " << hd << " n " << n;
            for (int c = 0; c < hd; ++c)
              ASSERT_NEAR(o[c], o_ref[c], 1e-4f * (1 + std::fabs(o_ref[c]))) << kv_type_name(t) << " hd " << hd << " n " << n;
          }
        }
}

TEST(KVTypeMap, NamesAndMapsParseAndBadOnesAreNamed) {
  EXPECT_EQ(kv_type_from_name("fp8"), KVType::FP8_E4M3);
  EXPECT_EQ(kv_type_from_name("Q8_0"), KVType::INT8);
  EXPECT_EQ(kv_type_from_name("q4_0"), KVType::INT4);
  auto msg = [](auto f) {
    try {
      f();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg([] { kv_type_from_name("int3"); }).find("unknown KV cache type 'int3'"), std::string::npos);
  KVCacheTypes t(KVType::F16, KVType::F16);
  t.layers = parse_kv_layer_types("0-1:int4, 3:int8/fp8_e5m2");
  const auto r = t.resolve(4);
  EXPECT_EQ(r[0], (KVLayerType{KVType::INT4, KVType::INT4}));
  EXPECT_EQ(r[1], (KVLayerType{KVType::INT4, KVType::INT4}));
  EXPECT_EQ(r[2], (KVLayerType{KVType::F16, KVType::F16}));
  EXPECT_EQ(r[3], (KVLayerType{KVType::INT8, KVType::FP8_E5M2}));
  EXPECT_EQ(format_kv_layer_types(r), "0-1:int4,2:f16,3:int8/fp8_e5m2");
  EXPECT_EQ(parse_kv_layer_types(format_kv_layer_types(r)).size(), 3u);
  EXPECT_NE(msg([&] { t.resolve(3); }).find("layer 3 out of range (the model has 3 layers"), std::string::npos);
  EXPECT_NE(msg([] { parse_kv_layer_types("0-3"); }).find("no ':'"), std::string::npos);
  EXPECT_NE(msg([] { parse_kv_layer_types("a-3:f16"); }).find("bad layer number 'a'"), std::string::npos);
  EXPECT_NE(msg([] { parse_kv_layer_types("3-1:f16"); }).find("empty layer range"), std::string::npos);
  EXPECT_NE(msg([] { parse_kv_layer_types("0:f17"); }).find("unknown type 'f17'"), std::string::npos);
  EXPECT_NE(msg([] { parse_kv_layer_types(""); }).find("empty map"), std::string::npos);
}
