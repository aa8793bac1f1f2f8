// KV cache type flags as a user meets them: bad names and maps are one-line errors; a calibrated
// map is accepted back by --kv-layer-types.
#include <gtest/gtest.h>

#include <fstream>

#include "test_util.h"

namespace kv_cli_test {

using namespace kvscope;

namespace {
using Result = test::CliResult;
Result run(const std::string& args) { return test::run_cli(args); }
std::string model() {
  static std::string p = [] {
    auto path = (test::temp_dir() / "kvcli.gguf").string();
    auto r = run("gen-model --dim 64 --layers 2 --heads 2 --kv-heads 1 --ffn 64 --vocab 320 --ctx 64 -o " + path);
    EXPECT_EQ(r.status, 0) << r.out;
    return path;
  }();
  return p;
}
}  // namespace

TEST(KVCli, BadTypesAndMapsAreNamed) {
  auto check = [](const std::string& args, const std::string& needle) {
    auto r = run(args);
    EXPECT_EQ(r.status, 1) << args;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << " -> " << r.out;
  };
  const std::string m = "run -m " + model() + " -p hi -n 2 ";
  check(m + "--cache-type-k int3", "unknown KV cache type 'int3'");
  check(m + "--cache-type-v q5_1", "unknown KV cache type 'q5_1'");
  check(m + "--kv-layer-types 0-5:int4", "layer 5 out of range (the model has 2 layers");
  check(m + "--kv-layer-types 0:int4,1", "item '1' has no ':'");
  check(m + "--kv-layer-types 0:int4/f9", "unknown type 'f9'");
  check(m + "--kv-layer-types @/nonexistent.map", "cannot read");
  check("kv-calibrate -m " + model() + " --bits 2 --chunks 1 --chunk-len 16 -q", "below the smallest candidate mix");
}

TEST(KVCli, QuantizedRunsAndCalibratedMapsWork) {
  auto r = run("run -m " + model() + " -p 'hello there' -n 6 --temp 0 --cache-type-k int4 --cache-type-v fp8");
  EXPECT_EQ(r.status, 0) << r.out;
  const std::string map = (test::temp_dir() / "kv.map").string();
  r = run("kv-calibrate -m " + model() + " --bits 6 --chunks 2 --chunk-len 40 -q -o " + map);
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream f(map);
  std::string comment, line;
  std::getline(f, comment);
  std::getline(f, line);
  EXPECT_EQ(comment.rfind("# kvscope kv-calibrate", 0), 0u) << comment;
  EXPECT_EQ(line.rfind("0", 0), 0u) << line;
  r = run("run -m " + model() + " -p 'hello there' -n 6 --temp 0 --kv-layer-types @" + map);
  EXPECT_EQ(r.status, 0) << r.out;
  r = run("kv-eval -m " + model() + " --chunks 1 --chunk-len 40 --decode 4 --reps 1 --setting int8 --setting @" + map + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"bytes_per_token\""), std::string::npos) << r.out;
}

}  // namespace kv_cli_test
