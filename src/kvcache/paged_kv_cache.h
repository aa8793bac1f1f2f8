// Paged K/V storage: one pool of fixed-size blocks shared by all layers, addressed by block id.
// Block b holds block_size token slots in every layer, so one id (and one reference count in the
// BlockPool) covers a token range across the whole model. Each layer has its own element type so
// later quantized layers can sit next to F32/F16 ones.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/dtype.h"
#include "kvcache/block_pool.h"

namespace kvscope {

struct PagedKVConfig {
  int n_layer = 0;
  int kv_dim = 0;          // n_head_kv * head_dim
  int block_size = 16;     // tokens per block
  int n_blocks = 0;        // > 0: exactly this many blocks
  size_t mem_bytes = 0;    // used when n_blocks == 0: as many blocks as fit in this budget
  std::vector<kernels::DType> layer_types;  // empty: all F32; else one per layer (F32 or F16)
};

class PagedKVCache {
 public:
  explicit PagedKVCache(const PagedKVConfig& cfg);  // throws InputError on a bad config / budget
  PagedKVCache(const PagedKVCache&) = delete;
  PagedKVCache& operator=(const PagedKVCache&) = delete;

  // Bytes of K+V one token slot takes over all layers.
  static size_t bytes_per_token(int n_layer, int kv_dim, const std::vector<kernels::DType>& types);

  BlockPool& pool() { return pool_; }
  const BlockPool& pool() const { return pool_; }
  int n_layer() const { return n_layer_; }
  int kv_dim() const { return kv_dim_; }
  int block_size() const { return block_size_; }
  int n_blocks() const { return pool_.n_blocks(); }
  kernels::DType layer_type(int layer) const { return layers_[layer].type; }
  size_t bytes() const;
  size_t bytes_per_token() const { return bytes_per_token_; }

  // Stores K and V (kv_dim floats each, converted to the layer's type) in slot `slot` of block b.
  void write(int layer, BlockId b, int slot, const float* k, const float* v);
  // Row of kv_dim elements of the layer's type.
  const void* k_row(int layer, BlockId b, int slot) const { return row(layers_[layer].k, layer, b, slot); }
  const void* v_row(int layer, BlockId b, int slot) const { return row(layers_[layer].v, layer, b, slot); }
  // Copies every layer's K/V of block src into dst (copy-on-write of a shared block).
  void copy_block(BlockId src, BlockId dst);
  // Copies n rows' K or V for all layers of one block to/from a flat buffer (session files).
  size_t block_bytes() const;  // all layers, K and V
  void export_block(BlockId b, uint8_t* dst) const;
  void import_block(BlockId b, const uint8_t* src);

 private:
  struct Layer {
    kernels::DType type;
    size_t row_bytes;
    std::vector<uint8_t> k, v;
  };
  const void* row(const std::vector<uint8_t>& buf, int layer, BlockId b, int slot) const {
    return buf.data() + (static_cast<size_t>(b) * block_size_ + slot) * layers_[layer].row_bytes;
  }
  int n_layer_, kv_dim_, block_size_;
  size_t bytes_per_token_;
  std::vector<Layer> layers_;
  BlockPool pool_;
};

}  // namespace kvscope
