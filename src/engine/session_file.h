// Session files: one sequence's token history and the K/V of its blocks, so a conversation can be
// resumed in another process without recomputing it. Layout: magic "KVSSESS\0", u32 version, u64
// model fingerprint, u32 block size, u32 n_layer, u32 kv_dim, per layer u32 K type and u32 V type
// (KVType), u32 n_tokens, tokens (i32), u32 n_blocks, raw block bytes (quantized as stored), per
// block u32 length + its F32 staging (partial per-channel-quantized K; usually empty), then a u64
// FNV-1a checksum of everything before it. A mismatched or damaged file is refused with an
// InputError naming the problem; a file of other KV types is refused (no silent requantization).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kvcache/block_table.h"
#include "kvcache/paged_kv_cache.h"
#include "model/model.h"

namespace kvscope {

constexpr uint32_t kSessionFileVersion = 2;

// tokens: the positions whose K/V the table holds.
void save_session_file(const std::string& path, uint64_t fingerprint, const PagedKVCache& kv, const BlockTable& table,
                       const std::vector<int32_t>& tokens);
// Allocates blocks into `table` (empty on entry) and fills them; returns the tokens. Throws
// InputError on a bad file, LimitError when the pool lacks blocks (nothing allocated then).
std::vector<int32_t> load_session_file(const std::string& path, uint64_t fingerprint, PagedKVCache& kv, BlockTable& table);

}  // namespace kvscope
