#include "kvcache/paged_kv_cache.h"

#include <cstring>
#include <string>

#include "util/error.h"

namespace kvscope {
namespace {

using kernels::DType;

std::vector<DType> resolve_types(int n_layer, const std::vector<DType>& t) {
  if (t.empty()) return std::vector<DType>(n_layer, DType::F32);
  if (static_cast<int>(t.size()) != n_layer)
    throw InputError("KV cache: " + std::to_string(t.size()) + " layer types for " + std::to_string(n_layer) + " layers");
  for (DType d : t)
    if (d != DType::F32 && d != DType::F16)
      throw InputError(std::string("KV cache: unsupported element type ") + kernels::dtype_name(d));
  return t;
}

int blocks_from(const PagedKVConfig& c, size_t per_token) {
  if (c.n_blocks > 0) return c.n_blocks;
  const size_t per_block = per_token * c.block_size;
  const size_t n = c.mem_bytes / per_block;
  if (n == 0)
    throw InputError("KV cache budget of " + std::to_string(c.mem_bytes) + " bytes holds no block of " +
                     std::to_string(per_block) + " bytes");
  if (n > (1u << 30)) throw LimitError("KV cache budget too large");
  return static_cast<int>(n);
}

}  // namespace

size_t PagedKVCache::bytes_per_token(int n_layer, int kv_dim, const std::vector<DType>& types) {
  size_t b = 0;
  for (DType d : resolve_types(n_layer, types)) b += 2 * kernels::row_bytes(d, kv_dim);
  return b;
}

PagedKVCache::PagedKVCache(const PagedKVConfig& cfg)
    : n_layer_(cfg.n_layer), kv_dim_(cfg.kv_dim), block_size_(cfg.block_size),
      bytes_per_token_(cfg.n_layer > 0 && cfg.kv_dim > 0 ? bytes_per_token(cfg.n_layer, cfg.kv_dim, cfg.layer_types) : 0),
      pool_((cfg.n_layer <= 0 || cfg.kv_dim <= 0 || cfg.block_size <= 0) ? throw InputError("KV cache: bad shape")
                                                                         : blocks_from(cfg, bytes_per_token_)) {
  const auto types = resolve_types(n_layer_, cfg.layer_types);
  layers_.resize(n_layer_);
  const size_t slots = static_cast<size_t>(pool_.n_blocks()) * block_size_;
  for (int l = 0; l < n_layer_; ++l) {
    Layer& L = layers_[l];
    L.type = types[l];
    L.row_bytes = kernels::row_bytes(L.type, kv_dim_);
    L.k.resize(slots * L.row_bytes);
    L.v.resize(slots * L.row_bytes);
  }
}

size_t PagedKVCache::bytes() const {
  size_t b = 0;
  for (const Layer& L : layers_) b += L.k.size() + L.v.size();
  return b;
}

void PagedKVCache::write(int layer, BlockId b, int slot, const float* k, const float* v) {
  Layer& L = layers_[layer];
  uint8_t* kd = const_cast<uint8_t*>(static_cast<const uint8_t*>(row(L.k, layer, b, slot)));
  uint8_t* vd = const_cast<uint8_t*>(static_cast<const uint8_t*>(row(L.v, layer, b, slot)));
  if (L.type == DType::F32) {
    std::memcpy(kd, k, sizeof(float) * kv_dim_);
    std::memcpy(vd, v, sizeof(float) * kv_dim_);
  } else {
    kernels::quantize_row(L.type, k, kd, kv_dim_);
    kernels::quantize_row(L.type, v, vd, kv_dim_);
  }
}

void PagedKVCache::copy_block(BlockId src, BlockId dst) {
  if (src == dst) return;
  for (Layer& L : layers_) {
    const size_t n = L.row_bytes * block_size_;
    std::memcpy(L.k.data() + dst * n, L.k.data() + src * n, n);
    std::memcpy(L.v.data() + dst * n, L.v.data() + src * n, n);
  }
}

size_t PagedKVCache::block_bytes() const { return bytes_per_token_ * block_size_; }

void PagedKVCache::export_block(BlockId b, uint8_t* dst) const {
  for (const Layer& L : layers_) {
    const size_t n = L.row_bytes * block_size_;
    std::memcpy(dst, L.k.data() + b * n, n);
    std::memcpy(dst + n, L.v.data() + b * n, n);
    dst += 2 * n;
  }
}

void PagedKVCache::import_block(BlockId b, const uint8_t* src) {
  for (Layer& L : layers_) {
    const size_t n = L.row_bytes * block_size_;
    std::memcpy(L.k.data() + b * n, src, n);
    std::memcpy(L.v.data() + b * n, src + n, n);
    src += 2 * n;
  }
}

}  // namespace kvscope
