// Chunked perplexity (see perplexity.h for the convention).
#include "engine/perplexity.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "util/error.h"

namespace kvscope {

PerplexityResult perplexity(const Model& model, const std::vector<int32_t>& tokens, ContextParams cp, int n_chunks,
                            const std::function<void(const PerplexityChunk&)>& on_chunk) {
  const int n_ctx = cp.n_ctx;
  if (n_ctx < 4) throw InputError("perplexity: context size must be at least 4");
  if (static_cast<int64_t>(tokens.size()) < 2 * static_cast<int64_t>(n_ctx))
    throw InputError("perplexity: the text has " + std::to_string(tokens.size()) + " tokens; at least " +
                     std::to_string(2 * n_ctx) + " are needed for a context of " + std::to_string(n_ctx) +
                     " (give a longer text or a smaller -c)");
  const int64_t max_chunks = static_cast<int64_t>(tokens.size()) / n_ctx;
  const int64_t nc = n_chunks < 0 ? max_chunks : std::min<int64_t>(n_chunks, max_chunks);
  const auto& vocab = model.tokenizer().vocab();
  const bool add_bos = vocab.add_bos && vocab.bos >= 0;
  const int nv = model.hparams().n_vocab;
  const int first = n_ctx / 2;

  Context ctx(model, cp);
  PerplexityResult r;
  r.n_tokens = static_cast<int64_t>(tokens.size());
  double nll = 0, nll2 = 0, secs = 0;
  std::vector<int32_t> chunk(static_cast<size_t>(n_ctx));
  for (int64_t c = 0; c < nc; ++c) {
    std::copy(tokens.begin() + c * n_ctx, tokens.begin() + (c + 1) * n_ctx, chunk.begin());
    if (add_bos) chunk[0] = vocab.bos;
    ctx.reset();
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<float>& logits = ctx.eval(chunk, true);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    PerplexityChunk pc;
    pc.index = static_cast<int>(c);
    pc.seconds = dt;
    for (int j = first; j < n_ctx - 1; ++j) {
      const float* l = logits.data() + static_cast<size_t>(j) * nv;
      const float mx = *std::max_element(l, l + nv);
      double se = 0;
      for (int v = 0; v < nv; ++v) se += std::exp(static_cast<double>(l[v]) - mx);
      const double lp = static_cast<double>(l[chunk[j + 1]]) - mx - std::log(se);
      pc.nll -= lp;
      nll -= lp;
      nll2 += lp * lp;
      ++pc.n_scored;
    }
    r.n_scored += pc.n_scored;
    secs += dt;
    pc.running_ppl = std::exp(nll / static_cast<double>(r.n_scored));
    r.chunks.push_back(pc);
    if (on_chunk) on_chunk(pc);
  }
  const double n = static_cast<double>(r.n_scored);
  r.nll_mean = nll / n;
  r.ppl = std::exp(r.nll_mean);
  const double var = nll2 / n - r.nll_mean * r.nll_mean;
  r.ppl_err = var > 0 && n > 1 ? std::sqrt(var / (n - 1)) * r.ppl : 0.0;
  r.seconds_per_pass = secs / static_cast<double>(nc);
  return r;
}

}  // namespace kvscope
