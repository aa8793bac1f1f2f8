// Where the users' own text sits in a rendered prompt's tokens (the KV anomaly profile's
// user-content part reads only those tokens: signals/kv_profile.h).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"

namespace kvscope::reasoning {

// The token spans [begin, end) of the prompt that hold the users' own text: each of
// user_contents (in order: the user messages as the template rendered them) is encoded alone and
// found in `prompt` after the previous span. A content whose first or last token differs inside the
// prompt (a tokenizer's prefix space, a merge with the template's text) is matched without it, and
// the prompt's token of the same word is taken back. Contents not found (e.g. a template
// that rewrote them) give no span. parse_special: the contents' special-token spellings were parsed
// (the chat path; kvscope's bare questions keep them as text).
std::vector<std::pair<int, int>> user_token_spans(const Model& model, const std::vector<int32_t>& prompt,
                                                  const std::vector<std::string>& user_contents, bool parse_special = true);
}  // namespace kvscope::reasoning
