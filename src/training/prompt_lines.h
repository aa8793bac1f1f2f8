// Data files of prompts for the signal tools (train-confidence, kv-profile): JSON lines, one object
// a line, the prompts under the first of several field names the line holds.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kvscope::training {

// Calls fn(object, "path:line") for each line that is not blank. Throws InputError when the file
// cannot be opened, a line is not a JSON object, or the file holds no line at all.
void for_each_prompt_line(const std::string& path,
                          const std::function<void(const nlohmann::json& line, const std::string& where)>& fn);

// The first name of `order` that j holds ("" when none).
std::string first_field(const nlohmann::json& j, const std::vector<std::string>& order);

}  // namespace kvscope::training
