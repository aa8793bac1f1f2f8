#include "util/env.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

#include <unistd.h>  // environ

namespace kvscope::util {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

// Once per variable and value: the readers may run per call (tests switch ISAs many times).
void warn_once(const char* name, const std::string& value, const std::string& accepted) {
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mu);
  if (!said.insert(std::string(name) + "=" + value).second) return;
  std::fprintf(stderr, "warning: %s=%s is not understood (expected %s); using the default\n", name, value.c_str(),
               accepted.c_str());
}

}  // namespace

const std::vector<EnvVar>& env_registry() {
  static const std::vector<EnvVar> vars = {
      {"KVSCOPE_MODEL", "a GGUF path", "the model commands use when -m is not given (default: the shipped reasoner)"},
      {"KVSCOPE_ISA", "scalar|avx2|avx512",
       "caps the instruction set the kernels use, for comparisons and debugging (default: the best the CPU has)"},
      {"KVSCOPE_REPACK", "0|1",
       "0 keeps weights in their file layout instead of repacking them for the AVX-512 (and AVX2) kernels (default 1)"},
      // Read by the tests only.
      {"KVSCOPE_BIN", "a path", "tests: the kvscope executable the CLI tests run (ctest sets it)"},
      {"KVSCOPE_ORACLE_DIR", "a folder", "tests: where tools/oracle/setup.sh installed node-llama-cpp (default build/oracle)"},
      {"KVSCOPE_OPENAI_DIR", "a folder", "tests: where tools/openai/setup.sh installed the openai client (default build/npm-openai)"},
      {"KVSCOPE_AISDK_DIR", "a folder", "tests: where tools/aisdk/setup.sh installed the AI SDK client (default build/npm-aisdk)"},
      {"KVSCOPE_SHARED_DIR", "a folder", "tests: the shared folder with real models (default ../shared beside the checkout)"},
      {"KVSCOPE_PARITY_FILES", "GGUF paths, comma-separated", "tests: extra files for the parity test (bench/compare_llamacpp.py --quantize)"},
      {"KVSCOPE_WEBTEST_DIR", "a folder", "tests: where tools/webtest/setup.sh installed playwright-core"},
      {"KVSCOPE_WEBTEST_REQUIRED", "0|1", "tests: 1 makes the browser test fail instead of skip when it cannot run"},
      {"KVSCOPE_WEBTEST_MODEL", "a GGUF path", "tests: the model the browser test serves"},
      {"KVSCOPE_WEBTEST_ARTIFACTS", "a folder", "tests: where the browser test writes its screenshots"},
      {"KVSCOPE_CHROMIUM", "a path", "tests: the Chromium binary the browser test drives (default /usr/bin/chromium)"},
      {"KVSCOPE_BASE_URL", "a URL", "tests: the server the openai client compatibility script talks to"},
      {"KVSCOPE_API_KEY", "a key", "tests: the key the openai client compatibility script sends"},
  };
  return vars;
}

std::optional<std::string> env_string(const char* name) {
  const char* e = std::getenv(name);
  if (!e || !*e) return std::nullopt;
  return std::string(e);
}

std::optional<std::string> env_choice(const char* name, std::initializer_list<const char*> choices) {
  const auto v = env_string(name);
  if (!v) return std::nullopt;
  const std::string l = lower(*v);
  std::string accepted;
  for (const char* c : choices) {
    if (l == c) return l;
    if (!accepted.empty()) accepted += '|';
    accepted += c;
  }
  warn_once(name, *v, accepted);
  return std::nullopt;
}

bool env_flag(const char* name, bool fallback) {
  const auto v = env_string(name);
  if (!v) return fallback;
  const std::string l = lower(*v);
  if (l == "1" || l == "true" || l == "on" || l == "yes") return true;
  if (l == "0" || l == "false" || l == "off" || l == "no") return false;
  warn_once(name, *v, "0|1");
  return fallback;
}

void check_environment() {
  env_choice("KVSCOPE_ISA", {"scalar", "ref", "none", "avx2", "avx512"});
  env_flag("KVSCOPE_REPACK", true);
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("KVSCOPE_", 0) != 0) continue;
    const std::string name = kv.substr(0, kv.find('='));
    bool known = false;
    for (const auto& v : env_registry()) known = known || name == v.name;
    if (!known) std::fprintf(stderr, "warning: %s is not a variable kvscope reads (see docs/environment.md)\n", name.c_str());
  }
}

}  // namespace kvscope::util
