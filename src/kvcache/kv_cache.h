// The KV cache seen by attention. K/V are written per layer per token and read by position; the
// storage behind this interface is contiguous now and becomes paged (block tables) later, so
// attention asks for position ranges, never for raw base pointers of the whole cache.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace kvscope {

class KVCache {
 public:
  virtual ~KVCache() = default;
  virtual int n_ctx() const = 0;
  virtual int n_layer() const = 0;
  virtual int kv_dim() const = 0;  // n_head_kv * head_dim

  // Store K and V (kv_dim floats each) of token position pos in layer l.
  virtual void write(int layer, int pos, const float* k, const float* v) = 0;
  // Pointers to the K / V rows of position pos (kv_dim floats). Valid until the next write/resize.
  virtual const float* k(int layer, int pos) const = 0;
  virtual const float* v(int layer, int pos) const = 0;
  // Rows of positions [pos, pos + n) are contiguous in memory with this stride (floats), if n
  // fits inside one storage run; contiguous_run returns how many positions from pos are contiguous.
  virtual int contiguous_run(int pos) const = 0;
  virtual size_t row_stride() const = 0;
  virtual size_t bytes() const = 0;
};

// Contiguous F32 storage: per layer [n_ctx x kv_dim] for K and for V.
std::unique_ptr<KVCache> make_contiguous_kv_cache(int n_layer, int n_ctx, int kv_dim);

}  // namespace kvscope
