// Sequence embeddings from the KV cache (the spec's aggregate_kv): for each token, per selected
// layer and KV head the vector [K_h | V_h] (2 * head_dim), averaged over layers and heads and
// L2-normalized; pooled over a token range by the mean (renormalized) or the last token.
// The baselines of the embedding benchmark come from the same call: the mean of the input token
// embeddings, and the mean of the residual stream after the last layer.
#pragma once
#include <optional>
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
};

// The first `dims` values, L2-normalized again. InputError when dims is not in [1, v.size()].
std::vector<float> truncate_dimensions(std::vector<float> v, int dims);

// Reuses one Context across calls (the server keeps one per worker; not thread-safe).
class Embedder {
 public:
  explicit Embedder(const Model& model, ContextParams cp = {});
  // Unit vector of embedding_dim(o) values (or o.dimensions). Throws InputError on empty input,
  // an empty token range, or a prompt longer than the context.
  std::vector<float> embed(const std::vector<int32_t>& tokens, const EmbeddingOptions& o);
  std::vector<float> embed_text(const std::string& text, const EmbeddingOptions& o);  // BOS added as the model wants
  int embedding_dim(const EmbeddingOptions& o) const;
  Context& context() { return ctx_; }

 private:
  const Model& model_;
  Context ctx_;
};

// One-shot convenience: a fresh Embedder for one call.
std::vector<float> embed(const Model& model, const std::vector<int32_t>& tokens, const EmbeddingOptions& o);

double cosine(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace kvscope::signals
