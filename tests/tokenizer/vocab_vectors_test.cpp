// llama.cpp's own tokenizer test vectors (models/ggml-vocab-*.gguf with .inp/.out): every string of
// each supported vocabulary must tokenize to exactly the expected ids (add_special=false,
// parse_special=false, as llama.cpp's test-tokenizer-0 does).
#include <filesystem>

#include "tok_test_util.h"

namespace kvscope::tok::testing {
namespace {

struct Case {
  std::string text;
  std::vector<TokenId> ids;
};

std::vector<Case> read_cases(const std::string& inp_path, const std::string& out_path) {
  const std::string raw = read_file(inp_path);
  std::vector<std::string> inputs;
  const std::string sep = "\n__ggml_vocab_test__\n";
  for (size_t pos = 0; pos < raw.size();) {
    const size_t next = raw.find(sep, pos);
    if (next == std::string::npos) {
      inputs.push_back(raw.substr(pos));
      break;
    }
    inputs.push_back(raw.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::vector<Case> cases;
  std::ifstream out(out_path);
  std::string line;
  size_t i = 0;
  while (std::getline(out, line)) {
    if (i >= inputs.size()) break;
    Case c{inputs[i++], {}};
    std::istringstream ls(line);
    for (TokenId id; ls >> id;) c.ids.push_back(id);
    cases.push_back(std::move(c));
  }
  EXPECT_EQ(cases.size(), inputs.size()) << inp_path << " and " << out_path << " disagree on the number of tests";
  return cases;
}

class VocabVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(VocabVectors, MatchLlamaCpp) {
  const std::string base = oracle_dir() + "/llama.cpp/models/ggml-vocab-" + GetParam() + ".gguf";
  for (const std::string& p : {base, base + ".inp", base + ".out"})
    ASSERT_TRUE(std::filesystem::exists(p)) << missing_oracle_msg(p);
  auto file = gguf::File::open(base);
  auto tok = Tokenizer::from_gguf(*file);
  const auto cases = read_cases(base + ".inp", base + ".out");
  ASSERT_GT(cases.size(), 10u);
  int failures = 0;
  for (const Case& c : cases) {
    const auto got = tok->encode(c.text, /*add_special=*/false, /*parse_special=*/false);
    if (got != c.ids) {
      ++failures;
      ADD_FAILURE() << GetParam() << ": text '" << c.text << "'\n  expected: " << ids_str(c.ids)
                    << "\n  got:      " << ids_str(got);
    }
  }
  EXPECT_EQ(failures, 0) << failures << " of " << cases.size() << " vectors differ";
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp, VocabVectors,
                         ::testing::Values("llama-spm", "llama-bpe", "qwen2", "gpt-2", "starcoder", "refact",
                                           "command-r", "mpt"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace kvscope::tok::testing
