// Compares our token ids with llama.cpp's (node-llama-cpp through tools/oracle/tokenize.mjs) on a
// varied text set, for llama.cpp's vocab files and a real SPM model.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

#include "tok_test_util.h"

namespace kvscope::tok::testing {
namespace {

const std::vector<std::string>& texts() {
  static const std::vector<std::string> t = {
      "Hello, world!",
      "Once upon a time, there was a little girl named Lily.",
      " leading space",
      "  two leading spaces",
      "trailing spaces   ",
      "multiple   inner    spaces",
      "line one\nline two\n\nline four\r\nwindows",
      "\n\n\n",
      "\ttab\tseparated\t\tvalues",
      "   \n  \t \n",
      "Café, naïve, résumé, über, señor, façade",
      "Ελληνικά και Русский текст",
      "日本語のテキストと中文文本，还有한국어.",
      "emoji: 😀 🎉 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️",
      "digits 0 12 345 6789 1234567890 3.14159 -42 1e10",
      "١٢٣ ٤٥٦ Arabic-Indic digits and ½ ¾ ²",
      "int main(int argc, char** argv) {\n    printf(\"%d\\n\", argc);\n    return 0;\n}",
      "def f(x):\n\treturn x ** 2  # square\n",
      "I'm sure they're here, we've seen it, you'll see, he'd know, it's OK. DON'T SHOUT",
      "mixed: abc123def ++-- ==> <html><body>Hi</body></html> path/to/file.txt",
      "URL https://example.com/a?b=c&d=e#frag email a.b@c.de",
      "Special-looking <s> </s> <unk> <|im_start|> <|endoftext|> [INST]",
      "\xe2\x96\x81 already escaped \xe2\x96\x81\xe2\x96\x81",
      "zero\xe2\x80\x8bwidth and\xc2\xa0nbsp and\xe3\x80\x80ideographic space",
      "a",
      " ",
      "",
  };
  return t;
}

// Runs the oracle on `ts`; returns false (with a message) when it cannot.
bool run_oracle(const std::string& model, const std::vector<std::string>& ts, bool special,
                std::vector<std::vector<TokenId>>* out, std::string* err) {
  const auto tmp = std::filesystem::temp_directory_path();
  const std::string stem = (tmp / ("kvscope_tok_" + std::to_string(::getpid()) + "_" +
                                   std::filesystem::path(model).stem().string())).string();
  {
    std::ofstream f(stem + ".json", std::ios::binary);
    f << nlohmann::json({{"texts", ts}, {"special", special}}).dump();
  }
  const std::string script = std::string(KVSCOPE_SOURCE_DIR) + "/tools/oracle/tokenize.mjs";
  const std::string cmd = "KVSCOPE_ORACLE_DIR='" + oracle_dir() + "' node '" + script + "' '" + model + "' < '" +
                          stem + ".json' > '" + stem + ".out' 2> '" + stem + ".err'";
  const int rc = std::system(cmd.c_str());
  const std::string outs = read_file(stem + ".out"), errs = read_file(stem + ".err");
  for (const char* ext : {".json", ".out", ".err"}) std::filesystem::remove(stem + ext);
  if (rc != 0) {
    *err = "oracle failed (rc " + std::to_string(rc) + "): " + cmd + "\n" + errs +
           "\nIs node on PATH and the oracle installed? Run tools/oracle/setup.sh";
    return false;
  }
  try {
    const auto j = nlohmann::json::parse(outs);
    for (const auto& row : j.at("tokens")) out->push_back(row.get<std::vector<TokenId>>());
  } catch (const std::exception& e) {
    *err = std::string("cannot parse oracle output: ") + e.what() + "\n" + outs;
    return false;
  }
  return true;
}

void compare(const std::string& model, const std::vector<std::string>& ts, bool special) {
  ASSERT_TRUE(std::filesystem::exists(model)) << missing_oracle_msg(model);
  std::vector<std::vector<TokenId>> expected;
  std::string err;
  ASSERT_TRUE(run_oracle(model, ts, special, &expected, &err)) << err;
  ASSERT_EQ(expected.size(), ts.size());
  auto file = gguf::File::open(model);
  auto tok = Tokenizer::from_gguf(*file);
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto got = tok->encode(ts[i], /*add_special=*/false, special);
    EXPECT_EQ(got, expected[i]) << model << " special=" << special << " text '" << ts[i]
                                << "'\n  llama.cpp: " << ids_str(expected[i]) << "\n  ours:      " << ids_str(got);
  }
}

class Oracle : public ::testing::TestWithParam<std::string> {};

std::string model_path(const std::string& name) {
  if (name == "stories260K") return kvscope::test::shared_model("stories260K.gguf");
  return oracle_dir() + "/llama.cpp/models/ggml-vocab-" + name + ".gguf";
}

TEST_P(Oracle, PlainText) { compare(model_path(GetParam()), texts(), false); }

TEST_P(Oracle, ParseSpecial) {
  std::vector<std::string> ts = {
      "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
      "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>",
      "<s>[INST] <<SYS>>\nsys\n<</SYS>>\n\nHello [/INST]Hi</s><s>[INST] again [/INST]",
      "<|user|>\nHello</s>\n<|assistant|>\n",
      "text<|endoftext|>more text <unk> end",
  };
  compare(model_path(GetParam()), ts, true);
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp, Oracle,
                         ::testing::Values("llama-spm", "llama-bpe", "qwen2", "gpt-2", "stories260K"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace kvscope::tok::testing
