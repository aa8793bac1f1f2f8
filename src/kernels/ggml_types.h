// Every GGML tensor type id with its name and block geometry, whether kvscope computes with it or
// not, so a refused file names the type (`type IQ1_S is not supported`) instead of a number, and
// `kvscope inspect` can size and list tensors of types kvscope does not run.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kvscope::kernels {

struct GgmlTypeInfo {
  uint32_t id;
  const char* name;    // as GGML spells it: "F32", "Q4_K", "IQ4_XS", ...
  int64_t block;       // elements per block; 0 for ids GGML has removed (no layout to size with)
  size_t block_bytes;  // bytes per block; 0 when removed
};

// nullptr for ids GGML never assigned (or newer than this table).
const GgmlTypeInfo* ggml_type_info(uint32_t id);
// "IQ1_S", or "type id 77" for ids not in the table.
const char* ggml_type_name(uint32_t id);

}  // namespace kvscope::kernels
