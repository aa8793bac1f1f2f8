// Causal multi-head attention over the KV cache (GQA: each KV head serves n_head / n_head_kv
// query heads). Reads K/V by position through KVCache, so the storage behind it can change.
#pragma once
#include <cmath>

#include "kernels/threadpool.h"
#include "kvcache/kv_cache.h"

namespace kvscope {

struct AttentionShape {
  int n_head = 0, n_head_kv = 0, head_dim = 0;
  float scale = 0.0f;    // applied to q.k (0: 1/sqrt(head_dim))
  float softcap = 0.0f;  // scores become softcap * tanh(score / softcap) before the softmax (0: off)
  int window = 0;        // sliding window: position p sees [p - window + 1, p] (0: all of [0, p])
  float score_scale() const { return scale > 0 ? scale : 1.0f / std::sqrt(static_cast<float>(head_dim)); }
  int first_pos(int p) const { return window > 0 && p - window + 1 > 0 ? p - window + 1 : 0; }
};

// q: [n_tokens x n_head*head_dim], token i at position pos0 + i attends to positions [0, pos0 + i].
// out: [n_tokens x n_head*head_dim]. scratch: n_threads * n_ctx floats.
void attention(const KVCache& kv, int layer, const AttentionShape& s, const float* q, int n_tokens, int pos0,
               float* out, float* scratch, kernels::ThreadPool& pool);

}  // namespace kvscope
