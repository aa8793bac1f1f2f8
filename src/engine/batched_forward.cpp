// The Llama-family decoder over a batch of sequences (the one forward implementation: Context
// runs it with a single sequence).
#include <algorithm>
#include <string>

#include "engine/batched_forward.h"
#include "engine/paged_attention.h"
#include "engine/rope.h"
#include "util/error.h"

namespace kvscope {

using kernels::matmul;

struct BatchedForward::Scratch {
  Scratch(const HParams& hp, const float* freq_factors) : rope(hp, freq_factors) {}
  void reserve(const HParams& hp, int n) {
    if (n <= cap) return;
    cap = n;
    const size_t m = static_cast<size_t>(n);
    x.resize(m * hp.n_embd);
    xn.resize(m * hp.n_embd);
    q.resize(m * hp.n_q_dim());
    k.resize(m * hp.n_kv_dim());
    v.resize(m * hp.n_kv_dim());
    att.resize(m * hp.n_q_dim());
    gate.resize(m * hp.n_ff);
    up.resize(m * hp.n_ff);
  }
  Rope rope;
  int cap = 0;
  std::vector<float> x, xn, q, k, v, att, gate, up, scores, logits;
  std::vector<int> pos;        // per batch row: its position
  std::vector<BlockId> block;  // per batch row: its block
  std::vector<SeqAttention> att_seqs;
};

PagedKVConfig kv_config_for(const HParams& hp, int n_blocks, size_t mem_bytes, kernels::DType kv_type, int block_size) {
  PagedKVConfig c;
  c.n_layer = hp.n_layer;
  c.kv_dim = hp.n_kv_dim();
  c.block_size = block_size;
  c.n_blocks = n_blocks;
  c.mem_bytes = mem_bytes;
  c.layer_types.assign(hp.n_layer, kv_type);
  return c;
}

BatchedForward::BatchedForward(const Model& model, PagedKVCache& kv, kernels::ThreadPool& pool)
    : model_(model), kv_(kv), pool_(pool), s_(std::make_unique<Scratch>(model.hparams(), model.rope_freqs)) {
  const HParams& hp = model.hparams();
  if (kv.n_layer() != hp.n_layer || kv.kv_dim() != hp.n_kv_dim()) throw InputError("KV cache shape does not fit the model");
}

BatchedForward::~BatchedForward() = default;

void BatchedForward::run(const std::vector<BatchSeq>& seqs) {
  const HParams& hp = model_.hparams();
  Scratch& s = *s_;
  const int d = hp.n_embd, qd = hp.n_q_dim(), kvd = hp.n_kv_dim(), ff = hp.n_ff;
  const int bs = kv_.block_size();
  kernels::ThreadPool& pool = pool_;

  int n = 0;
  for (const BatchSeq& q : seqs) {
    if (q.n_tokens <= 0 || q.pos0 < 0 || !q.table) throw InputError("batch: empty or malformed sequence");
    if (q.table->capacity(bs) < q.pos0 + q.n_tokens) throw LimitError("batch: block table has no room for the tokens");
    for (int t = 0; t < q.n_tokens; ++t)
      if (q.tokens[t] < 0 || q.tokens[t] >= hp.n_vocab)
        throw InputError("token id " + std::to_string(q.tokens[t]) + " out of range (vocabulary has " +
                         std::to_string(hp.n_vocab) + ")");
    n += q.n_tokens;
  }
  if (n == 0) return;
  s.reserve(hp, n);
  s.pos.resize(n);
  s.block.resize(n);
  s.att_seqs.clear();
  {
    int row = 0;
    for (const BatchSeq& q : seqs) {
      s.att_seqs.push_back({q.table->blocks().data(), q.table->n_blocks(), q.pos0, q.n_tokens, row});
      for (int t = 0; t < q.n_tokens; ++t, ++row) {
        s.pos[row] = q.pos0 + t;
        s.block[row] = q.table->block_of(q.pos0 + t, bs);
        const auto& e = model_.tok_embd;
        const uint8_t* src = static_cast<const uint8_t*>(e.data) + kernels::row_bytes(e.type, e.cols) * q.tokens[t];
        kernels::dequantize_row(e.type, src, s.x.data() + static_cast<size_t>(row) * d, d);
      }
    }
  }
  const AttentionShape ashape{hp.n_head, hp.n_head_kv, hp.head_dim};
  auto add_bias = [](float* y, const float* b, int rows, int dim) {
    if (!b) return;
    for (int r = 0; r < rows; ++r) kernels::add_inplace(y + static_cast<size_t>(r) * dim, b, dim);
  };
  auto norm_rows = [&](const float* w, int rows) {
    for (int t = 0; t < rows; ++t)
      kernels::rmsnorm(s.x.data() + static_cast<size_t>(t) * d, w, s.xn.data() + static_cast<size_t>(t) * d, d, hp.norm_eps);
  };

  // Taps see each sequence's rows of a step together; the rows of one sequence are contiguous.
  auto tap_rows = [&](auto&& fn) {
    for (size_t i = 0; i < seqs.size(); ++i)
      if (seqs[i].tap) fn(*seqs[i].tap, seqs[i], static_cast<size_t>(s.att_seqs[i].row0));
  };
  auto tap_hidden = [&](int layer) {
    tap_rows([&](KVTap& tp, const BatchSeq& q, size_t row0) {
      if (tp.hidden) tp.on_hidden(layer, q.pos0, q.n_tokens, s.x.data() + row0 * d);
    });
  };
  auto tap_kv = [&](int layer, bool pre_rope) {
    tap_rows([&](KVTap& tp, const BatchSeq& q, size_t row0) {
      if (tp.pre_rope == pre_rope) tp.on_kv(layer, q.pos0, q.n_tokens, s.k.data() + row0 * kvd, s.v.data() + row0 * kvd);
    });
  };
  tap_hidden(-1);

  for (int l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = model_.layers[l];
    norm_rows(L.attn_norm, n);
    {
      const kernels::WeightRef qkv[3] = {L.wq, L.wk, L.wv};
      float* const outs[3] = {s.q.data(), s.k.data(), s.v.data()};
      kernels::matmul_multi(qkv, outs, 3, s.xn.data(), n, pool);
    }
    add_bias(s.q.data(), L.bq, n, qd);
    add_bias(s.k.data(), L.bk, n, kvd);
    add_bias(s.v.data(), L.bv, n, kvd);
    if (L.q_norm) {
      for (int t = 0; t < n; ++t) {
        float* qt = s.q.data() + static_cast<size_t>(t) * qd;
        float* kt = s.k.data() + static_cast<size_t>(t) * kvd;
        for (int h = 0; h < hp.n_head; ++h) kernels::rmsnorm(qt + h * hp.head_dim, L.q_norm, qt + h * hp.head_dim, hp.head_dim, hp.norm_eps);
        for (int h = 0; h < hp.n_head_kv; ++h) kernels::rmsnorm(kt + h * hp.head_dim, L.k_norm, kt + h * hp.head_dim, hp.head_dim, hp.norm_eps);
      }
    }
    tap_kv(l, true);  // K before RoPE
    for (int t = 0; t < n; ++t) {
      float* qt = s.q.data() + static_cast<size_t>(t) * qd;
      float* kt = s.k.data() + static_cast<size_t>(t) * kvd;
      s.rope.apply(qt, hp.n_head, kt, hp.n_head_kv, s.pos[t]);
      kv_.write(l, s.block[t], s.pos[t] % bs, kt, s.v.data() + static_cast<size_t>(t) * kvd);
    }
    tap_kv(l, false);
    paged_attention(kv_, l, ashape, s.q.data(), s.att_seqs, s.att.data(), s.scores, pool);
    matmul(L.wo, s.att.data(), n, s.xn.data(), pool);
    kernels::add_inplace(s.x.data(), s.xn.data(), static_cast<int64_t>(n) * d);

    norm_rows(L.ffn_norm, n);
    {
      const kernels::WeightRef gu[2] = {L.w_gate, L.w_up};
      float* const outs[2] = {s.gate.data(), s.up.data()};
      kernels::matmul_multi(gu, outs, 2, s.xn.data(), n, pool);
    }
    kernels::silu_mul(s.gate.data(), s.up.data(), s.gate.data(), static_cast<int64_t>(n) * ff);
    matmul(L.w_down, s.gate.data(), n, s.xn.data(), pool);
    kernels::add_inplace(s.x.data(), s.xn.data(), static_cast<int64_t>(n) * d);
    tap_hidden(l);
  }

  // Only the rows whose logits are wanted go through the (large) output matrix, all in one matmul.
  int rows = 0, row = 0;
  for (const BatchSeq& q : seqs) {
    const int first = q.logits == LogitsMode::All ? 0 : q.logits == LogitsMode::Last ? q.n_tokens - 1 : q.n_tokens;
    for (int t = first; t < q.n_tokens; ++t, ++rows)
      kernels::rmsnorm(s.x.data() + static_cast<size_t>(row + t) * d, model_.output_norm,
                       s.xn.data() + static_cast<size_t>(rows) * d, d, hp.norm_eps);
    row += q.n_tokens;
  }
  if (rows == 0) return;
  const size_t nv = static_cast<size_t>(hp.n_vocab);
  // A lone sequence writes straight into its buffer (the single-sequence Context path).
  const bool direct = seqs.size() == 1 && seqs[0].logits_out;
  if (!direct && s.logits.size() < rows * nv) s.logits.resize(rows * nv);
  float* dst = direct ? seqs[0].logits_out : s.logits.data();
  matmul(model_.output, s.xn.data(), rows, dst, pool);
  if (direct) return;
  rows = 0;
  for (const BatchSeq& q : seqs) {
    const int k = q.logits == LogitsMode::All ? q.n_tokens : q.logits == LogitsMode::Last ? 1 : 0;
    if (k && q.logits_out) std::copy(dst + rows * nv, dst + (rows + k) * nv, q.logits_out);
    rows += k;
  }
}

}  // namespace kvscope
