#include "training/prompt_lines.h"

#include <fstream>

#include "util/error.h"

namespace kvscope::training {

void for_each_prompt_line(const std::string& path,
                          const std::function<void(const nlohmann::json& line, const std::string& where)>& fn) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot open data file '" + path + "'");
  std::string line;
  int ln = 0, read = 0;
  while (std::getline(in, line)) {
    ++ln;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    const std::string where = path + ":" + std::to_string(ln);
    if (j.is_discarded() || !j.is_object()) throw InputError(where + ": not a JSON object");
    fn(j, where);
    ++read;
  }
  if (read == 0) throw InputError("data file '" + path + "' holds no prompts");
}

std::string first_field(const nlohmann::json& j, const std::vector<std::string>& order) {
  for (const auto& k : order)
    if (j.contains(k)) return k;
  return "";
}

}  // namespace kvscope::training
