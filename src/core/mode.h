// How much a model reasons before it answers: the three modes the difficulty estimator chooses
// between and the embedded model is trained on. Strings only at the CLI/JSON edge (mode_name).
#pragma once
#include <optional>
#include <string_view>

namespace kvscope {

enum class Mode { Fast = 0, Mixed = 1, Slow = 2 };

std::string_view mode_name(Mode m);                    // "fast" | "mixed" | "slow"
std::optional<Mode> parse_mode(std::string_view s);   // nullopt for anything else
// The level a model trained with effort levels shows for a mode: "low" | "medium" | "high".
std::string_view level_name(Mode m);

// How hard a request asks the model to think, as OpenAI's reasoning_effort spells it; Auto lets
// kvscope decide from the prompt's KV. What an effort means depends on the model's reasoning
// format (reasoning/format.h).
enum class Effort { None = 0, Minimal = 1, Low = 2, Medium = 3, High = 4, Auto = 5 };

std::string_view effort_name(Effort e);                 // "none" | "minimal" | "low" | "medium" | "high" | "auto"
std::optional<Effort> parse_effort(std::string_view s);  // nullopt for anything else

}  // namespace kvscope
