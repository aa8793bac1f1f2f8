// Which KV element types each layer uses: one K and one V type for all layers (llama.cpp's
// --cache-type-k / --cache-type-v) plus per-layer overrides (--kv-layer-types "0-3:f16,4-11:int4",
// where an item's type may also be "K/V", e.g. "5:int8/int4").
#pragma once
#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kvcache/kv_quant.h"

namespace kvscope {

struct KVLayerRange {
  int first = 0, last = 0;  // inclusive
  KVLayerType type;
};

struct KVCacheTypes {
  KVCacheTypes() = default;
  // The single type of older configs (F32 / F16 / BF16 for K and V).
  KVCacheTypes(kernels::DType t);  // NOLINT: implicit on purpose, so kv_type = DType::F16 still reads well
  KVCacheTypes(KVType k_, KVType v_) : k(k_), v(v_) {}

  KVType k = KVType::F32, v = KVType::F32;
  std::vector<KVLayerRange> layers;  // later items override earlier ones and the defaults

  // Per-layer types; InputError when a range names a layer the model does not have.
  std::vector<KVLayerType> resolve(int n_layer) const;
  std::string describe() const;  // "k=f16 v=f16" or the map
};

// Parses the --kv-layer-types syntax; InputError naming the bad item.
std::vector<KVLayerRange> parse_kv_layer_types(const std::string& spec);
// Writes per-layer types in that syntax, merging runs ("0-2:f16,3:int8/int4,4:int4").
std::string format_kv_layer_types(const std::vector<KVLayerType>& types);

}  // namespace kvscope
