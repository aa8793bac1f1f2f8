// KV cache configs with per-layer K/V types.
#include "engine/kv_config.h"

namespace kvscope {

PagedKVConfig kv_config_for(const HParams& hp, int n_blocks, size_t mem_bytes, const KVCacheTypes& types, int block_size) {
  // The single-type config's sizes, with the per-layer K/V types in place of its element type.
  PagedKVConfig c = kv_config_for(hp, n_blocks, mem_bytes, kernels::DType::F32, block_size);
  c.layer_types.clear();
  c.kv_types = types.resolve(hp.n_layer);
  return c;
}

}  // namespace kvscope
