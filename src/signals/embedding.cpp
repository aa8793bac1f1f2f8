#include "signals/embedding.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "engine/batched_forward.h"
#include "kernels/kernels.h"
#include "util/error.h"

namespace kvscope::signals {

namespace {

void normalize(std::vector<float>& v) {
  double nn = 0;
  for (float x : v) nn += double(x) * x;
  if (nn <= 0) return;
  const float s = static_cast<float>(1.0 / std::sqrt(nn));
  for (float& x : v) x *= s;
}

}  // namespace

std::optional<Pool> parse_pool(const std::string& s) {
  if (s == "mean") return Pool::Mean;
  if (s == "last") return Pool::Last;
  return std::nullopt;
}

std::optional<EmbedSource> parse_source(const std::string& s) {
  if (s == "kv") return EmbedSource::KV;
  if (s == "token") return EmbedSource::TokenEmbedding;
  if (s == "hidden") return EmbedSource::LastHidden;
  return std::nullopt;
}

std::vector<float> truncate_dimensions(std::vector<float> v, int dims) {
  if (dims < 1 || dims > static_cast<int>(v.size()))
    throw InputError("dimensions must be between 1 and " + std::to_string(v.size()) + " (got " + std::to_string(dims) + ")");
  v.resize(dims);
  normalize(v);
  return v;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) throw InputError("cosine: vectors differ in length");
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
}

struct Embedder::Engine {
  Engine(const Model& m, int threads, int n_blocks)
      : pool(threads), kv(kv_config_for(m.hparams(), n_blocks)), fwd(m, kv, pool) {}
  kernels::ThreadPool pool;
  PagedKVCache kv;
  BatchedForward fwd;
};

namespace {
constexpr int kMaxSeqsPerStep = 64;
}

Embedder::Embedder(const Model& model, ContextParams cp) : model_(model) {
  const HParams& hp = model.hparams();
  if (cp.n_ctx < 0) throw InputError("context size must be positive");
  n_ctx_ = cp.n_ctx > 0 ? cp.n_ctx : hp.n_ctx_train;
  n_batch_ = std::clamp(cp.n_batch, 1, 4096);
  const int threads = cp.n_threads > 0 ? cp.n_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Room for the longest input, or a full step of short ones (each may round up one block).
  const int bs = 16;
  const int n_blocks = (std::max(n_ctx_, n_batch_) + bs - 1) / bs + kMaxSeqsPerStep;
  e_ = std::make_unique<Engine>(model, threads, n_blocks);
}

Embedder::~Embedder() = default;

Embedder::Range Embedder::range_of(const std::vector<int32_t>& tokens, const EmbeddingOptions& o) const {
  const HParams& hp = model_.hparams();
  if (tokens.empty()) throw InputError("nothing to embed: empty input");
  const int n = static_cast<int>(tokens.size());
  if (n > n_ctx_)
    throw LimitError("input of " + std::to_string(n) + " tokens exceeds the context of " + std::to_string(n_ctx_));
  for (int32_t t : tokens)
    if (t < 0 || t >= hp.n_vocab)
      throw InputError("token id " + std::to_string(t) + " out of range (vocabulary has " + std::to_string(hp.n_vocab) + ")");
  int begin = o.token_begin;
  if (begin < 0) begin = (n > 1 && tokens[0] == model_.tokenizer().vocab().bos) ? 1 : 0;
  const int end = o.token_end < 0 ? n : std::min(o.token_end, n);
  if (begin >= end)
    throw InputError("empty token range [" + std::to_string(begin) + ", " + std::to_string(end) + ") of " +
                     std::to_string(n) + " tokens");
  // Last-token pooling is mean pooling over a one-token range.
  if (o.pool == Pool::Last) begin = end - 1;
  return {begin, end};
}

int Embedder::embedding_dim(const EmbeddingOptions& o) const {
  const HParams& hp = model_.hparams();
  switch (o.source) {
    case EmbedSource::KV: return 2 * hp.head_dim;
    case EmbedSource::TokenEmbedding:
    case EmbedSource::LastHidden: return hp.n_embd;
  }
  return 0;
}

std::vector<float> Embedder::finish(const FeatureTap& tap, const EmbeddingOptions& o) const {
  std::vector<float> out;
  if (o.source == EmbedSource::KV) {
    out = tap.pooled_mean();
  } else {
    out = tap.hidden_means().back();
    normalize(out);
  }
  if (o.dimensions > 0) out = truncate_dimensions(std::move(out), o.dimensions);
  return out;
}

std::vector<float> Embedder::embed(const std::vector<int32_t>& tokens, const EmbeddingOptions& o) {
  return embed_many({tokens}, o)[0];
}

void Embedder::validate(const std::vector<std::vector<int32_t>>& inputs, const EmbeddingOptions& o) const {
  if (inputs.empty()) throw InputError("nothing to embed: no inputs");
  for (const auto& t : inputs) range_of(t, o);
  if (o.dimensions > embedding_dim(o))
    throw InputError("dimensions must be between 1 and " + std::to_string(embedding_dim(o)) + " (got " +
                     std::to_string(o.dimensions) + ")");
  if (o.source == EmbedSource::KV) parse_layers(o.layers, model_.hparams().n_layer);
}

std::vector<std::vector<float>> Embedder::embed_many(const std::vector<std::vector<int32_t>>& inputs,
                                                     const EmbeddingOptions& o) {
  const HParams& hp = model_.hparams();
  if (inputs.empty()) throw InputError("nothing to embed: no inputs");
  std::vector<Range> ranges;
  for (const auto& t : inputs) ranges.push_back(range_of(t, o));
  if (o.dimensions > embedding_dim(o))
    throw InputError("dimensions must be between 1 and " + std::to_string(embedding_dim(o)) + " (got " +
                     std::to_string(o.dimensions) + ")");
  std::vector<std::vector<float>> out(inputs.size());
  if (o.source == EmbedSource::TokenEmbedding) {
    const auto& e = model_.tok_embd;
    std::vector<float> row(hp.n_embd);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (o.cancelled && o.cancelled()) throw EmbeddingCancelled();
      std::vector<float> v(hp.n_embd, 0.0f);
      for (int p = ranges[i].begin; p < ranges[i].end; ++p) {
        const uint8_t* src = static_cast<const uint8_t*>(e.data) + kernels::row_bytes(e.type, e.cols) * inputs[i][p];
        kernels::dequantize_row(e.type, src, row.data(), hp.n_embd);
        kernels::add_inplace(v.data(), row.data(), hp.n_embd);
      }
      normalize(v);
      if (o.dimensions > 0) v = truncate_dimensions(std::move(v), o.dimensions);
      out[i] = std::move(v);
    }
    return out;
  }
  TapOptions to;
  to.layers = parse_layers(o.layers, hp.n_layer);
  to.pre_rope = o.pre_rope;
  to.hidden = o.source == EmbedSource::LastHidden;
  PagedKVCache& kv = e_->kv;
  // Steps of whole inputs up to the token budget; a longer input runs alone, in chunks.
  for (size_t first = 0; first < inputs.size();) {
    size_t last = first + 1;
    int tokens = ranges[first].end;
    while (last < inputs.size() && static_cast<int>(last - first) < kMaxSeqsPerStep && tokens + ranges[last].end <= n_batch_)
      tokens += ranges[last++].end;
    std::vector<BlockTable> tables(last - first);
    std::vector<std::unique_ptr<FeatureTap>> taps;
    for (size_t i = first; i < last; ++i) {
      to.begin = ranges[i].begin;
      to.end = ranges[i].end;
      taps.push_back(std::make_unique<FeatureTap>(hp, to));
    }
    struct Release {
      std::vector<BlockTable>& t;
      BlockPool& p;
      ~Release() {
        for (auto& x : t) x.release_all(p);
      }
    } release{tables, kv.pool()};
    for (int pos = 0;; pos += n_batch_) {
      std::vector<BatchSeq> step;
      for (size_t i = first; i < last; ++i) {
        const int end = ranges[i].end, n = std::min(n_batch_, end - pos);
        if (n <= 0) continue;
        if (!tables[i - first].prepare(kv, pos, pos + n)) throw LimitError("embedding: KV cache full");
        BatchSeq q;
        q.table = &tables[i - first];
        q.tokens = inputs[i].data() + pos;
        q.n_tokens = n;
        q.pos0 = pos;
        q.tap = taps[i - first].get();
        step.push_back(q);
      }
      if (step.empty()) break;
      if (o.cancelled && o.cancelled()) throw EmbeddingCancelled();
      e_->fwd.run(step);
    }
    for (size_t i = first; i < last; ++i) out[i] = finish(*taps[i - first], o);
    first = last;
  }
  return out;
}

std::vector<float> Embedder::embed_text(const std::string& text, const EmbeddingOptions& o) {
  if (text.empty()) throw InputError("nothing to embed: empty text");
  return embed(model_.tokenizer().encode(text, true, false), o);
}

std::vector<float> embed(const Model& model, const std::vector<int32_t>& tokens, const EmbeddingOptions& o) {
  ContextParams cp;
  cp.n_ctx = std::max<int>(16, static_cast<int>(tokens.size()));
  Embedder e(model, cp);
  return e.embed(tokens, o);
}

}  // namespace kvscope::signals
