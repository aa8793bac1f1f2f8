// Files with weight types kvscope does not run, broken block geometry or truncated data: one
// `error:` line naming the tensor and the type, exit status 1; `kvscope inspect` still lists them.
// gen-model writes every legacy/IQ4 type and kvscope runs it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace quant_cli_test {

using namespace kvscope;

namespace {
using Result = test::CliResult;
Result run(const std::string& args) { return test::run_cli(args); }

std::string gen(const std::string& name, const std::string& type, int dim = 64, int ffn = 64) {
  auto path = (test::temp_dir() / name).string();
  auto r = run("gen-model --dim " + std::to_string(dim) + " --layers 1 --heads 2 --kv-heads 1 --ffn " + std::to_string(ffn) +
               " --vocab 320 --ctx 64 --type " + type + " -o " + path);
  EXPECT_EQ(r.status, 0) << r.out;
  return path;
}

std::string read_all(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}
void write_all(const std::string& p, const std::string& b) {
  std::ofstream(p, std::ios::binary).write(b.data(), static_cast<std::streamsize>(b.size()));
}

// Offset of the u32 type field of a 2-D tensor's info: after its name (u64 length + bytes), its
// dimension count (u32) and two u64 dimensions.
size_t type_field(const std::string& bytes, const std::string& tensor) {
  std::string key(8, '\0');
  const uint64_t n = tensor.size();
  std::memcpy(key.data(), &n, 8);
  key += tensor;
  const size_t at = bytes.find(key);
  EXPECT_NE(at, std::string::npos) << tensor;
  return at + key.size() + 4 + 16;
}

std::string with_type(const std::string& src, const std::string& name, const std::string& tensor, uint32_t type) {
  std::string b = read_all(src);
  std::memcpy(b.data() + type_field(b, tensor), &type, 4);
  auto path = (test::temp_dir() / name).string();
  write_all(path, b);
  return path;
}

// Exit status 1 and exactly one line, starting with "error:" and containing `needle`.
void expect_one_line_error(const std::string& args, const std::string& needle) {
  auto r = run(args);
  EXPECT_EQ(r.status, 1) << args << " -> " << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_EQ(r.out.rfind("error: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << args << " -> " << r.out;
}
}  // namespace

TEST(QuantCli, RefusedTensorsNameTensorAndType) {
  const std::string base = gen("types_base.gguf", "f32");
  const auto iq1 = with_type(base, "iq1_s.gguf", "blk.0.ffn_down.weight", 19);
  expect_one_line_error("run -m " + iq1 + " -p hi -n 1", "tensor blk.0.ffn_down.weight: type IQ1_S is not supported");
  const auto unk = with_type(base, "unknown_type.gguf", "blk.0.attn_q.weight", 200);
  expect_one_line_error("run -m " + unk + " -p hi -n 1", "tensor blk.0.attn_q.weight: unknown type id 200");
  // Q4_K's 256-element blocks cannot tile 64-element rows (the file's sizes are then wrong too).
  const auto rows = with_type(base, "partial_block.gguf", "blk.0.ffn_up.weight", 12);
  expect_one_line_error("run -m " + rows + " -p hi -n 1",
                        "tensor blk.0.ffn_up.weight: row length 64 is not a multiple of the Q4_K block size 256");
  // A block-quantized file cut inside its last tensor.
  const std::string q = read_all(gen("types_q5_1.gguf", "q5_1"));
  const auto cut = (test::temp_dir() / "cut_q5_1.gguf").string();
  write_all(cut, q.substr(0, q.size() - 100));
  expect_one_line_error("logits -m " + cut + " --tokens 1,2", "truncated GGUF file: tensor output.weight");
}

TEST(QuantCli, InspectListsTensorsOfRefusedFiles) {
  const std::string base = gen("inspect_base.gguf", "q5_0");
  auto ok = run("inspect -m " + base);
  ASSERT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find("general.architecture"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("blk.0.ffn_down.weight"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("Q5_0"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("64 x 64"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("every tensor has a type and size kvscope can use"), std::string::npos) << ok.out;

  const auto bad = with_type(base, "inspect_iq1.gguf", "blk.0.ffn_down.weight", 19);
  auto r = run("inspect -m " + bad);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("type IQ1_S is not supported"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kvscope cannot run this file: 1 tensor"), std::string::npos) << r.out;

  auto j = run("inspect --json -m " + bad);
  ASSERT_EQ(j.status, 0) << j.out;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["unusable_tensors"], 1);
  EXPECT_EQ(doc["metadata"]["general.architecture"]["value"], "llama");
  bool seen = false;
  for (const auto& t : doc["tensors"]) {
    if (t["name"] == "blk.0.ffn_down.weight") {
      seen = true;
      EXPECT_EQ(t["type"], "IQ1_S");
      EXPECT_EQ(t["shape"], nlohmann::json::array({64, 64}));
      EXPECT_EQ(t["problem"], "type IQ1_S is not supported");
      EXPECT_EQ(t["bytes"], 64 / 256 * 50);  // IQ1_S's 256-blocks do not tile 64: no size
    } else {
      EXPECT_FALSE(t.contains("problem")) << t.dump();
    }
  }
  EXPECT_TRUE(seen);
  expect_one_line_error("inspect -m /nonexistent.gguf", "cannot open");
}

TEST(QuantCli, GenModelWritesEveryLegacyTypeAndRunsIt) {
  for (const std::string t : {"q4_1", "q5_0", "q5_1", "iq4_nl", "iq4_xs"}) {
    // dim 256 (a whole IQ4_XS super-block), ffn 288 (not: that tensor falls back to IQ4_NL).
    const auto path = gen("legacy_" + t + ".gguf", t, 256, 288);
    auto r = run("run -m " + path + " -p 'hello there' -n 4 --temp 0 -t 2");
    EXPECT_EQ(r.status, 0) << t << ": " << r.out;
    auto j = run("inspect --json -m " + path);
    ASSERT_EQ(j.status, 0) << j.out;
    auto doc = nlohmann::json::parse(j.out);
    std::string upper = t;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (const auto& e : doc["tensors"]) {
      const std::string name = e["name"];
      if (name.find("norm") != std::string::npos) continue;
      const std::string want = t == "iq4_xs" && name.find("ffn_down") != std::string::npos ? "IQ4_NL" : upper;
      EXPECT_EQ(e["type"], want) << t << " " << name;
    }
  }
}

}  // namespace quant_cli_test
