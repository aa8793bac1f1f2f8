#include "engine/paged_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/attention_block.h"
#include "kernels/kernels.h"

namespace kvscope {
namespace {


struct Ops {
  float (*dot)(const float*, const float*, int64_t);
  void (*axpy)(float, const float*, float*, int64_t);
  void (*softmax)(float*, int64_t);
  void (*softcap)(float*, int64_t, float);
  // Quantized blocks are read in place by these, each row decoded once for the GQA group.
  void (*kdot)(const KVBlockRef&, int, int, int, const float*, int, float, float*, size_t);
  void (*vaxpy)(const KVBlockRef&, int, int, int, const float*, size_t, int, float*);
  // F32 rows a block at a time instead of one dot/axpy per position and head (null: per position).
  void (*block_scores)(const float*, int, int, const float*, int, int, float, float*, int) = nullptr;
  void (*block_sum)(const float*, int, int, const float*, int, int, int, float*) = nullptr;
};

// F32 blocks (and blocks still in F32 staging) go through the F32 ops, in the contiguous attention's
// order; every other type through the loops that decode it in registers.
bool via_f32(const PagedKVCache& kv, int layer, bool is_k, BlockId b) {
  const KVType t = is_k ? kv.k_type(layer) : kv.v_type(layer);
  return t == KVType::F32 || (is_k ? kv.k_staged(layer, b) : kv.v_staged(layer, b)) != nullptr;
}

// Pointer to the head slice of the rows of an F32 block (or of staging), with stride `*stride`.
const float* block_rows(const PagedKVCache& kv, int layer, bool is_k, BlockId b, int head_off, int* stride) {
  *stride = kv.kv_dim();
  if (const float* st = is_k ? kv.k_staged(layer, b) : kv.v_staged(layer, b)) return st + head_off;
  return static_cast<const float*>(is_k ? kv.k_row(layer, b, 0) : kv.v_row(layer, b, 0)) + head_off;
}

// One (sequence, token, KV head) item. Per query head: dot, scale, softmax, then the weighted sum
// in position order. Without the block functions the F32 arithmetic is the contiguous attention's exactly
// (the reference); the block-wise loops differ from it only in summation order.
void attend_one(const PagedKVCache& kv, int layer, const AttentionShape& s, const float* q, const SeqAttention& sq,
                int t, int kvh, float* out, float* scores, int max_pos, const Ops& ops) {
  const int qdim = s.n_head * s.head_dim, hd = s.head_dim;
  const int group = s.n_head / s.n_head_kv;
  const float scale = s.score_scale();
  const int bs = kv.block_size();
  const int n_pos = sq.pos0 + t + 1;
  // A sliding window starts the walk at the block holding its first position (earlier blocks may
  // already be released); the positions before it in that block are masked out of the softmax.
  const int lo = s.first_pos(n_pos - 1), j0 = lo / bs * bs;
  const float* qrow = q + static_cast<size_t>(sq.row0 + t) * qdim + static_cast<size_t>(kvh) * group * hd;
  float* orow = out + static_cast<size_t>(sq.row0 + t) * qdim + static_cast<size_t>(kvh) * group * hd;
  for (int j = j0; j < n_pos; j += bs) {
    const int n = std::min(bs, n_pos - j);
    const BlockId b = sq.blocks[j / bs];
    if (!via_f32(kv, layer, true, b)) {
      ops.kdot(kv.k_block(layer, b), n, kvh * hd, hd, qrow, group, scale, scores + j, max_pos);
      continue;
    }
    int stride;
    const float* k = block_rows(kv, layer, true, b, kvh * hd, &stride);
    if (ops.block_scores) {
      ops.block_scores(k, stride, n, qrow, hd, group, scale, scores + j, max_pos);
      continue;
    }
    for (int i = 0; i < n; ++i)
      for (int g = 0; g < group; ++g)
        scores[static_cast<size_t>(g) * max_pos + j + i] = ops.dot(qrow + g * hd, k + static_cast<size_t>(i) * stride, hd) * scale;
  }
  for (int g = 0; g < group; ++g) {
    float* sg = scores + static_cast<size_t>(g) * max_pos;
    if (s.softcap > 0) ops.softcap(sg + j0, n_pos - j0, s.softcap);
    for (int j = j0; j < lo; ++j) sg[j] = -INFINITY;
    ops.softmax(sg + j0, n_pos - j0);
    std::memset(orow + g * hd, 0, sizeof(float) * hd);
  }
  for (int j = j0; j < n_pos; j += bs) {
    const int n = std::min(bs, n_pos - j);
    const BlockId b = sq.blocks[j / bs];
    if (!via_f32(kv, layer, false, b)) {
      ops.vaxpy(kv.v_block(layer, b), n, kvh * hd, hd, scores + j, max_pos, group, orow);
      continue;
    }
    int stride;
    const float* v = block_rows(kv, layer, false, b, kvh * hd, &stride);
    if (ops.block_sum) {
      ops.block_sum(v, stride, n, scores + j, max_pos, hd, group, orow);
      continue;
    }
    for (int i = 0; i < n; ++i)
      for (int g = 0; g < group; ++g)
        ops.axpy(scores[static_cast<size_t>(g) * max_pos + j + i], v + static_cast<size_t>(i) * stride, orow + g * hd, hd);
  }
}

int max_positions(const std::vector<SeqAttention>& seqs) {
  int m = 1;
  for (const auto& sq : seqs) m = std::max(m, sq.pos0 + sq.n_tokens);
  return m;
}

}  // namespace

void paged_attention(const PagedKVCache& kv, int layer, const AttentionShape& s, const float* q,
                     const std::vector<SeqAttention>& seqs, float* out, std::vector<float>& scratch,
                     kernels::ThreadPool& pool) {
  const int group = s.n_head / s.n_head_kv;
  const int max_pos = max_positions(seqs);
  const size_t per_thread = static_cast<size_t>(group) * max_pos;
  if (scratch.size() < per_thread * pool.size()) scratch.resize(per_thread * pool.size());
  // Flattened work list: items are interleaved across threads since later tokens cost more.
  std::vector<int> item_seq, item_tok;
  for (int si = 0; si < static_cast<int>(seqs.size()); ++si)
    for (int t = 0; t < seqs[si].n_tokens; ++t) {
      item_seq.push_back(si);
      item_tok.push_back(t);
    }
  const int64_t n_work = static_cast<int64_t>(item_seq.size()) * s.n_head_kv;
  // The block-wise F32 loops exist for AVX-512; elsewhere the per-position ops (AVX2) are faster
  // than their scalar versions.
  const bool avx512 = kernels::active_isa() == kernels::Isa::AVX512;
  const Ops ops{kernels::dot_f32, kernels::axpy, kernels::softmax_inplace, kernels::softcap, kv_dot_group, kv_axpy_group,
                avx512 ? attn::avx512::block_scores : nullptr, avx512 ? attn::avx512::block_weighted_sum : nullptr};
  pool.run([&](int ith, int nth) {
    float* scores = scratch.data() + per_thread * ith;
    for (int64_t w = ith; w < n_work; w += nth) {
      const int item = static_cast<int>(w / s.n_head_kv), kvh = static_cast<int>(w % s.n_head_kv);
      attend_one(kv, layer, s, q, seqs[item_seq[item]], item_tok[item], kvh, out, scores, max_pos, ops);
    }
  });
}

void paged_attention_ref(const PagedKVCache& kv, int layer, const AttentionShape& s, const float* q,
                         const std::vector<SeqAttention>& seqs, float* out) {
  const int group = s.n_head / s.n_head_kv;
  const int max_pos = max_positions(seqs);
  std::vector<float> scores(static_cast<size_t>(group) * max_pos);
  const Ops ops{kernels::ref::dot_f32, kernels::ref::axpy, kernels::ref::softmax_inplace, kernels::ref::softcap,
                kv_ref::kv_dot_group,
                kv_ref::kv_axpy_group};
  for (const auto& sq : seqs)
    for (int t = 0; t < sq.n_tokens; ++t)
      for (int kvh = 0; kvh < s.n_head_kv; ++kvh)
        attend_one(kv, layer, s, q, sq, t, kvh, out, scores.data(), max_pos, ops);
}

}  // namespace kvscope
