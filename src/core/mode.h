// How much a model reasons before it answers: the three modes the difficulty estimator chooses
// between and the embedded model is trained on. Strings only at the CLI/JSON edge (mode_name).
#pragma once
#include <optional>
#include <string_view>

namespace kvscope {

enum class Mode { Fast = 0, Mixed = 1, Slow = 2 };

std::string_view mode_name(Mode m);                    // "fast" | "mixed" | "slow"
std::optional<Mode> parse_mode(std::string_view s);   // nullopt for anything else

}  // namespace kvscope
