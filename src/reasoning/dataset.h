// Question/answer datasets for any model (eval --data FILE.jsonl): one JSON object per line with
// "messages" (chat turns) or "question" (one user turn), and "answer" (a number is checked
// numerically against the last number of the response's answer; a string exactly, after trimming)
// or "answer_regex" (searched in the answer). `kvscope tinygsm --jsonl` writes this form.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/chat_template.h"

namespace kvscope::reasoning {

struct DataItem {
  int line = 0;
  std::vector<tok::ChatMessage> messages;  // question items: one user message
  std::string answer;                      // as text ("" with a regex)
  std::optional<double> number;            // a numeric answer
  std::string regex;                       // answer_regex
};

// A JSON "messages" value: a non-empty array of {"role": string, "content": string}. Throws
// InputError "<where>..." naming what is wrong (where ends with ": ").
std::vector<tok::ChatMessage> parse_chat_messages(const nlohmann::json& m, const std::string& where);

// Throws InputError "FILE:LINE: ..." naming the problem (bad JSON, no question, no answer, bad regex).
std::vector<DataItem> load_dataset(const std::string& path);

// Whether a response's answer text is right.
bool check_answer(const DataItem& item, const std::string& answer_text);

}  // namespace kvscope::reasoning
