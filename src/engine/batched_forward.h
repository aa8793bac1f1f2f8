// The batched forward pass: one step runs the new tokens of several sequences (decode tokens and
// prefill chunks alike) through the decoder, with one kernels::matmul per weight matrix over all
// of the step's tokens, so weights are read once per step. Positions, K/V writes and attention
// are per sequence, through each sequence's block table. Context uses it with a single sequence.
#pragma once
#include <memory>
#include <vector>

#include "engine/batch.h"
#include "engine/kv_config.h"
#include "kernels/threadpool.h"
#include "kvcache/paged_kv_cache.h"
#include "model/model.h"

namespace kvscope {

class BatchedForward {
 public:
  BatchedForward(const Model& model, PagedKVCache& kv, kernels::ThreadPool& pool);
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
  std::unique_ptr<Scratch> s_;
};

}  // namespace kvscope
