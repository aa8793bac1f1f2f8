// The KV block pool's bookkeeping (as vLLM's v1 BlockPool): fixed-size blocks identified by id,
// reference counts, a free queue in LRU order, and a map from full-block prefix hashes to cached
// blocks. No tensors live here, so it can be tested without memory; storage is addressed by the
// block ids this class hands out.
#pragma once
#include <cstdint>
#include <list>
#include <optional>
#include <unordered_map>
#include <vector>

namespace kvscope {

using BlockId = int32_t;
using BlockHash = uint64_t;

// Chained hash of one full block: parent hash, the block's token ids, and extra keys (tenant salt).
BlockHash hash_block(BlockHash parent, const int32_t* tokens, int n, uint64_t extra_key = 0);

struct BlockPoolStats {
  int total = 0, used = 0, cached_free = 0, free = 0;
  uint64_t prefix_queries = 0, prefix_hits = 0, evictions = 0;
};

class BlockPool {
 public:
  explicit BlockPool(int n_blocks);

  int n_blocks() const { return static_cast<int>(blocks_.size()); }
  int n_free() const { return static_cast<int>(free_.size()); }  // includes cached-but-unreferenced blocks

  // Takes the least recently freed block (evicting its cached hash, if any). nullopt when none.
  std::optional<BlockId> allocate();
  // Adds a reference (sharing a block between sequences, or reusing a cached one).
  void retain(BlockId id);
  // Drops a reference; at zero the block joins the free queue's tail (most recently used), keeping
  // its hash so a later request with the same prefix can reclaim it until it is evicted.
  void release(BlockId id);
  int ref_count(BlockId id) const;

  // Registers a full block's content hash so later prompts can find it.
  void set_hash(BlockId id, BlockHash h);
  std::optional<BlockHash> hash_of(BlockId id) const;
  // Drops a block's hash (its content is about to change, e.g. after a truncation).
  void forget_hash(BlockId id);
  // Looks up a cached block by hash; on a hit the block gets a reference (leaving the free queue if
  // it was there). Counts queries and hits.
  std::optional<BlockId> lookup(BlockHash h);
  // Whether a block with this hash is cached (no reference taken, not counted as a query).
  bool contains(BlockHash h) const { return cached_.count(h) > 0; }

  // Free-queue order, head (next to allocate) first; for tests.
  std::vector<BlockId> free_order() const;
  BlockPoolStats stats() const;

 private:
  struct Block {
    int ref = 0;
    std::optional<BlockHash> hash;
    std::list<BlockId>::iterator free_it;
    bool in_free = false;
  };
  void check(BlockId id) const;
  void remove_from_free(BlockId id);

  std::vector<Block> blocks_;
  std::list<BlockId> free_;
  std::unordered_map<BlockHash, BlockId> cached_;
  uint64_t queries_ = 0, hits_ = 0, evictions_ = 0;
};

}  // namespace kvscope
