// Shared helpers for tests: temp files, the oracle location, running the CLI.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace kvscope::test {

inline std::filesystem::path temp_dir() {
  static std::filesystem::path dir = [] {
    auto base = std::filesystem::temp_directory_path() / ("kvscope-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(base);
    return base;
  }();
  return dir;
}

// Cuts the last `bytes` bytes off a file: a damaged model-tied file must be refused, not read short.
inline void truncate_file(const std::filesystem::path& path, std::uintmax_t bytes) {
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - bytes);
}

inline std::string oracle_dir() {
  if (const char* e = std::getenv("KVSCOPE_ORACLE_DIR")) return e;
  return std::string(KVSCOPE_SOURCE_DIR) + "/build/oracle";
}

// A real test model: tests/models/ in the checkout (committed, so a plain clone passes), then
// KVSCOPE_SHARED_DIR/models and the shared folder beside the checkout.
inline std::string shared_model(const std::string& name) {
  std::vector<std::string> dirs;
  dirs.push_back(std::string(KVSCOPE_SOURCE_DIR) + "/tests/models");
  if (const char* e = std::getenv("KVSCOPE_SHARED_DIR")) dirs.push_back(std::string(e) + "/models");
  dirs.push_back(std::string(KVSCOPE_SOURCE_DIR) + "/../shared/models");
  for (const auto& d : dirs)
    if (std::filesystem::exists(d + "/" + name)) return d + "/" + name;
  return dirs.front() + "/" + name;
}

// Runs a shell command, returns its stdout; exit status in *status.
inline std::string run_capture(const std::string& cmd, int* status = nullptr) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int st = ::pclose(p);
  if (status) *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

inline std::string kvscope_bin() {
  if (const char* e = std::getenv("KVSCOPE_BIN")) return e;
  return "kvscope";
}

// `kvscope ARGS` with stderr folded into the output.
struct CliResult {
  int status;
  std::string out;
};
inline CliResult run_cli(const std::string& args) {
  int st = 0;
  std::string out = run_capture(kvscope_bin() + " " + args + " 2>&1", &st);
  return {st, out};
}

}  // namespace kvscope::test
