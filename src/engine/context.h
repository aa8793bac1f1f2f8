// An inference context: one sequence's paged KV cache plus the (batched) forward pass over a Model,
// run with a single sequence.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/stop_reason.h"
#include "kvcache/block_table.h"
#include "kvcache/kv_type_map.h"
#include "kvcache/paged_kv_cache.h"
#include "model/model.h"
#include "sampling/sampler.h"

namespace kvscope {

struct ContextParams {
  int n_ctx = 0;        // 0: the model's training context
  int n_threads = 0;    // 0: hardware concurrency
  int n_batch = 512;    // prompt tokens per forward pass (chunked prefill)
  KVCacheTypes kv_type = {};  // K/V element types per layer (default F32)
  // Keep every position of the sliding-window layers (llama.cpp's --swa-full). Otherwise a model
  // with both sliding and global layers keeps the sliding layers in their own cache, sized for the
  // window plus one batch, and releases their blocks as they leave the window.
  bool swa_full = false;
};

class BatchedForward;
class KVTap;

class Context {
 public:
  Context(const Model& model, ContextParams p);
  ~Context();

  const Model& model() const { return model_; }
  int n_ctx() const { return n_ctx_; }
  int n_past() const { return n_past_; }
  void reset() { truncate(0); }
  // Drop cached positions >= n (keeps a prefix, e.g. a shared system prompt).
  void truncate(int n);

  // Runs tokens at positions n_past.. and appends their K/V. Returns logits of the last token
  // (n_vocab floats) or of every token when all_logits (tokens.size() * n_vocab).
  // Throws LimitError when n_past + tokens.size() > n_ctx, InputError on out-of-range ids.
  const std::vector<float>& eval(const std::vector<int32_t>& tokens, bool all_logits = false);

  kernels::ThreadPool& pool() { return *pool_; }

  // Every later eval feeds its K/V (and hidden states) to tap; nullptr detaches. Not owned.
  void set_tap(KVTap* tap) { tap_ = tap; }
  KVTap* tap() const { return tap_; }
  // The cache and this sequence's block table (read access, e.g. recomputing signals from stored K/V).
  const PagedKVCache& kv() const { return *kv_; }
  const BlockTable& table() const { return table_; }
  // The sliding-window layers' cache when they have their own (null: kv() holds every layer), and
  // the bytes of both caches' storage.
  const PagedKVCache* swa_kv() const { return swa_kv_.get(); }
  size_t kv_bytes() const;

 private:
  void forward_chunk(const int32_t* tokens, int n, bool all_logits, float* logits_out);
  void release_kv();

  const Model& model_;
  int n_ctx_ = 0;
  int n_batch_ = 512;
  int n_past_ = 0;
  std::unique_ptr<kernels::ThreadPool> pool_;
  std::unique_ptr<PagedKVCache> kv_;  // sized for n_ctx; blocks are taken as positions fill
  BlockTable table_;
  std::unique_ptr<PagedKVCache> swa_kv_;
  BlockTable swa_table_;
  std::unique_ptr<BatchedForward> fwd_;
  std::vector<float> logits_;
  KVTap* tap_ = nullptr;
};

}  // namespace kvscope
