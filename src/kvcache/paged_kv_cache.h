// Paged K/V storage: one pool of fixed-size blocks shared by all layers, addressed by block id.
// Block b holds block_size token slots in every layer, so one id (and one reference count in the
// BlockPool) covers a token range across the whole model. Each layer has its own K and its own V
// element type (kv_quant.h has the block layouts), so quantized layers sit next to F16 ones.
//
// K of INT4/INT2 (and V of INT4CH/INT2CH) is quantized per channel over a block's tokens, so a block
// that is not full yet keeps those rows in F32 staging (KIVI's full-precision residual); the block is
// quantized when its last slot is written and the staging is freed. Staging lives outside the pool's byte budget and
// exists only for partial blocks (about one per running sequence). A quantized block written into
// again (after a truncation) is restored into staging and, when it fills, quantized with its old
// parameters where the rows fit them, so the rows that did not change keep their codes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/dtype.h"
#include "kvcache/block_pool.h"
#include "kvcache/kv_quant.h"
#include "kvcache/lazy_bytes.h"

namespace kvscope {

struct PagedKVConfig {
  int n_layer = 0;
  int kv_dim = 0;          // n_head_kv * head_dim
  int block_size = 16;     // tokens per block
  int n_blocks = 0;        // > 0: exactly this many blocks
  size_t mem_bytes = 0;    // used when n_blocks == 0: as many blocks as fit in this budget
  std::vector<kernels::DType> layer_types;  // empty: all F32; else one per layer (F32/F16/BF16, K and V)
  std::vector<KVLayerType> kv_types;        // non-empty: one per layer, overrides layer_types
};

class PagedKVCache {
 public:
  explicit PagedKVCache(const PagedKVConfig& cfg);  // throws InputError on a bad config / budget
  PagedKVCache(const PagedKVCache&) = delete;
  PagedKVCache& operator=(const PagedKVCache&) = delete;

  // Bytes of K+V one token slot takes over all layers (per-channel scales spread over the block).
  static size_t bytes_per_token(int n_layer, int kv_dim, const std::vector<kernels::DType>& types);
  static size_t bytes_per_token(int kv_dim, const std::vector<KVLayerType>& types, int block_size = 16);

  BlockPool& pool() { return pool_; }
  const BlockPool& pool() const { return pool_; }
  int n_layer() const { return n_layer_; }
  int kv_dim() const { return kv_dim_; }
  int block_size() const { return block_size_; }
  int n_blocks() const { return pool_.n_blocks(); }
  KVLayerType layer_types(int layer) const { return {layers_[layer].k.type, layers_[layer].v.type}; }
  KVType k_type(int layer) const { return layers_[layer].k.type; }
  KVType v_type(int layer) const { return layers_[layer].v.type; }
  size_t bytes() const;          // the pool's storage
  size_t staging_bytes() const;  // F32 rows of partial per-channel-quantized blocks
  size_t bytes_per_token() const { return bytes_per_token_; }

  // Stores K and V (kv_dim floats each, converted to the layer's types) in slot `slot` of block b.
  void write(int layer, BlockId b, int slot, const float* k, const float* v);
  // Row of kv_dim elements, for row layouts (all but the per-channel ones).
  const void* k_row(int layer, BlockId b, int slot) const { return row(layers_[layer].k, b, slot); }
  const void* v_row(int layer, BlockId b, int slot) const { return row(layers_[layer].v, b, slot); }
  KVBlockRef k_block(int layer, BlockId b) const { return ref(layers_[layer].k, b, true); }
  KVBlockRef v_block(int layer, BlockId b) const { return ref(layers_[layer].v, b, false); }
  // F32 rows [block_size x kv_dim] of a per-channel K (V) block still being filled, or nullptr
  // (quantized, or a row layout).
  const float* k_staged(int layer, BlockId b) const { return staged(layers_[layer].k, b); }
  const float* v_staged(int layer, BlockId b) const { return staged(layers_[layer].v, b); }
  // K or V of one token slot as kv_dim floats, whatever the layer's type (staged K included):
  // for readers outside attention, such as the signals' replay from the cache.
  void read_k(int layer, BlockId b, int slot, float* y) const;
  void read_v(int layer, BlockId b, int slot, float* y) const;
  // Copies every layer's K/V of block src into dst (copy-on-write of a shared block), staging included.
  void copy_block(BlockId src, BlockId dst);
  // The pool bytes of one block over all layers, K and V, to/from a flat buffer (session files).
  size_t block_bytes() const { return block_bytes_; }
  void export_block(BlockId b, uint8_t* dst) const;
  void import_block(BlockId b, const uint8_t* src);
  // A block's staging (empty when it has none) and its restore; InputError on a malformed buffer.
  std::vector<uint8_t> export_staging(BlockId b) const;
  void import_staging(BlockId b, const uint8_t* src, size_t n);

 private:
  struct Store {
    KVType type = KVType::F32;
    size_t block_bytes = 0, row_bytes = 0;  // row_bytes: row layouts only
    LazyBytes data;  // pages committed as blocks are first written
    std::vector<std::vector<float>> stage;  // per block; only for per-channel layouts
    // Per block: its staging was restored from the quantized block (which keeps its parameters).
    std::vector<uint8_t> restored;
  };
  struct Layer {
    Store k, v;
  };
  static const float* staged(const Store& s, BlockId b) {
    return s.stage.empty() || s.stage[b].empty() ? nullptr : s.stage[b].data();
  }
  void write_store(Store& s, bool is_k, BlockId b, int slot, const float* x);
  const void* row(const Store& s, BlockId b, int slot) const {
    return s.data.data() + static_cast<size_t>(b) * s.block_bytes + static_cast<size_t>(slot) * s.row_bytes;
  }
  KVBlockRef ref(const Store& s, BlockId b, bool is_k) const {
    return {s.type, is_k, s.data.data() + static_cast<size_t>(b) * s.block_bytes, kv_dim_, block_size_};
  }
  int n_layer_, kv_dim_, block_size_;
  size_t bytes_per_token_, block_bytes_ = 0;
  std::vector<Layer> layers_;
  BlockPool pool_;
};

}  // namespace kvscope
