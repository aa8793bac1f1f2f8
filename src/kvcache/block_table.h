// One sequence's block table: the ids of the pool blocks holding its token positions, in order.
// Blocks are allocated as tokens arrive (never reserved for the maximum length); blocks shared
// with other sequences (forks, prefix-cache hits) are copied on write.
#pragma once
#include <vector>

#include "kvcache/paged_kv_cache.h"

namespace kvscope {

class BlockTable {
 public:
  BlockTable() = default;
  BlockTable(const BlockTable&) = delete;  // copies would double-release; use fork()
  BlockTable& operator=(const BlockTable&) = delete;
  BlockTable(BlockTable&&) noexcept = default;
  BlockTable& operator=(BlockTable&&) noexcept = default;

  const std::vector<BlockId>& blocks() const { return blocks_; }
  int n_blocks() const { return static_cast<int>(blocks_.size()); }
  int capacity(int block_size) const { return n_blocks() * block_size; }
  BlockId block_of(int pos, int block_size) const { return blocks_[pos / block_size]; }

  // Free blocks prepare(cache, begin, end) would take: new blocks up to `end` tokens plus copies
  // of shared blocks that positions [begin, end) write into.
  int blocks_needed(const PagedKVCache& cache, int begin, int end) const;
  // Makes positions [begin, end) writable: allocates missing blocks and replaces shared blocks in
  // the range with private copies. Returns false (with nothing changed) if the pool lacks blocks.
  bool prepare(PagedKVCache& cache, int begin, int end);

  // Appends an already-referenced block (a prefix-cache hit); the table owns that reference.
  void append_owned(BlockId b) { blocks_.push_back(b); }
  // Appends a block that is already out of a sliding window (a prefix-cache hit that needs only the
  // window's blocks); only in front of every held block.
  void append_released();
  // A second table sharing every block (each gets one more reference).
  BlockTable fork(BlockPool& pool) const;
  // Keeps the blocks covering the first n tokens, releases the rest.
  void truncate(BlockPool& pool, int n_tokens, int block_size);
  void release_all(BlockPool& pool);
  // Releases the first n blocks (their slots become kReleased): the blocks a sliding-window layer's
  // attention can no longer reach. The table keeps its length, so positions still index it.
  void release_front(BlockPool& pool, int n);
  int n_released() const { return n_released_; }
  static constexpr BlockId kReleased = -1;

 private:
  std::vector<BlockId> blocks_;
  int n_released_ = 0;
};

}  // namespace kvscope
