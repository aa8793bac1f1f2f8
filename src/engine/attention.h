// Causal multi-head attention over the KV cache (GQA: each KV head serves n_head / n_head_kv
// query heads). Reads K/V by position through KVCache, so the storage behind it can change.
#pragma once
#include "kernels/threadpool.h"
#include "kvcache/kv_cache.h"

namespace kvscope {

struct AttentionShape {
  int n_head = 0, n_head_kv = 0, head_dim = 0;
};

// q: [n_tokens x n_head*head_dim], token i at position pos0 + i attends to positions [0, pos0 + i].
// out: [n_tokens x n_head*head_dim]. scratch: n_threads * n_ctx floats.
void attention(const KVCache& kv, int layer, const AttentionShape& s, const float* q, int n_tokens, int pos0,
               float* out, float* scratch, kernels::ThreadPool& pool);

}  // namespace kvscope
