// llama.cpp's spellings of common flags, rewritten before CLI11 parses. CLI11 reads "-ngl 0" as
// "-n gl" (a short option with an attached value), so multi-letter single-dash flags cannot be
// declared there; they are mapped here to kvscope's long names, or dropped where they mean nothing
// on this engine (with one note on stderr).
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace kvscope::cli {

std::vector<std::string> rewrite_llama_flags(const std::vector<std::string>& in) {
  struct Map {
    const char* from;
    const char* to;    // nullptr: dropped
    int drop_values;   // for dropped flags: 1 = takes a value, 0 = a switch, -1 = an optional on/off/auto value
    const char* note;  // printed once when the flag is dropped
  };
  static const Map kMap[] = {
      {"-ngl", nullptr, 1, "-ngl/--n-gpu-layers ignored: this build runs on the CPU only"},
      {"--n-gpu-layers", nullptr, 1, "-ngl/--n-gpu-layers ignored: this build runs on the CPU only"},
      {"--gpu-layers", nullptr, 1, "-ngl/--n-gpu-layers ignored: this build runs on the CPU only"},
      {"-fa", nullptr, -1, nullptr},  // attention is always fused here: nothing to switch on
      {"--flash-attn", nullptr, -1, nullptr},
      {"-cb", nullptr, 0, nullptr},  // the server always batches continuously
      {"--cont-batching", nullptr, 0, nullptr},
      {"-ctk", "--cache-type-k", 0, nullptr},
      {"-ctv", "--cache-type-v", 0, nullptr},
      {"-np", "--parallel", 0, nullptr},
  };
  // Values of these are passed through untouched, so a prompt may be "-fa".
  static const std::set<std::string> kTakesText = {"-p", "--prompt", "--system", "--stop"};
  std::vector<std::string> out;
  std::set<std::string> noted;
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string& a = in[i];
    if (a == "--") {  // everything after is positional
      out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(i), in.end());
      break;
    }
    if (kTakesText.count(a) && i + 1 < in.size()) {
      out.push_back(a);
      out.push_back(in[++i]);
      continue;
    }
    const size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    const Map* m = nullptr;
    for (const Map& x : kMap)
      if (name == x.from) m = &x;
    if (!m) {
      out.push_back(a);
      continue;
    }
    if (m->to) {
      out.push_back(eq == std::string::npos ? std::string(m->to) : std::string(m->to) + a.substr(eq));
      continue;
    }
    if (m->note && noted.insert(m->note).second) std::fprintf(stderr, "note: %s\n", m->note);
    if (eq != std::string::npos) continue;  // "-ngl=99": the value went with it
    if (m->drop_values == 1 && i + 1 < in.size()) ++i;
    if (m->drop_values == -1 && i + 1 < in.size()) {
      const std::string& v = in[i + 1];
      if (v == "on" || v == "off" || v == "auto" || v == "1" || v == "0" || v == "true" || v == "false") ++i;
    }
  }
  return out;
}

}  // namespace kvscope::cli
