// KV cache configs with per-layer K/V types.
#include "engine/kv_config.h"

namespace kvscope {

PagedKVConfig kv_config_for(const HParams& hp, int n_blocks, size_t mem_bytes, const KVCacheTypes& types, int block_size) {
  PagedKVConfig c;
  c.n_layer = hp.n_layer;
  c.kv_dim = hp.n_kv_dim();
  c.block_size = block_size;
  c.n_blocks = n_blocks;
  c.mem_bytes = mem_bytes;
  c.kv_types = types.resolve(hp.n_layer);
  return c;
}

}  // namespace kvscope
