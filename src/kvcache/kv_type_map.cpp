#include "kvcache/kv_type_map.h"

#include <cctype>
#include <sstream>

#include "util/error.h"

namespace kvscope {

KVCacheTypes::KVCacheTypes(kernels::DType t) {
  switch (t) {
    case kernels::DType::F32: k = v = KVType::F32; break;
    case kernels::DType::F16: k = v = KVType::F16; break;
    case kernels::DType::BF16: k = v = KVType::BF16; break;
    default: throw InputError(std::string("KV cache: unsupported element type ") + kernels::dtype_name(t));
  }
}

std::vector<KVLayerType> KVCacheTypes::resolve(int n_layer) const {
  std::vector<KVLayerType> out(n_layer, KVLayerType{k, v});
  for (const KVLayerRange& r : layers) {
    if (r.first < 0 || r.last >= n_layer)
      throw InputError("--kv-layer-types: layer " + std::to_string(r.last >= n_layer ? r.last : r.first) +
                       " out of range (the model has " + std::to_string(n_layer) + " layers, 0-" +
                       std::to_string(n_layer - 1) + ")");
    for (int l = r.first; l <= r.last; ++l) out[l] = r.type;
  }
  return out;
}

std::string KVCacheTypes::describe() const {
  std::string s = std::string("k=") + kv_type_name(k) + " v=" + kv_type_name(v);
  if (!layers.empty()) {
    s += " layers=";
    for (size_t i = 0; i < layers.size(); ++i) {
      const auto& r = layers[i];
      if (i) s += ',';
      s += std::to_string(r.first);
      if (r.last != r.first) s += '-' + std::to_string(r.last);
      s += ':' + std::string(kv_type_name(r.type.k));
      if (r.type.v != r.type.k) s += '/' + std::string(kv_type_name(r.type.v));
    }
  }
  return s;
}

namespace {

int parse_layer(const std::string& s, const std::string& item) {
  if (s.empty() || s.size() > 6) throw InputError("--kv-layer-types: bad layer number in '" + item + "'");
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      throw InputError("--kv-layer-types: bad layer number '" + s + "' in '" + item + "' (expected e.g. 0-3:f16)");
  return std::stoi(s);
}

KVType parse_type(const std::string& s, const std::string& item) {
  try {
    return kv_type_from_name(s);
  } catch (const InputError&) {
    throw InputError("--kv-layer-types: unknown type '" + s + "' in '" + item + "' (expected one of " +
                     kv_type_names() + ")");
  }
}

}  // namespace

std::vector<KVLayerRange> parse_kv_layer_types(const std::string& spec) {
  std::vector<KVLayerRange> out;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::string it;
    for (char c : item)
      if (!std::isspace(static_cast<unsigned char>(c))) it += c;
    if (it.empty()) continue;
    const size_t colon = it.find(':');
    if (colon == std::string::npos)
      throw InputError("--kv-layer-types: item '" + it + "' has no ':' (expected LAYERS:TYPE, e.g. 0-3:f16)");
    const std::string layers = it.substr(0, colon), type = it.substr(colon + 1);
    KVLayerRange r;
    const size_t dash = layers.find('-');
    r.first = parse_layer(layers.substr(0, dash), it);
    r.last = dash == std::string::npos ? r.first : parse_layer(layers.substr(dash + 1), it);
    if (r.last < r.first) throw InputError("--kv-layer-types: empty layer range in '" + it + "'");
    const size_t slash = type.find('/');
    r.type.k = parse_type(type.substr(0, slash), it);
    r.type.v = slash == std::string::npos ? r.type.k : parse_type(type.substr(slash + 1), it);
    out.push_back(r);
  }
  if (out.empty()) throw InputError("--kv-layer-types: empty map (expected e.g. 0-3:f16,4-11:int4)");
  return out;
}

std::string format_kv_layer_types(const std::vector<KVLayerType>& types) {
  std::string s;
  for (size_t i = 0; i < types.size();) {
    size_t j = i;
    while (j + 1 < types.size() && types[j + 1] == types[i]) ++j;
    if (!s.empty()) s += ',';
    s += std::to_string(i);
    if (j != i) s += '-' + std::to_string(j);
    s += ':' + std::string(kv_type_name(types[i].k));
    if (types[i].v != types[i].k) s += '/' + std::string(kv_type_name(types[i].v));
    i = j + 1;
  }
  return s;
}

}  // namespace kvscope
