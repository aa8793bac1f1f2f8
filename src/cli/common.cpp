#include <unistd.h>

#include <climits>
#include <filesystem>

#include "cli/commands.h"
#include "util/env.h"
#include "util/error.h"

namespace kvscope::cli {

namespace fs = std::filesystem;

std::string default_model_path() {
  std::vector<fs::path> candidates;
  if (const auto env = util::env_string("KVSCOPE_MODEL")) {
    if (!fs::exists(*env)) throw InputError("KVSCOPE_MODEL=" + *env + ": no such file");
    return *env;
  }
  candidates.push_back(fs::path(KVSCOPE_SOURCE_DIR) / "models" / "kvscope-reasoner.gguf");
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    buf[n] = 0;
    candidates.push_back(fs::path(buf).parent_path() / "models" / "default.gguf");
  }
  for (const auto& c : candidates)
    if (fs::exists(c)) return c.string();
  throw InputError("no model given (-m) and no embedded default model found (build the default_model target)");
}

std::string resolve_model(const std::string& given) { return given.empty() ? default_model_path() : given; }

std::vector<int32_t> parse_token_list(const std::string& s) {
  std::vector<int32_t> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    std::string item = s.substr(i, j - i);
    try {
      size_t used = 0;
      long v = std::stol(item, &used);
      if (used != item.size() || v < 0 || v > INT32_MAX) throw std::invalid_argument(item);
      out.push_back(static_cast<int32_t>(v));
    } catch (const std::exception&) {
      throw InputError("bad token id '" + item + "' in --tokens (expected comma-separated non-negative integers)");
    }
    i = j + 1;
  }
  return out;
}

}  // namespace kvscope::cli
