// Single-sequence inference: chunked prefill and decode through the batched forward pass.
#include "engine/context.h"

#include <algorithm>
#include <thread>

#include "engine/batched_forward.h"
#include "util/error.h"

namespace kvscope {

Context::Context(const Model& model, ContextParams p) : model_(model) {
  const HParams& hp = model.hparams();
  if (p.n_ctx < 0) throw InputError("context size must be positive");
  n_ctx_ = p.n_ctx > 0 ? p.n_ctx : hp.n_ctx_train;
  n_batch_ = std::clamp(p.n_batch, 1, 4096);
  int threads = p.n_threads > 0 ? p.n_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  pool_ = std::make_unique<kernels::ThreadPool>(threads);
  const int bs = 16;
  kv_ = std::make_unique<PagedKVCache>(kv_config_for(hp, (n_ctx_ + bs - 1) / bs, 0, p.kv_type, bs));
  fwd_ = std::make_unique<BatchedForward>(model, *kv_, *pool_);
}

Context::~Context() { release_kv(); }

void Context::release_kv() { table_.release_all(kv_->pool()); }

void Context::truncate(int n) {
  if (n < 0 || n > n_past_) throw InputError("truncate: position out of range");
  table_.truncate(kv_->pool(), n, kv_->block_size());
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
  // The pool is sized for n_ctx tokens and owned by this one table, so this cannot run out.
  if (!table_.prepare(*kv_, n_past_, n_past_ + n)) throw LimitError("KV cache full");
  BatchSeq q;
  q.table = &table_;
  q.tokens = tokens;
  q.n_tokens = n;
  q.pos0 = n_past_;
  q.logits = !logits_out ? LogitsMode::None : all_logits ? LogitsMode::All : LogitsMode::Last;
  q.logits_out = logits_out;
  q.tap = tap_;
  fwd_->run({q});
  n_past_ += n;
}

}  // namespace kvscope
