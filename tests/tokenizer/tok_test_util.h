// Helpers shared by the tokenizer tests: locating llama.cpp's oracle files and loading vocabularies.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"

namespace kvscope::tok::testing {

using kvscope::test::oracle_dir;

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::string ids_str(const std::vector<TokenId>& v) {
  std::string s;
  for (TokenId id : v) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

inline std::string missing_oracle_msg(const std::string& path) {
  return "missing oracle file " + path + ": run tools/oracle/setup.sh (or set KVSCOPE_ORACLE_DIR)";
}

}  // namespace kvscope::tok::testing
