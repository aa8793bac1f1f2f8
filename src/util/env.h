// Every environment variable kvscope reads, read in one place. Each is listed in env_registry()
// (with its values and meaning; docs/environment.md is the same list) and read through the
// helpers below, which warn once on stderr about a value they do not understand and then use the
// default, so a typo is never ignored silently.
//
//   KVSCOPE_MODEL   path            the model commands use without -m (default: the shipped reasoner)
//   KVSCOPE_ISA     scalar|avx2|avx512   caps the kernels' instruction set (default: the best the CPU has)
//   KVSCOPE_REPACK  0|1             0 keeps weights in their file layout instead of repacking them
//                                   for the AVX-512 kernels (default 1)
#pragma once
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace kvscope::util {

struct EnvVar {
  const char* name;
  const char* values;  // what it accepts
  const char* what;    // what it does, and its default
};
const std::vector<EnvVar>& env_registry();

// The variable's value; nullopt when it is unset or empty.
std::optional<std::string> env_string(const char* name);

// The value, lower-cased, when it is one of `choices`; otherwise (set but not a choice) a warning
// naming the variable and the accepted values, and nullopt.
std::optional<std::string> env_choice(const char* name, std::initializer_list<const char*> choices);

// 1/true/on/yes or 0/false/off/no; anything else warns and gives `fallback`.
bool env_flag(const char* name, bool fallback);

// Reads every registered variable that has a fixed set of values, so a bad one is reported at
// start-up rather than when (or whether) a kernel first asks, and warns about KVSCOPE_* names
// that are not registered (a misspelt variable would otherwise do nothing).
void check_environment();

}  // namespace kvscope::util
