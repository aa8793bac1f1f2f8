#include "reasoning/dataset.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "util/error.h"

namespace kvscope::reasoning {

namespace {

std::string trim(const std::string& s) {
  const char* ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// The last number written in the text ("1,234" and "-5.5" included), if any.
std::optional<double> last_number(const std::string& t) {
  std::optional<double> out;
  for (size_t i = 0; i < t.size();) {
    const bool neg = t[i] == '-' && i + 1 < t.size() && std::isdigit(static_cast<unsigned char>(t[i + 1]));
    if (!neg && !std::isdigit(static_cast<unsigned char>(t[i]))) {
      ++i;
      continue;
    }
    std::string num = neg ? "-" : "";
    size_t j = neg ? i + 1 : i;
    while (j < t.size() && (std::isdigit(static_cast<unsigned char>(t[j])) || t[j] == ',' ||
                            (t[j] == '.' && j + 1 < t.size() && std::isdigit(static_cast<unsigned char>(t[j + 1]))))) {
      if (t[j] != ',') num += t[j];
      ++j;
    }
    out = std::stod(num);
    i = j;
  }
  return out;
}

}  // namespace

std::vector<tok::ChatMessage> parse_chat_messages(const nlohmann::json& m, const std::string& where) {
  if (!m.is_array() || m.empty()) throw InputError(where + "'messages' must be a non-empty array");
  std::vector<tok::ChatMessage> out;
  for (const auto& x : m) {
    if (!x.is_object() || !x.contains("role") || !x.contains("content") || !x["role"].is_string() || !x["content"].is_string())
      throw InputError(where + "each message needs a string 'role' and 'content'");
    out.push_back({x["role"].get<std::string>(), x["content"].get<std::string>()});
  }
  return out;
}

std::vector<DataItem> load_dataset(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError("cannot read the dataset " + path);
  std::vector<DataItem> items;
  std::string line;
  int n = 0;
  while (std::getline(f, line)) {
    ++n;
    if (trim(line).empty()) continue;
    const std::string where = path + ":" + std::to_string(n) + ": ";
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const std::exception&) {
      throw InputError(where + "not valid JSON");
    }
    if (!j.is_object()) throw InputError(where + "expected a JSON object");
    DataItem it;
    it.line = n;
    if (const auto m = j.find("messages"); m != j.end()) {
      it.messages = parse_chat_messages(*m, where);
    } else if (const auto q = j.find("question"); q != j.end() && q->is_string()) {
      it.messages.push_back({"user", q->get<std::string>()});
    } else {
      throw InputError(where + "no 'messages' or 'question'");
    }
    if (const auto r = j.find("answer_regex"); r != j.end()) {
      if (!r->is_string()) throw InputError(where + "'answer_regex' must be a string");
      it.regex = r->get<std::string>();
      try {
        std::regex re(it.regex);
      } catch (const std::regex_error& e) {
        throw InputError(where + "bad 'answer_regex': " + e.what());
      }
    } else if (const auto a = j.find("answer"); a != j.end() && (a->is_number() || a->is_string())) {
      if (a->is_number()) {
        it.number = a->get<double>();
        it.answer = a->dump();
      } else {
        it.answer = a->get<std::string>();
        char* end = nullptr;
        const std::string t = trim(it.answer);
        const double d = std::strtod(t.c_str(), &end);
        if (!t.empty() && end && *end == 0) it.number = d;
      }
    } else {
      throw InputError(where + "no 'answer' (a number or a string) or 'answer_regex'");
    }
    items.push_back(std::move(it));
  }
  if (items.empty()) throw InputError("the dataset " + path + " has no items");
  return items;
}

bool check_answer(const DataItem& it, const std::string& text) {
  if (!it.regex.empty()) return std::regex_search(text, std::regex(it.regex));
  if (it.number) {
    const auto got = last_number(text);
    return got && std::fabs(*got - *it.number) <= 1e-6 * std::max(1.0, std::fabs(*it.number));
  }
  return trim(text) == trim(it.answer);
}

}  // namespace kvscope::reasoning
