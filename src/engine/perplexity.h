// Perplexity of a model over a token stream, by llama-perplexity's convention so the numbers are
// comparable: the tokens are cut into non-overlapping chunks of n_ctx; each chunk is evaluated on
// a fresh context with its first token replaced by BOS (when the vocabulary adds one); only the
// second half of each chunk is scored (positions n_ctx/2 .. n_ctx-2 predict the next token), so
// every scored token has at least n_ctx/2 tokens of context.
#pragma once
#include <functional>
#include <vector>

#include "engine/context.h"
#include "model/model.h"

namespace kvscope {

struct PerplexityChunk {
  int index = 0;
  double nll = 0;          // sum of -log p(next token) over this chunk's scored tokens
  int n_scored = 0;
  double running_ppl = 0;  // exp(mean nll) over all chunks so far
  double seconds = 0;      // evaluation time of this chunk (one pass)
};

struct PerplexityResult {
  std::vector<PerplexityChunk> chunks;
  int64_t n_tokens = 0;   // tokens of the text (BOS included)
  int64_t n_scored = 0;
  double nll_mean = 0;
  double ppl = 0;
  double ppl_err = 0;     // standard error of the mean nll, times ppl (as llama-perplexity reports)
  double seconds_per_pass = 0;
};

// tokens: the whole text as the tokenizer encodes it (with BOS when the vocabulary adds one).
// n_chunks < 0: all whole chunks. cp.n_ctx is the chunk length (must be >= 4). Throws InputError
// when the text has fewer than 2 * n_ctx tokens (llama-perplexity's minimum).
PerplexityResult perplexity(const Model& model, const std::vector<int32_t>& tokens, ContextParams cp, int n_chunks,
                            const std::function<void(const PerplexityChunk&)>& on_chunk = {});

}  // namespace kvscope
