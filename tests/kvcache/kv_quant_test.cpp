// KV element types: round-trip error bounds, the SIMD attention loops against the scalar reference,
// and type names / per-layer maps.
#include "kvcache/kv_quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/kernels.h"
#include "kvcache/kv_type_map.h"
#include "util/error.h"

namespace kv_quant_test {

using namespace kvscope;

namespace {

const KVType kAll[] = {KVType::F32, KVType::F16, KVType::BF16, KVType::FP8_E4M3, KVType::FP8_E5M2,
                       KVType::INT8, KVType::INT4, KVType::INT2, KVType::FP8_E4M3C, KVType::INT4C, KVType::INT2C,
                       KVType::INT4CH, KVType::INT2CH};

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
// quantized with (its row for per-token types, its channel for per-channel K); blk_amax is the
// largest magnitude in the block (the compact K's min index steps over its group's mins).
float bound(KVType t, bool is_k, float x, float mn, float mx, float blk_amax) {
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
    case KVType::FP8_E4M3C:  // K: E4M3 of the distance to the channel mean
      return is_k ? std::max((mx - mn) * 0x1p-4f, 0x1p-10f) : std::max(std::fabs(x) * 0x1p-4f, 0x1p-10f);
    case KVType::INT4C:
    case KVType::INT2C:
    case KVType::INT4CH:
    case KVType::INT2CH: {
      const float levels = kv_code_bits(t) == 4 ? 15.0f : 3.0f;
      // Scales round up by at most one 2^(1/12) step; K's min sits up to one index step (2 amax / 255)
      // below the channel's; V's integer zero point costs up to one level.
      if (kv_grouped_by_channel(t, is_k)) return (mx - mn + blk_amax / 127.0f) / levels * 0.5f * 1.06f + 1e-6f;
      return std::max((mx - mn) / (levels - 1), amax / 127.0f) * 0.5f * 1.06f + 1e-6f;
    }
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
      float blk_amax = 0;
      for (float v : rows) blk_amax = std::max(blk_amax, std::fabs(v));
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
          ASSERT_LE(std::fabs(y[c] - x), bound(t, is_k, x, mn, mx, blk_amax)) << kv_type_name(t) << (is_k ? " K" : " V") << " row " << i << " ch " << c;
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
  EXPECT_NEAR(kv_bits(KVType::FP8_E4M3C, true, D, bs), 9.0, 1e-9);   // + f16 channel mean over 16 tokens
  EXPECT_NEAR(kv_bits(KVType::FP8_E4M3C, false, D, bs), 8.0, 1e-9);
  EXPECT_NEAR(kv_bits(KVType::INT4C, true, D, bs), 5.0625, 1e-9);    // + u8 scale, u8 min index; f16 base+step per 32 ch
  EXPECT_NEAR(kv_bits(KVType::INT4C, false, D, bs), 4.5, 1e-9);      // + u8 scale, i8 zero per 32 channels
  EXPECT_NEAR(kv_bits(KVType::INT2C, false, D, bs), 2.5, 1e-9);
  EXPECT_NEAR(kv_bits(KVType::INT4CH, false, D, bs), 5.0625, 1e-9);  // V in INT4C K's per-channel layout
  EXPECT_NEAR(kv_bits(KVType::INT2CH, true, D, bs), 3.0625, 1e-9);
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

// The GQA loops (each row decoded once for the query heads sharing a KV head) against the scalar
// reference, for group sizes 1 to 8 and beyond (which falls back to one head at a time).
TEST(KVQuant, GroupedAttentionLoopsMatchTheScalarReference) {
  std::mt19937 rng(9);
  const int bs = 16;
  for (int hd : {32, 64})
    for (int group : {1, 2, 3, 4, 8, 9})
      for (KVType t : kAll)
        for (bool is_k : {true, false}) {
          const int n_kv = 2, D = hd * n_kv;
          auto rows = randn(static_cast<size_t>(D) * bs, rng);
          const auto blk = fill_block(t, is_k, rows, D, bs);
          const KVBlockRef r{t, is_k, blk.data(), D, bs};
          for (int n : {1, 7, 16}) {
            const int off = static_cast<int>(rng() % n_kv) * hd;
            const size_t stride = 21;  // scores / weights of query head g start at g * stride
            const auto q = randn(static_cast<size_t>(hd) * group, rng), p = randn(stride * group, rng);
            std::vector<float> s(stride * group, 0.0f), s_ref(stride * group, 0.0f);
            std::vector<float> o(static_cast<size_t>(hd) * group, 0.5f), o_ref(o);
            kv_dot_group(r, n, off, hd, q.data(), group, 0.125f, s.data(), stride);
            kv_ref::kv_dot_group(r, n, off, hd, q.data(), group, 0.125f, s_ref.data(), stride);
            kv_axpy_group(r, n, off, hd, p.data(), stride, group, o.data());
            kv_ref::kv_axpy_group(r, n, off, hd, p.data(), stride, group, o_ref.data());
            for (size_t i = 0; i < s.size(); ++i)
              ASSERT_NEAR(s[i], s_ref[i], 1e-4f * (1 + std::fabs(s_ref[i]))) << kv_type_name(t) << " group " << group << " n " << n;
            for (size_t c = 0; c < o.size(); ++c)
              ASSERT_NEAR(o[c], o_ref[c], 1e-4f * (1 + std::fabs(o_ref[c]))) << kv_type_name(t) << " group " << group << " n " << n;
          }
        }
}

TEST(KVTypeMap, NamesAndMapsParseAndBadOnesAreNamed) {
  EXPECT_EQ(kv_type_from_name("fp8"), KVType::FP8_E4M3);
  EXPECT_EQ(kv_type_from_name("Q8_0"), KVType::INT8);
  EXPECT_EQ(kv_type_from_name("q4_0"), KVType::INT4);
  EXPECT_EQ(kv_type_from_name("fp8c"), KVType::FP8_E4M3C);
  EXPECT_EQ(kv_type_from_name("INT4C"), KVType::INT4C);
  for (int i = 0; i < kKVTypeCount; ++i)  // every name parses back to its type
    EXPECT_EQ(kv_type_from_name(kv_type_name(static_cast<KVType>(i))), static_cast<KVType>(i));
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

// Keys carry large per-channel offsets; FP8's error is relative, so centring each channel on its
// block mean (fp8_e4m3c) shrinks the error far below plain FP8's.
TEST(KVQuant, CentredFp8KeepsOffsetKeysCloserThanPlainFp8) {
  std::mt19937 rng(3);
  const int D = 64, bs = 16;
  auto rows = randn(static_cast<size_t>(D) * bs, rng, 0.5f);
  for (int i = 0; i < bs; ++i)
    for (int c = 0; c < D; ++c) rows[i * D + c] += static_cast<float>(c % 7) * 3.0f - 9.0f;
  auto rmse = [&](KVType t) {
    const auto blk = fill_block(t, true, rows, D, bs);
    const KVBlockRef r{t, true, blk.data(), D, bs};
    std::vector<float> y(D);
    double e2 = 0;
    for (int i = 0; i < bs; ++i) {
      kv_dequantize_row(r, i, y.data());
      for (int c = 0; c < D; ++c) e2 += double(y[c] - rows[i * D + c]) * (y[c] - rows[i * D + c]);
    }
    return std::sqrt(e2 / (D * bs));
  };
  EXPECT_LT(rmse(KVType::FP8_E4M3C), 0.25 * rmse(KVType::FP8_E4M3));
  EXPECT_LT(rmse(KVType::INT4C), 1.15 * rmse(KVType::INT4));  // 8-bit parameters cost little
}

// A block rewritten after a truncation keeps its parameters: re-quantizing its own dequantized rows
// gives back the same bytes for every per-channel K type; a row outside them gets fresh parameters.
TEST(KVQuant, RequantizingAQuantizedBlockKeepsItsCodes) {
  std::mt19937 rng(5);
  const int D = 64, bs = 16;
  for (KVType t : kAll) {
    if (!kv_grouped_by_channel(t, true)) continue;
    auto rows = randn(static_cast<size_t>(D) * bs, rng, 2.0f);
    auto blk = fill_block(t, true, rows, D, bs);
    const auto orig = blk;
    std::vector<float> deq(rows.size());
    const KVBlockRef r{t, true, blk.data(), D, bs};
    for (int i = 0; i < bs; ++i) kv_dequantize_row(r, i, deq.data() + static_cast<size_t>(i) * D);
    kv_quantize_block(t, deq.data(), blk.data(), D, bs, true);
    EXPECT_EQ(blk, orig) << kv_type_name(t);
    deq[3] = 100.0f;  // out of channel 3's range: the block is quantized afresh, within bounds
    kv_quantize_block(t, deq.data(), blk.data(), D, bs, true);
    std::vector<float> y(D);
    kv_dequantize_row(r, 0, y.data());
    EXPECT_NEAR(y[3], 100.0f, 100.0f * 0.07f) << kv_type_name(t);
  }
}

}  // namespace kv_quant_test
