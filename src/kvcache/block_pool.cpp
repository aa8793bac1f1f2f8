#include "kvcache/block_pool.h"

#include <stdexcept>
#include <string>

#include "util/hash.h"

namespace kvscope {

BlockHash hash_block(BlockHash parent, const int32_t* tokens, int n, uint64_t extra_key) {
  // FNV-1a over the parent, the extra key and the tokens, finished with a 64-bit mixer.
  uint64_t h = util::kFnvOffset;
  auto mix = [&](uint64_t v) { util::fnv1a_int(h, v, 8); };
  mix(parent);
  mix(extra_key);
  mix(static_cast<uint64_t>(n));
  for (int i = 0; i < n; ++i) mix(static_cast<uint32_t>(tokens[i]));
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

BlockPool::BlockPool(int n_blocks) {
  if (n_blocks <= 0) throw std::invalid_argument("block pool needs at least one block");
  blocks_.resize(n_blocks);
  for (BlockId i = 0; i < n_blocks; ++i) {
    blocks_[i].free_it = free_.insert(free_.end(), i);
    blocks_[i].in_free = true;
  }
}

void BlockPool::check(BlockId id) const {
  if (id < 0 || id >= n_blocks()) throw std::out_of_range("block id " + std::to_string(id) + " out of range");
}

void BlockPool::remove_from_free(BlockId id) {
  Block& b = blocks_[id];
  if (!b.in_free) return;
  free_.erase(b.free_it);
  b.in_free = false;
}

std::optional<BlockId> BlockPool::allocate() {
  if (free_.empty()) return std::nullopt;
  BlockId id = free_.front();
  remove_from_free(id);
  Block& b = blocks_[id];
  if (b.hash) {
    cached_.erase(*b.hash);
    b.hash.reset();
    ++evictions_;
  }
  b.ref = 1;
  return id;
}

void BlockPool::retain(BlockId id) {
  check(id);
  Block& b = blocks_[id];
  if (b.ref == 0) remove_from_free(id);
  ++b.ref;
}

void BlockPool::release(BlockId id) {
  check(id);
  Block& b = blocks_[id];
  if (b.ref <= 0) throw std::logic_error("double free of block " + std::to_string(id));
  if (--b.ref == 0) {
    b.free_it = free_.insert(free_.end(), id);
    b.in_free = true;
  }
}

int BlockPool::ref_count(BlockId id) const {
  check(id);
  return blocks_[id].ref;
}

void BlockPool::set_hash(BlockId id, BlockHash h) {
  check(id);
  Block& b = blocks_[id];
  if (b.hash) return;  // a block's content never changes once full
  auto it = cached_.find(h);
  if (it != cached_.end()) return;  // an identical block is already cached; keep the first
  b.hash = h;
  cached_[h] = id;
}

std::optional<BlockHash> BlockPool::hash_of(BlockId id) const {
  check(id);
  return blocks_[id].hash;
}

void BlockPool::forget_hash(BlockId id) {
  check(id);
  Block& b = blocks_[id];
  if (!b.hash) return;
  cached_.erase(*b.hash);
  b.hash.reset();
}

std::optional<BlockId> BlockPool::lookup(BlockHash h) {
  ++queries_;
  auto it = cached_.find(h);
  if (it == cached_.end()) return std::nullopt;
  ++hits_;
  retain(it->second);
  return it->second;
}

std::vector<BlockId> BlockPool::free_order() const { return {free_.begin(), free_.end()}; }

BlockPoolStats BlockPool::stats() const {
  BlockPoolStats s;
  s.total = n_blocks();
  s.free = static_cast<int>(free_.size());
  s.used = s.total - s.free;
  for (BlockId id : free_)
    if (blocks_[id].hash) ++s.cached_free;
  s.prefix_queries = queries_;
  s.prefix_hits = hits_;
  s.evictions = evictions_;
  return s;
}

}  // namespace kvscope
