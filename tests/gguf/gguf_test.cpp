#include "gguf/gguf.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "test_util.h"
#include "util/error.h"

namespace gguf_test {

using namespace kvscope;
using gguf::Value;

namespace {

std::vector<uint8_t> sample_file(size_t alignment = 32) {
  gguf::Writer w;
  w.set("general.architecture", Value::str("llama"));
  w.set("a.u32", Value::u32(7));
  w.set("a.i32", Value::i32(-3));
  w.set("a.f32", Value::f32(0.5f));
  w.set("a.bool", Value::boolean(true));
  w.set("a.strs", Value::str_array({"x", "", "héllo"}));
  w.set("a.u64", Value::u64(1ull << 40));
  std::vector<float> t(64);
  for (int i = 0; i < 64; ++i) t[i] = static_cast<float>(i) * 0.25f;
  std::vector<uint8_t> bytes(t.size() * 4);
  std::memcpy(bytes.data(), t.data(), bytes.size());
  w.add_tensor("t0", {16, 4}, kernels::DType::F32, bytes);
  std::vector<uint8_t> b2(34 * 2, 0);
  w.add_tensor("q", {64}, kernels::DType::Q8_0, b2);
  return w.serialize(alignment);
}

}  // namespace

TEST(Gguf, RoundTripsMetadataAndTensors) {
  auto bytes = sample_file();
  auto f = gguf::File::parse(bytes.data(), bytes.size());
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_int("a.u32"), 7);
  EXPECT_EQ(f->get_int("a.i32"), -3);
  EXPECT_FLOAT_EQ(static_cast<float>(f->get_float("a.f32", 0)), 0.5f);
  EXPECT_TRUE(f->get_bool("a.bool", false));
  EXPECT_EQ(f->get_int("a.u64"), int64_t{1} << 40);
  const auto& arr = f->find("a.strs")->as_array();
  ASSERT_EQ(arr.items.size(), 3u);
  EXPECT_EQ(arr.items[2].as_string(), "héllo");
  const auto& t = f->tensor("t0");
  EXPECT_EQ(t.ne, (std::vector<int64_t>{16, 4}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % 32, reinterpret_cast<uintptr_t>(bytes.data()) % 32);
  float x;
  std::memcpy(&x, t.data + 4 * 5, 4);
  EXPECT_FLOAT_EQ(x, 1.25f);
  EXPECT_EQ(f->tensor("q").nbytes, 68u);
  // Re-serialising what we read gives the same bytes.
  gguf::Writer w2;
  for (const auto& [k, v] : f->metadata()) w2.set(k, v);
  for (const auto& ti : f->tensors())
    w2.add_tensor(ti.name, ti.ne, ti.type, std::vector<uint8_t>(ti.data, ti.data + ti.nbytes));
  EXPECT_EQ(w2.serialize(), bytes);
}

TEST(Gguf, HonoursCustomAlignment) {
  auto bytes = sample_file(64);
  auto f = gguf::File::parse(bytes.data(), bytes.size());
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ((f->tensor("q").data - bytes.data()) % 64, 0);
}

TEST(Gguf, MissingKeyAndTensorNameThem) {
  auto bytes = sample_file();
  auto f = gguf::File::parse(bytes.data(), bytes.size());
  try {
    f->get_int("llama.block_count");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("llama.block_count"), std::string::npos);
  }
  EXPECT_THROW(f->tensor("nope"), FormatError);
  EXPECT_THROW(f->get_int("general.architecture"), FormatError);  // wrong type
}

TEST(Gguf, EveryTruncationIsAClearError) {
  auto bytes = sample_file();
  // Everything up to the end of the last tensor's data is needed; the alignment padding after it is not.
  auto whole = gguf::File::parse(bytes.data(), bytes.size());
  const auto& last = whole->tensors().back();
  const size_t needed = static_cast<size_t>(last.data + last.nbytes - bytes.data());
  for (size_t n = 0; n < needed; n += (n < 400 ? 1 : 7)) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    try {
      gguf::File::parse(cut.data(), cut.size());
      ADD_FAILURE() << "truncation at " << n << " accepted";
    } catch (const FormatError& e) {
      EXPECT_GT(std::strlen(e.what()), 10u);
    }
  }
}

TEST(Gguf, RandomCorruptionNeverCrashes) {
  auto bytes = sample_file();
  std::mt19937 rng(42);
  int rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    auto b = bytes;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) b[rng() % b.size()] = static_cast<uint8_t>(rng());
    try {
      auto f = gguf::File::parse(b.data(), b.size());
      for (const auto& t : f->tensors()) ASSERT_LE(t.data + t.nbytes, b.data() + b.size());
    } catch (const FormatError&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);
}

TEST(Gguf, BadMagicVersionAndTypeAreNamed) {
  auto bytes = sample_file();
  auto b = bytes;
  b[0] = 'X';
  EXPECT_THROW(
      {
        try {
          gguf::File::parse(b.data(), b.size());
        } catch (const FormatError& e) {
          EXPECT_NE(std::string(e.what()).find("magic"), std::string::npos);
          throw;
        }
      },
      FormatError);
  b = bytes;
  b[4] = 9;
  try {
    gguf::File::parse(b.data(), b.size());
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("version 9"), std::string::npos);
  }
}

TEST(Gguf, UnknownTensorTypeIsNamed) {
  gguf::Writer w;
  w.set("general.architecture", Value::str("llama"));
  std::vector<uint8_t> bytes(64 * 4);
  w.add_tensor("t", {64}, kernels::DType::F32, bytes);
  auto b = w.serialize();
  // The type field sits right after the name, dims and shape of the only tensor.
  // Tensor info: name as (u64 length = 1, 't'), n_dims u32, ne[0] u64, then the type.
  const std::vector<uint8_t> name = {1, 0, 0, 0, 0, 0, 0, 0, 't'};
  auto it = std::search(b.begin() + 24, b.end(), name.begin(), name.end());
  ASSERT_NE(it, b.end());
  size_t type_off = static_cast<size_t>(it - b.begin()) + name.size() + 4 + 8;
  b[type_off] = 99;
  try {
    gguf::File::parse(b.data(), b.size());
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor t: unknown type id 99"), std::string::npos) << e.what();
  }
}

TEST(Gguf, OpensRealModelFile) {
  auto f = gguf::File::open(test::shared_model("stories260K.gguf"));
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_int("llama.block_count"), 5);
  EXPECT_NE(f->find_tensor("token_embd.weight"), nullptr);
  EXPECT_THROW(gguf::File::open("/nonexistent/model.gguf"), InputError);
}

}  // namespace gguf_test
