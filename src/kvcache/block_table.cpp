#include "kvcache/block_table.h"

#include <algorithm>

#include "util/error.h"

namespace kvscope {

int BlockTable::blocks_needed(const PagedKVCache& cache, int begin, int end) const {
  const int bs = cache.block_size();
  const int want = (end + bs - 1) / bs;
  int n = std::max(0, want - n_blocks());
  if (begin >= end) return n;
  const int last = std::min(n_blocks(), want);
  for (int i = std::max(begin / bs, n_released_); i < last; ++i)
    if (cache.pool().ref_count(blocks_[i]) > 1) ++n;
  return n;
}

bool BlockTable::prepare(PagedKVCache& cache, int begin, int end) {
  if (begin < 0 || end < begin) throw InputError("block table: bad position range");
  BlockPool& pool = cache.pool();
  if (blocks_needed(cache, begin, end) > pool.n_free()) return false;
  const int bs = cache.block_size();
  const int want = (end + bs - 1) / bs;
  const int last = std::min(n_blocks(), want);
  if (begin / bs < n_released_ && begin < end) throw LimitError("block table: positions in released blocks");
  for (int i = begin / bs; i < last && begin < end; ++i) {
    BlockId old = blocks_[i];
    if (pool.ref_count(old) <= 1) continue;
    // Another sequence still reads this block: write into a private copy.
    BlockId fresh = *pool.allocate();
    cache.copy_block(old, fresh);
    pool.release(old);
    blocks_[i] = fresh;
  }
  while (n_blocks() < want) blocks_.push_back(*pool.allocate());
  return true;
}

BlockTable BlockTable::fork(BlockPool& pool) const {
  BlockTable t;
  t.blocks_ = blocks_;
  t.n_released_ = n_released_;
  for (BlockId b : blocks_)
    if (b != kReleased) pool.retain(b);
  return t;
}

void BlockTable::truncate(BlockPool& pool, int n_tokens, int block_size) {
  const int keep = (n_tokens + block_size - 1) / block_size;
  while (n_blocks() > keep) {
    if (blocks_.back() != kReleased) pool.release(blocks_.back());
    blocks_.pop_back();
  }
  n_released_ = std::min(n_released_, n_blocks());
  // A kept partial block will be overwritten past n_tokens, so it no longer matches its hash.
  if (n_tokens % block_size != 0 && !blocks_.empty() && blocks_.back() != kReleased && pool.ref_count(blocks_.back()) == 1)
    pool.forget_hash(blocks_.back());
}

void BlockTable::release_all(BlockPool& pool) {
  // Release back to front so a sequence's tail blocks are evicted before its (more shareable) head.
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it)
    if (*it != kReleased) pool.release(*it);
  blocks_.clear();
  n_released_ = 0;
}

void BlockTable::append_released() {
  if (n_released_ != n_blocks()) throw InputError("block table: a released block must come before every held one");
  blocks_.push_back(kReleased);
  ++n_released_;
}

void BlockTable::release_front(BlockPool& pool, int n) {
  n = std::min(n, n_blocks());
  for (; n_released_ < n; ++n_released_) {
    pool.release(blocks_[n_released_]);
    blocks_[n_released_] = kReleased;
  }
}

}  // namespace kvscope
