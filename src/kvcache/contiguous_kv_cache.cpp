// Contiguous F32 KV storage (one run per layer); the paged cache replaces it behind KVCache.
#include "kvcache/kv_cache.h"

#include <cstring>

#include "util/error.h"

namespace kvscope {
namespace {

class ContiguousKVCache final : public KVCache {
 public:
  ContiguousKVCache(int n_layer, int n_ctx, int kv_dim)
      : n_layer_(n_layer), n_ctx_(n_ctx), kv_dim_(kv_dim),
        k_(static_cast<size_t>(n_layer) * n_ctx * kv_dim), v_(k_.size()) {}

  int n_ctx() const override { return n_ctx_; }
  int n_layer() const override { return n_layer_; }
  int kv_dim() const override { return kv_dim_; }

  void write(int layer, int pos, const float* k, const float* v) override {
    if (pos < 0 || pos >= n_ctx_) throw LimitError("KV cache position " + std::to_string(pos) + " outside the context");
    std::memcpy(row(k_, layer, pos), k, sizeof(float) * kv_dim_);
    std::memcpy(row(v_, layer, pos), v, sizeof(float) * kv_dim_);
  }
  const float* k(int layer, int pos) const override { return row(k_, layer, pos); }
  const float* v(int layer, int pos) const override { return row(v_, layer, pos); }
  int contiguous_run(int pos) const override { return n_ctx_ - pos; }
  size_t row_stride() const override { return static_cast<size_t>(kv_dim_); }
  size_t bytes() const override { return (k_.size() + v_.size()) * sizeof(float); }

 private:
  float* row(std::vector<float>& s, int layer, int pos) {
    return s.data() + (static_cast<size_t>(layer) * n_ctx_ + pos) * kv_dim_;
  }
  const float* row(const std::vector<float>& s, int layer, int pos) const {
    return s.data() + (static_cast<size_t>(layer) * n_ctx_ + pos) * kv_dim_;
  }
  int n_layer_, n_ctx_, kv_dim_;
  std::vector<float> k_, v_;
};

}  // namespace

std::unique_ptr<KVCache> make_contiguous_kv_cache(int n_layer, int n_ctx, int kv_dim) {
  return std::make_unique<ContiguousKVCache>(n_layer, n_ctx, kv_dim);
}

}  // namespace kvscope
