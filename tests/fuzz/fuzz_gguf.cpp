// libFuzzer target: the GGUF reader must reject any malformed input with FormatError, never crash.
#include <cstddef>
#include <cstdint>

#include "gguf/gguf.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Strict (what loading a model does) and lenient (what `kvscope inspect` does) reads.
  for (bool lenient : {false, true}) {
    try {
      auto f = kvscope::gguf::File::parse(data, size, "<fuzz>", lenient);
      uint64_t sum = 0;  // touch each usable tensor's first and last byte: their ranges must be in the file
      for (const auto& t : f->tensors())
        if (t.nbytes && t.problem.empty()) sum += t.data[0] + t.data[t.nbytes - 1];
      volatile uint64_t sink = sum;
      (void)sink;
    } catch (const kvscope::FormatError&) {
    }
  }
  return 0;
}
