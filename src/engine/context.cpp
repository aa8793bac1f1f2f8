// The forward pass of a Llama-family decoder over one sequence, chunked for long prompts.
#include "engine/context.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "engine/attention.h"
#include "engine/rope.h"
#include "util/error.h"

namespace kvscope {

using kernels::matmul;

struct Context::Scratch {
  Scratch(const HParams& hp, int n_batch, int n_ctx, int n_threads, const float* freq_factors)
      : rope(hp, freq_factors),
        x(static_cast<size_t>(n_batch) * hp.n_embd),
        xn(x.size()),
        q(static_cast<size_t>(n_batch) * hp.n_q_dim()),
        k(static_cast<size_t>(n_batch) * hp.n_kv_dim()),
        v(k.size()),
        att(q.size()),
        gate(static_cast<size_t>(n_batch) * hp.n_ff),
        up(gate.size()),
        scores(static_cast<size_t>(n_threads) * n_ctx) {}
  Rope rope;
  std::vector<float> x, xn, q, k, v, att, gate, up, scores;
};

Context::Context(const Model& model, ContextParams p) : model_(model) {
  const HParams& hp = model.hparams();
  n_ctx_ = p.n_ctx > 0 ? p.n_ctx : hp.n_ctx_train;
  if (p.n_ctx < 0) throw InputError("context size must be positive");
  n_batch_ = std::clamp(p.n_batch, 1, 4096);
  int threads = p.n_threads > 0 ? p.n_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  pool_ = std::make_unique<kernels::ThreadPool>(threads);
  kv_ = make_contiguous_kv_cache(hp.n_layer, n_ctx_, hp.n_kv_dim());
  s_ = std::make_unique<Scratch>(hp, n_batch_, n_ctx_, threads, model.rope_freqs);
}

Context::~Context() = default;

void Context::truncate(int n) {
  if (n < 0 || n > n_past_) throw InputError("truncate: position out of range");
  n_past_ = n;
}

const std::vector<float>& Context::eval(const std::vector<int32_t>& tokens, bool all_logits) {
  const HParams& hp = model_.hparams();
  if (tokens.empty()) throw InputError("nothing to evaluate: empty token list");
  if (n_past_ + static_cast<int64_t>(tokens.size()) > n_ctx_)
    throw LimitError("prompt too long: " + std::to_string(n_past_ + tokens.size()) + " tokens exceed the context of " +
                     std::to_string(n_ctx_));
  for (int32_t t : tokens)
    if (t < 0 || t >= hp.n_vocab)
      throw InputError("token id " + std::to_string(t) + " out of range (vocabulary has " + std::to_string(hp.n_vocab) + ")");
  const size_t nv = static_cast<size_t>(hp.n_vocab);
  logits_.assign(all_logits ? tokens.size() * nv : nv, 0.0f);
  for (size_t i = 0; i < tokens.size(); i += n_batch_) {
    const int n = static_cast<int>(std::min<size_t>(n_batch_, tokens.size() - i));
    const bool last = i + n == tokens.size();
    if (all_logits)
      forward_chunk(tokens.data() + i, n, true, logits_.data() + i * nv);
    else
      forward_chunk(tokens.data() + i, n, false, last ? logits_.data() : nullptr);
  }
  return logits_;
}

void Context::forward_chunk(const int32_t* tokens, int n, bool all_logits, float* logits_out) {
  const HParams& hp = model_.hparams();
  Scratch& s = *s_;
  const int d = hp.n_embd, qd = hp.n_q_dim(), kvd = hp.n_kv_dim(), ff = hp.n_ff;
  const int pos0 = n_past_;
  kernels::ThreadPool& pool = *pool_;

  for (int t = 0; t < n; ++t) {
    const auto& e = model_.tok_embd;
    const uint8_t* row = static_cast<const uint8_t*>(e.data) + kernels::row_bytes(e.type, e.cols) * tokens[t];
    kernels::dequantize_row(e.type, row, s.x.data() + static_cast<size_t>(t) * d, d);
  }
  const AttentionShape ashape{hp.n_head, hp.n_head_kv, hp.head_dim};
  auto add_bias = [](float* y, const float* b, int rows, int dim) {
    if (!b) return;
    for (int r = 0; r < rows; ++r) kernels::add_inplace(y + static_cast<size_t>(r) * dim, b, dim);
  };

  for (int l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = model_.layers[l];
    for (int t = 0; t < n; ++t)
      kernels::rmsnorm(s.x.data() + static_cast<size_t>(t) * d, L.attn_norm, s.xn.data() + static_cast<size_t>(t) * d, d,
                       hp.norm_eps);
    matmul(L.wq, s.xn.data(), n, s.q.data(), pool);
    matmul(L.wk, s.xn.data(), n, s.k.data(), pool);
    matmul(L.wv, s.xn.data(), n, s.v.data(), pool);
    add_bias(s.q.data(), L.bq, n, qd);
    add_bias(s.k.data(), L.bk, n, kvd);
    add_bias(s.v.data(), L.bv, n, kvd);
    for (int t = 0; t < n; ++t) {
      float* qt = s.q.data() + static_cast<size_t>(t) * qd;
      float* kt = s.k.data() + static_cast<size_t>(t) * kvd;
      if (L.q_norm) {
        for (int h = 0; h < hp.n_head; ++h) kernels::rmsnorm(qt + h * hp.head_dim, L.q_norm, qt + h * hp.head_dim, hp.head_dim, hp.norm_eps);
        for (int h = 0; h < hp.n_head_kv; ++h) kernels::rmsnorm(kt + h * hp.head_dim, L.k_norm, kt + h * hp.head_dim, hp.head_dim, hp.norm_eps);
      }
      s.rope.apply(qt, hp.n_head, pos0 + t);
      s.rope.apply(kt, hp.n_head_kv, pos0 + t);
      kv_->write(l, pos0 + t, kt, s.v.data() + static_cast<size_t>(t) * kvd);
    }
    attention(*kv_, l, ashape, s.q.data(), n, pos0, s.att.data(), s.scores.data(), pool);
    matmul(L.wo, s.att.data(), n, s.xn.data(), pool);
    kernels::add_inplace(s.x.data(), s.xn.data(), static_cast<int64_t>(n) * d);

    for (int t = 0; t < n; ++t)
      kernels::rmsnorm(s.x.data() + static_cast<size_t>(t) * d, L.ffn_norm, s.xn.data() + static_cast<size_t>(t) * d, d,
                       hp.norm_eps);
    matmul(L.w_gate, s.xn.data(), n, s.gate.data(), pool);
    matmul(L.w_up, s.xn.data(), n, s.up.data(), pool);
    kernels::silu_mul(s.gate.data(), s.up.data(), s.gate.data(), static_cast<int64_t>(n) * ff);
    matmul(L.w_down, s.gate.data(), n, s.xn.data(), pool);
    kernels::add_inplace(s.x.data(), s.xn.data(), static_cast<int64_t>(n) * d);
  }
  n_past_ += n;
  if (!logits_out) return;
  // Only the rows whose logits are wanted go through the (large) output matrix.
  const int first = all_logits ? 0 : n - 1;
  const int rows = n - first;
  for (int t = first; t < n; ++t)
    kernels::rmsnorm(s.x.data() + static_cast<size_t>(t) * d, model_.output_norm, s.xn.data() + static_cast<size_t>(t - first) * d,
                     d, hp.norm_eps);
  matmul(model_.output, s.xn.data(), rows, logits_out, pool);
}

}  // namespace kvscope
