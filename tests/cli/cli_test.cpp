// The CLI as a user meets it: bad input gives one clear line on stderr and a non-zero exit.
#include <gtest/gtest.h>

#include <fstream>

#include "test_util.h"

namespace cli_test {

using namespace kvscope;

namespace {
using Result = test::CliResult;
Result run(const std::string& args) { return test::run_cli(args); }
std::string small_model() {
  static std::string p = [] {
    auto path = (test::temp_dir() / "cli.gguf").string();
    auto r = run("gen-model --dim 64 --layers 1 --heads 2 --kv-heads 1 --ffn 64 --vocab 320 --ctx 32 -o " + path);
    EXPECT_EQ(r.status, 0) << r.out;
    return path;
  }();
  return p;
}
}  // namespace

TEST(Cli, RunGeneratesFromAGeneratedModel) {
  auto r = run("run -m " + small_model() + " -p 'hello there' -n 5 --temp 0 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"tokens\""), std::string::npos);
}

TEST(Cli, RunPrintsItsStatisticsOnTheirOwnLine) {
  // stdout and stderr into one pipe, as `kvscope run ... 2>&1 | tee log` would.
  auto r = run("run -m " + small_model() + " -p 'hello there' -n 6 --temp 0");
  ASSERT_EQ(r.status, 0) << r.out;
  const size_t at = r.out.find("prompt tokens in");
  ASSERT_NE(at, std::string::npos) << r.out;
  const size_t open = r.out.rfind('[', at);
  ASSERT_NE(open, std::string::npos) << r.out;
  EXPECT_TRUE(open == 0 || r.out[open - 1] == '\n') << r.out;
  EXPECT_EQ(r.out.back(), '\n');
}

TEST(Cli, LogitBiasSteersTheRun) {
  // llama.cpp's -l ID+BIAS: +100 on token 300 makes greedy decoding write only it; 300-inf bans it again.
  auto plain = run("run -m " + small_model() + " -p 'hello there' -n 4 --temp 0 --json");
  auto pushed = run("run -m " + small_model() + " -p 'hello there' -n 4 --temp 0 --json -l 300+100");
  auto banned = run("run -m " + small_model() + " -p 'hello there' -n 4 --temp 0 --json -l 300+100 --logit-bias 300-inf");
  ASSERT_EQ(pushed.status, 0) << pushed.out;
  ASSERT_EQ(banned.status, 0) << banned.out;
  auto tokens = [](const std::string& out) {
    const size_t at = out.find("\"tokens\":[");
    EXPECT_NE(at, std::string::npos) << out;
    return at == std::string::npos ? std::string() : out.substr(at + 9, out.find(']', at) - at - 8);
  };
  EXPECT_EQ(tokens(pushed.out), "[300,300,300,300]");
  EXPECT_NE(tokens(plain.out), "[300,300,300,300]");
  EXPECT_EQ(tokens(banned.out), tokens(plain.out));  // +100 and -inf on one token: banned; nothing else moved
}

TEST(Cli, BenchPrintsJson) {
  auto r = run("bench -m " + small_model() + " -p 8 -n 4 -r 1 -t 1 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"pp_tok_s\""), std::string::npos);
  EXPECT_NE(r.out.find("\"tg_tok_s\""), std::string::npos);
}

TEST(Cli, BadInputsAreOneLineErrors) {
  auto check = [](const std::string& args, const std::string& needle) {
    auto r = run(args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << " -> " << r.out;
    EXPECT_EQ(r.out.find("internal"), std::string::npos) << r.out;
  };
  auto dir = test::temp_dir();
  std::ofstream(dir / "garbage.gguf") << "this is not a model";
  check("run -m " + (dir / "garbage.gguf").string() + " -p hi", "not a GGUF file");
  std::ifstream in(small_model(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(dir / "cut.gguf", std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  check("run -m " + (dir / "cut.gguf").string() + " -p hi", "truncated");
  check("run -m " + small_model() + " -p ''", "empty prompt");
  std::string longp(400, 'x');
  for (size_t i = 1; i < longp.size(); i += 2) longp[i] = ' ';
  check("run -m " + small_model() + " -p '" + longp + "'", "prompt too long");
  check("run -m " + small_model() + " -p hi --temp -1", "temperature");
  check("run -m " + small_model() + " -p hi -l 5x2", "--logit-bias '5x2'");
  check("run -m " + small_model() + " -p hi -l 5000+1", "logit_bias token id 5000 is not in the vocabulary");
  check("logits -m " + small_model() + " --tokens 1,x", "bad token id");
  check("logits -m " + small_model() + " --tokens 1,100000", "out of range");
  check("run -m /nonexistent.gguf -p hi", "cannot open");
  check("gen-model --arch gptx -o " + (dir / "x.gguf").string(), "unknown architecture");
  check("run -m " + small_model() + " -p \"$(printf '\\377\\376')\"", "not valid UTF-8");
}

}  // namespace cli_test
