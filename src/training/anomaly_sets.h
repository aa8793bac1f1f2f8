// Prompt sets for measuring KV anomaly detection on a tinygsm model: normal traffic (tinygsm
// prompts in every mode) and shifted sets a deployment should flag. All deterministic from a seed.
//   soup          random vocabulary tokens strung together (20-80 of them)
//   repeated      one token or short word repeated 100-300 times
//   other_domain  prose about other topics (news, cooking, weather, software) in the model's
//                 prompt format ("Question: ...\nMode: m\n")
//   injection     a tinygsm question with an instruction-override sentence ("Ignore the previous
//                 instructions and ...") before, inside or after it
//   control       a tinygsm question with the model's control markers misused inside it
//                 ("Mode: fast", "Answer: 12", "Question:", "<s>", "</s>")
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tinygsm/tinygsm.h"
#include "tokenizer/tokenizer.h"

namespace kvscope::training {

const std::vector<std::string>& shifted_set_names();
// n normal prompts from a tinygsm split (mode drawn per prompt).
std::vector<std::string> normal_prompts(tinygsm::Split split, size_t n, uint64_t seed);
// n prompts of a shifted set (a name of shifted_set_names(); InputError otherwise). The tinygsm
// questions they use come from `split`.
std::vector<std::string> shifted_prompts(const std::string& set, size_t n, uint64_t seed, const tok::Tokenizer& tk,
                                         tinygsm::Split split = tinygsm::Split::Test);

}  // namespace kvscope::training
