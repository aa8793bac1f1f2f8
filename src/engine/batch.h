// The batched forward pass: one step runs the new tokens of several sequences (decode tokens and
// prefill chunks alike) through the decoder, with one kernels::matmul per weight matrix over all
// of the step's tokens, so weights are read once per step. Positions, K/V writes and attention
// are per sequence, through each sequence's block table. Context uses it with a single sequence.
#pragma once
#include <memory>
#include <vector>

#include "kernels/threadpool.h"
#include "kvcache/block_table.h"
#include "kvcache/kv_type_map.h"
#include "kvcache/paged_kv_cache.h"
#include "model/model.h"

namespace kvscope {

enum class LogitsMode { None, Last, All };

// Observes what the forward pass computes for one sequence (the signals module builds embeddings
// and KV-CoE scores on it). Called on the thread running BatchedForward::run, once per layer per
// step with all of that step's tokens of the sequence, in layer order. A sequence without a tap
// costs one null check per layer.
class KVTap {
 public:
  virtual ~KVTap() = default;
  // k, v: n rows of kv_dim floats for positions pos0 .. pos0 + n - 1. K is taken before RoPE when
  // pre_rope is set, else exactly what the cache stores (after RoPE, before F16 rounding).
  virtual void on_kv(int layer, int pos0, int n, const float* k, const float* v) = 0;
  // Only when hidden is set: n rows of n_embd floats, the residual stream after layer `layer`
  // (layer -1: the token embeddings entering layer 0).
  virtual void on_hidden(int layer, int pos0, int n, const float* x) { (void)layer, (void)pos0, (void)n, (void)x; }
  bool pre_rope = false;
  bool hidden = false;
};

struct BatchSeq {
  BlockTable* table = nullptr;  // must already hold writable blocks for [pos0, pos0 + n_tokens)
  const int32_t* tokens = nullptr;
  int n_tokens = 0;
  int pos0 = 0;                 // position of tokens[0]; K/V of [0, pos0) are already cached
  LogitsMode logits = LogitsMode::None;
  float* logits_out = nullptr;  // n_vocab floats (Last) or n_tokens * n_vocab (All)
  KVTap* tap = nullptr;         // optional observer of this sequence's K/V (and hidden states)
  // With a separate sliding-window cache: this sequence's table in it (room for the same positions;
  // blocks before the window may be released).
  BlockTable* swa_table = nullptr;
};

class BatchedForward {
 public:
  // n_ctx_seq: the longest a sequence may grow (picks phi3's long or short rope factors, as llama.cpp
  // does from its per-sequence context); 0: the cache's capacity.
  // swa_kv: a cache holding only the sliding-window layers (kv then holds the others), so that their
  // blocks can be released once out of the window; null: kv holds every layer.
  BatchedForward(const Model& model, PagedKVCache& kv, kernels::ThreadPool& pool, int n_ctx_seq = 0,
                 PagedKVCache* swa_kv = nullptr);
  ~BatchedForward();
  // Throws InputError on out-of-range token ids or tables without room (nothing is written then).
  void run(const std::vector<BatchSeq>& seqs);

  const Model& model() const { return model_; }
  PagedKVCache& kv() { return kv_; }
  kernels::ThreadPool& pool() { return pool_; }

 private:
  struct Scratch;
  const Model& model_;
  PagedKVCache& kv_;
  kernels::ThreadPool& pool_;
  PagedKVCache* swa_kv_ = nullptr;
  std::vector<int> local_layer_;  // model layer -> its index in the cache that holds it
  std::unique_ptr<Scratch> s_;
};

// The KV cache config that fits a model (element type per layer from kv_type: F32 or F16).
PagedKVConfig kv_config_for(const HParams& hp, int n_blocks, size_t mem_bytes = 0,
                            kernels::DType kv_type = kernels::DType::F32, int block_size = 16);
// The same with K/V types per layer (--cache-type-k/-v, --kv-layer-types); InputError on a bad map.
PagedKVConfig kv_config_for(const HParams& hp, int n_blocks, size_t mem_bytes, const KVCacheTypes& types,
                            int block_size = 16);
// The part of a config covering the model's sliding-window layers (swa) or the others, with its own
// block count.
PagedKVConfig kv_config_part(const HParams& hp, const PagedKVConfig& all, bool swa, int n_blocks);

}  // namespace kvscope
