#include "kvcache/paged_kv_cache.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "kvcache/kv_quant_internal.h"
#include "kvcache/kv_type_map.h"
#include "util/error.h"

namespace kvscope {
namespace {

using kernels::DType;

std::vector<KVLayerType> resolve_types(const PagedKVConfig& c) {
  if (!c.kv_types.empty()) {
    if (static_cast<int>(c.kv_types.size()) != c.n_layer)
      throw InputError("KV cache: " + std::to_string(c.kv_types.size()) + " layer types for " + std::to_string(c.n_layer) + " layers");
    return c.kv_types;
  }
  if (c.layer_types.empty()) return std::vector<KVLayerType>(c.n_layer);
  if (static_cast<int>(c.layer_types.size()) != c.n_layer)
    throw InputError("KV cache: " + std::to_string(c.layer_types.size()) + " layer types for " + std::to_string(c.n_layer) + " layers");
  std::vector<KVLayerType> out;
  for (DType d : c.layer_types) {
    const KVCacheTypes t(d);
    out.push_back({t.k, t.v});
  }
  return out;
}

size_t block_bytes_of(int kv_dim, const std::vector<KVLayerType>& types, int bs) {
  size_t b = 0;
  for (const KVLayerType& t : types) b += kv_block_bytes(t.k, true, kv_dim, bs) + kv_block_bytes(t.v, false, kv_dim, bs);
  return b;
}

int blocks_from(const PagedKVConfig& c, size_t per_block) {
  if (c.n_blocks > 0) return c.n_blocks;
  const size_t n = c.mem_bytes / per_block;
  if (n == 0)
    throw InputError("KV cache budget of " + std::to_string(c.mem_bytes) + " bytes holds no block of " +
                     std::to_string(per_block) + " bytes");
  if (n > (1u << 30)) throw LimitError("KV cache budget too large");
  return static_cast<int>(n);
}

size_t checked_block_bytes(const PagedKVConfig& c) {
  if (c.n_layer <= 0 || c.kv_dim <= 0 || c.block_size <= 0 || c.block_size > 256) throw InputError("KV cache: bad shape");
  return block_bytes_of(c.kv_dim, resolve_types(c), c.block_size);
}

}  // namespace

size_t PagedKVCache::bytes_per_token(int n_layer, int kv_dim, const std::vector<DType>& types) {
  PagedKVConfig c;
  c.n_layer = n_layer;
  c.kv_dim = kv_dim;
  c.layer_types = types;
  return block_bytes_of(kv_dim, resolve_types(c), 1);
}

size_t PagedKVCache::bytes_per_token(int kv_dim, const std::vector<KVLayerType>& types, int block_size) {
  return block_bytes_of(kv_dim, types, block_size) / block_size;
}

PagedKVCache::PagedKVCache(const PagedKVConfig& cfg)
    : n_layer_(cfg.n_layer), kv_dim_(cfg.kv_dim), block_size_(cfg.block_size),
      bytes_per_token_(checked_block_bytes(cfg) / cfg.block_size), block_bytes_(checked_block_bytes(cfg)),
      pool_(blocks_from(cfg, block_bytes_)) {
  const auto types = resolve_types(cfg);
  layers_.resize(n_layer_);
  const size_t nb = static_cast<size_t>(pool_.n_blocks());
  for (int l = 0; l < n_layer_; ++l) {
    Layer& L = layers_[l];
    for (bool is_k : {true, false}) {
      Store& s = is_k ? L.k : L.v;
      s.type = is_k ? types[l].k : types[l].v;
      s.block_bytes = kv_block_bytes(s.type, is_k, kv_dim_, block_size_);
      s.row_bytes = kv_grouped_by_channel(s.type, is_k) ? 0 : kvq::row_stride(s.type, kv_dim_);
      s.data.resize(nb * s.block_bytes);
      if (kv_grouped_by_channel(s.type, is_k)) s.stage.resize(nb), s.restored.assign(nb, 0);
    }
  }
}

size_t PagedKVCache::bytes() const {
  size_t b = 0;
  for (const Layer& L : layers_) b += L.k.data.size() + L.v.data.size();
  return b;
}

size_t PagedKVCache::staging_bytes() const {
  size_t b = 0;
  for (const Layer& L : layers_)
    for (const Store* s : {&L.k, &L.v})
      for (const auto& st : s->stage) b += st.size() * sizeof(float);
  return b;
}

void PagedKVCache::write_store(Store& s, bool is_k, BlockId b, int slot, const float* x) {
  uint8_t* block = s.data.data() + static_cast<size_t>(b) * s.block_bytes;
  if (s.stage.empty()) return kv_quantize_row(s.type, is_k, x, block, slot, kv_dim_);
  const size_t D = static_cast<size_t>(kv_dim_);
  std::vector<float>& st = s.stage[b];
  if (slot == 0) {
    st.assign(block_size_ * D, 0.0f);
    s.restored[b] = 0;
  } else if (st.empty()) {
    // Writing inside an already quantized block (after a truncation): continue from its values.
    st.resize(block_size_ * D);
    const KVBlockRef r = ref(s, b, is_k);
    for (int i = 0; i < block_size_; ++i) kv_dequantize_row(r, i, st.data() + i * D);
    s.restored[b] = 1;
  }
  std::memcpy(st.data() + slot * D, x, sizeof(float) * D);
  if (slot == block_size_ - 1) {
    kv_quantize_block(s.type, st.data(), block, kv_dim_, block_size_, s.restored[b] != 0);
    s.restored[b] = 0;
    std::vector<float>().swap(st);
  }
}

void PagedKVCache::write(int layer, BlockId b, int slot, const float* k, const float* v) {
  Layer& L = layers_[layer];
  write_store(L.k, true, b, slot, k);
  write_store(L.v, false, b, slot, v);
}

void PagedKVCache::copy_block(BlockId src, BlockId dst) {
  if (src == dst) return;
  for (Layer& L : layers_) {
    for (Store* s : {&L.k, &L.v}) {
      std::memcpy(s->data.data() + dst * s->block_bytes, s->data.data() + src * s->block_bytes, s->block_bytes);
      if (!s->stage.empty()) s->stage[dst] = s->stage[src], s->restored[dst] = s->restored[src];
    }
  }
}

void PagedKVCache::export_block(BlockId b, uint8_t* dst) const {
  for (const Layer& L : layers_)
    for (const Store* s : {&L.k, &L.v}) {
      std::memcpy(dst, s->data.data() + b * s->block_bytes, s->block_bytes);
      dst += s->block_bytes;
    }
}

void PagedKVCache::import_block(BlockId b, const uint8_t* src) {
  for (Layer& L : layers_) {
    for (Store* s : {&L.k, &L.v}) {
      std::memcpy(s->data.data() + b * s->block_bytes, src, s->block_bytes);
      src += s->block_bytes;
      if (!s->stage.empty()) std::vector<float>().swap(s->stage[b]), s->restored[b] = 0;
    }
  }
}

// Staging record: per layer, K then V, for each with a per-channel layout one byte (0: none,
// 1: staged, 2: staged and restored from the quantized block) and then the F32 rows. (Before
// INT4CH/INT2CH only K had such layouts, so older records read the same.)
std::vector<uint8_t> PagedKVCache::export_staging(BlockId b) const {
  std::vector<uint8_t> out;
  bool any = false;
  for (const Layer& L : layers_)
    for (const Store* s : {&L.k, &L.v}) {
      if (s->stage.empty()) continue;
      const auto& st = s->stage[b];
      out.push_back(st.empty() ? 0 : s->restored[b] ? 2 : 1);
      if (st.empty()) continue;
      any = true;
      const auto* p = reinterpret_cast<const uint8_t*>(st.data());
      out.insert(out.end(), p, p + st.size() * sizeof(float));
    }
  if (!any) out.clear();
  return out;
}

void PagedKVCache::import_staging(BlockId b, const uint8_t* src, size_t n) {
  if (n == 0) return;
  const size_t rows = static_cast<size_t>(block_size_) * kv_dim_;
  size_t off = 0;
  for (Layer& L : layers_)
    for (Store* s : {&L.k, &L.v}) {
      if (s->stage.empty()) continue;
      if (off >= n) throw InputError("session file damaged (staging)");
      const uint8_t flag = src[off++];
      if (!flag) continue;
      if (flag > 2 || off + rows * sizeof(float) > n) throw InputError("session file damaged (staging)");
      s->stage[b].resize(rows);
      s->restored[b] = flag == 2;
      std::memcpy(s->stage[b].data(), src + off, rows * sizeof(float));
      off += rows * sizeof(float);
    }
  if (off != n) throw InputError("session file damaged (staging)");
}

void PagedKVCache::read_k(int layer, BlockId b, int slot, float* y) const {
  if (const float* st = k_staged(layer, b)) {
    std::copy(st + static_cast<size_t>(slot) * kv_dim_, st + static_cast<size_t>(slot + 1) * kv_dim_, y);
    return;
  }
  kv_dequantize_row(k_block(layer, b), slot, y);
}

void PagedKVCache::read_v(int layer, BlockId b, int slot, float* y) const {
  if (const float* st = v_staged(layer, b)) {
    std::copy(st + static_cast<size_t>(slot) * kv_dim_, st + static_cast<size_t>(slot + 1) * kv_dim_, y);
    return;
  }
  kv_dequantize_row(v_block(layer, b), slot, y);
}

}  // namespace kvscope
