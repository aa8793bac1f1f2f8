// Session files: one sequence's token history and the K/V of its blocks, so a conversation can be
// resumed in another process without recomputing it. Layout (version 3): magic "KVSSESS\0", u32
// version, u64 model fingerprint, u32 block size, u32 n_layer, u32 kv_dim, per layer u32 K type and
// u32 V type (KVType), u32 n_tokens, tokens (i32), u32 n_blocks, raw block bytes (quantized as
// stored), per block u32 length + its F32 staging (partial per-channel-quantized K; usually empty),
// a u64 FNV-1a checksum of everything before it, then a 32-byte HMAC-SHA256 of everything before
// the tag, keyed by a secret (the server's; "" for the CLI, which then only detects damage). A
// mismatched, damaged or unsigned file is refused with an InputError naming the problem; a file of
// other KV types is refused (no silent requantization).
//
// Encoding and decoding work on bytes in memory, so the engine holds its lock only to copy blocks
// out (encode) or in (install); file I/O and verification happen outside it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvcache/block_table.h"
#include "kvcache/paged_kv_cache.h"
#include "model/model.h"

namespace kvscope {

constexpr uint32_t kSessionFileVersion = 3;
// The default cap on a session file's size when reading one (the server's --session-max-bytes).
constexpr size_t kDefaultSessionMaxBytes = size_t{2} << 30;

// A verified session file, not yet in any cache: its bytes and where its parts lie.
struct SessionImage {
  std::vector<uint8_t> bytes;
  std::vector<int32_t> tokens;
  size_t blocks_at = 0;                              // offset of the first raw block
  std::vector<std::pair<size_t, size_t>> staging;    // per block: offset, length
};

// The file's bytes for tokens whose K/V the table holds.
std::vector<uint8_t> encode_session(uint64_t fingerprint, const PagedKVCache& kv, const BlockTable& table,
                                    const std::vector<int32_t>& tokens, const std::string& secret);
// Checks everything (magic, version, checksum, signature, model, layout, types, sizes) against kv's
// layout; reads nothing but kv's fixed shape, so it may run without the engine's lock.
SessionImage decode_session(std::vector<uint8_t> bytes, uint64_t fingerprint, const PagedKVCache& kv,
                            const std::string& secret);
// Allocates blocks into `table` (empty on entry) and fills them. LimitError when the pool lacks
// blocks (nothing allocated then).
void install_session(const SessionImage& img, PagedKVCache& kv, BlockTable& table);

// Writes bytes to path (created 0600 or truncated), fsynced. exclusive: fail if path exists.
// InputError with the system's reason on failure.
void write_session_bytes(const std::string& path, const std::vector<uint8_t>& bytes, bool exclusive = false);
// Reads a session file: regular files only (a FIFO or a directory is refused without blocking),
// at most max_bytes. nullopt when it does not exist; InputError naming any other problem.
std::optional<std::vector<uint8_t>> read_session_bytes(const std::string& path, size_t max_bytes);

// Whole-file helpers (the CLI's --session-file and tests).
void save_session_file(const std::string& path, uint64_t fingerprint, const PagedKVCache& kv, const BlockTable& table,
                       const std::vector<int32_t>& tokens, const std::string& secret = "");
std::vector<int32_t> load_session_file(const std::string& path, uint64_t fingerprint, PagedKVCache& kv, BlockTable& table,
                                       const std::string& secret = "");

}  // namespace kvscope
