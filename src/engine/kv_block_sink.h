// An observer of the KV blocks the engine finalises, for a tier outside the process (the Redis KV
// tier of src/kvtier/). Called on the engine's step thread, so an implementation must be quick:
// copy what it needs into its own queue and return; never do I/O here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kvcache/block_table.h"
#include "kvcache/paged_kv_cache.h"

namespace kvscope {

class KVBlockSink {
 public:
  virtual ~KVBlockSink() = default;
  // A full block was published in the prefix cache under `hash` (chained from `parent`, with the
  // request's cache salt); `tokens` are its block_size token ids. Its K/V never change again.
  virtual void block_full(const PagedKVCache& kv, BlockId b, BlockHash hash, BlockHash parent, uint64_t salt,
                          const int32_t* tokens, int n_tokens) = 0;
  // A session's history was pinned after a turn: `tokens` are the positions whose K/V `table` holds.
  virtual void session_pinned(const PagedKVCache& kv, const std::string& session_id, uint64_t salt,
                              const BlockTable& table, const std::vector<int32_t>& tokens) = 0;
};

}  // namespace kvscope
