// splitmix64: the project's one small deterministic generator (initializations, shuffles, random
// models, tinygsm). Portable, so the same seed gives the same data on every machine; its outputs
// fix data splits and generated files, so it must never change.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace kvscope::util {

struct SplitMix64 {
  uint64_t s = 0;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
  double normal() {                                                          // Box-Muller
    const double u = std::max(uniform(), 1e-300), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
};

}  // namespace kvscope::util
