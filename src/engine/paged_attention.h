// Causal GQA attention reading K/V through block tables (PagedAttention on CPU). One call serves
// every sequence of a batched step: each has its own block table, positions and rows of q/out.
#pragma once
#include <vector>

#include "engine/attention.h"
#include "kvcache/paged_kv_cache.h"

namespace kvscope {

struct SeqAttention {
  const BlockId* blocks = nullptr;  // the sequence's block table
  int n_blocks = 0;
  int pos0 = 0;      // position of its first query token; token t attends to [0, pos0 + t]
  int n_tokens = 0;
  int row0 = 0;      // its first row in q and out
};

// q, out: [rows x n_head*head_dim]. Work is (sequence, token, KV head) items spread over the pool;
// each item reads its K/V rows once for all query heads of the group. scratch grows as needed.
void paged_attention(const PagedKVCache& kv, int layer, const AttentionShape& s, const float* q,
                     const std::vector<SeqAttention>& seqs, float* out, std::vector<float>& scratch,
                     kernels::ThreadPool& pool);

// Single-threaded scalar reference (kernels::ref ops), for tests.
void paged_attention_ref(const PagedKVCache& kv, int layer, const AttentionShape& s, const float* q,
                         const std::vector<SeqAttention>& seqs, float* out);

}  // namespace kvscope
