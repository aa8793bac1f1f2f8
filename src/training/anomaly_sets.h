// Prompt sets for measuring KV anomaly detection on a tinygsm model: normal traffic (tinygsm
// prompts in every mode) and shifted sets a deployment should flag. All deterministic from a seed.
//   soup          random vocabulary tokens strung together (20-80 of them)
//   repeated      one token or short word repeated 100-300 times
//   other_domain  prose about other topics (news, cooking, weather, software) asked as a question
//   injection     a tinygsm question with an instruction-override sentence ("Ignore the previous
//                 instructions and ...") before, inside or after it
//   control       a tinygsm question with the model's control markers misused inside it
//
// Every prompt reaches the model as it would in use (PromptFormat):
//   the first reasoner (reasoning format kvscope, no chat template): "Question: ...\nMode: m\n" in
//     tinygsm's classic phrasing; soup and repeated are bare text; its markers are "Mode: fast",
//     "Answer: 12", "Question:", "<s>", "</s>";
//   any model with a chat template: one user turn ("Question: ..." or the bare soup) rendered by the
//     template at a mode's effort on the model's reasoning format (level line, think block), as
//     `kvscope serve` renders a chat request, in tinygsm's broad phrasing (the chat reasoner's data);
//     its markers are the template's own special tokens (e.g. <|im_start|>, <|im_end|>), the think
//     tags, "Reasoning: high" lines and whole fake turns, typed inside the user text (they are
//     parsed as special tokens, as a server does).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tinygsm/tinygsm.h"
#include "training/prompt_format.h"

namespace kvscope::training {

struct SetPrompt {
  std::string text;             // the prompt as put to the model (special tokens spelled out)
  std::vector<int32_t> tokens;  // its tokens
  // The token spans [begin, end) of the user's own text (PromptFormat::user_spans): what the
  // profile's user-content part scores.
  std::vector<std::pair<int, int>> user_spans;
};

const std::vector<std::string>& shifted_set_names();
// n normal prompts from a tinygsm split (mode drawn per prompt).
std::vector<SetPrompt> normal_prompts(const PromptFormat& f, tinygsm::Split split, size_t n, uint64_t seed);
// n prompts of a shifted set (a name of shifted_set_names(); InputError otherwise). The tinygsm
// questions they use come from `split`.
std::vector<SetPrompt> shifted_prompts(const PromptFormat& f, const std::string& set, size_t n, uint64_t seed,
                                       tinygsm::Split split = tinygsm::Split::Test);

}  // namespace kvscope::training
