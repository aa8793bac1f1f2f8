// libFuzzer target: the GGUF reader must reject any malformed input with FormatError, never crash.
#include <cstddef>
#include <cstdint>

#include "gguf/gguf.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto f = kvscope::gguf::File::parse(data, size);
    uint64_t sum = 0;  // touch each tensor's first and last byte: their ranges must be in the file
    for (const auto& t : f->tensors())
      if (t.nbytes) sum += t.data[0] + t.data[t.nbytes - 1];
    volatile uint64_t sink = sum;
    (void)sink;
  } catch (const kvscope::FormatError&) {
  }
  return 0;
}
