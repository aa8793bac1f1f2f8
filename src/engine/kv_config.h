// Sizing the paged KV cache for a model: element types per layer and the number of blocks.
#pragma once
#include <cstddef>

#include "kernels/dtype.h"
#include "kvcache/kv_type_map.h"
#include "kvcache/paged_kv_cache.h"
#include "model/model.h"

namespace kvscope {

// The KV cache config that fits a model (element type per layer from kv_type: F32 or F16).
PagedKVConfig kv_config_for(const HParams& hp, int n_blocks, size_t mem_bytes = 0,
                            kernels::DType kv_type = kernels::DType::F32, int block_size = 16);
// The same with K/V types per layer (--cache-type-k/-v, --kv-layer-types); InputError on a bad map.
PagedKVConfig kv_config_for(const HParams& hp, int n_blocks, size_t mem_bytes, const KVCacheTypes& types,
                            int block_size = 16);

}  // namespace kvscope
