// Sequence embeddings from the KV cache (the spec's aggregate_kv): for each token, per selected
// layer and KV head the vector [K_h | V_h] (2 * head_dim), averaged over layers and heads and
// L2-normalized; pooled over a token range by the mean (renormalized) or the last token.
// The baselines of the embedding benchmark come from the same call: the mean of the input token
// embeddings, and the mean of the residual stream after the last layer.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/context.h"
#include "model/model.h"
#include "signals/kv_tap.h"

namespace kvscope::signals {

enum class Pool { Mean, Last };
std::optional<Pool> parse_pool(const std::string& s);  // "mean" | "last"

enum class EmbedSource { KV, TokenEmbedding, LastHidden };
std::optional<EmbedSource> parse_source(const std::string& s);  // "kv" | "token" | "hidden"

struct EmbeddingOptions {
  std::string layers = "mid";   // see parse_layers (KV source only)
  Pool pool = Pool::Mean;
  int token_begin = -1;         // first pooled token; -1: 0, or 1 when tokens[0] is BOS (it is the same for every text)
  int token_end = -1;           // one past the last pooled token; -1: the end
  int dimensions = 0;           // > 0: keep the first N values and renormalize
  bool pre_rope = kDefaultPreRope;
  EmbedSource source = EmbedSource::KV;
  // Asked before each forward step: true abandons the call with EmbeddingCancelled (the server's
  // client hung up, or shutdown's grace ran out). Unset: never.
  std::function<bool()> cancelled;
};

struct EmbeddingCancelled : std::runtime_error {
  EmbeddingCancelled() : std::runtime_error("embedding cancelled") {}
};

// The first `dims` values, L2-normalized again. InputError when dims is not in [1, v.size()].
std::vector<float> truncate_dimensions(std::vector<float> v, int dims);

// Owns a KV cache and forward pass reused across calls (the server keeps one per worker; not
// thread-safe). ContextParams: n_ctx the longest input (0: the model's context), n_threads, and
// n_batch the token budget of one forward step; embed_many packs several inputs into each step.
class Embedder {
 public:
  explicit Embedder(const Model& model, ContextParams cp = {});
  ~Embedder();
  // Unit vector of embedding_dim(o) values (or o.dimensions). Throws InputError on empty input,
  // an empty token range, or an input longer than n_ctx.
  std::vector<float> embed(const std::vector<int32_t>& tokens, const EmbeddingOptions& o);
  std::vector<float> embed_text(const std::string& text, const EmbeddingOptions& o);  // BOS added as the model wants
  // Several inputs, batched into shared forward steps; equal to embedding each alone.
  std::vector<std::vector<float>> embed_many(const std::vector<std::vector<int32_t>>& inputs, const EmbeddingOptions& o);
  int embedding_dim(const EmbeddingOptions& o) const;
  // Every check embed_many makes before computing (lengths, token ids, layers, dimensions), so a
  // caller can answer an error before it commits to a response. Throws as embed_many would.
  void validate(const std::vector<std::vector<int32_t>>& inputs, const EmbeddingOptions& o) const;

 private:
  struct Range {
    int begin, end;
  };
  Range range_of(const std::vector<int32_t>& tokens, const EmbeddingOptions& o) const;
  std::vector<float> finish(const FeatureTap& tap, const EmbeddingOptions& o) const;
  const Model& model_;
  int n_ctx_, n_batch_;
  struct Engine;
  std::unique_ptr<Engine> e_;
};

// One-shot convenience: a fresh Embedder for one call.
std::vector<float> embed(const Model& model, const std::vector<int32_t>& tokens, const EmbeddingOptions& o);

double cosine(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace kvscope::signals
