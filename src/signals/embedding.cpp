#include "signals/embedding.h"

#include <cmath>

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

Embedder::Embedder(const Model& model, ContextParams cp) : model_(model), ctx_(model, cp) {}

int Embedder::embedding_dim(const EmbeddingOptions& o) const {
  const HParams& hp = model_.hparams();
  switch (o.source) {
    case EmbedSource::KV: return 2 * hp.head_dim;
    case EmbedSource::TokenEmbedding:
    case EmbedSource::LastHidden: return hp.n_embd;
  }
  return 0;
}

std::vector<float> Embedder::embed(const std::vector<int32_t>& tokens, const EmbeddingOptions& o) {
  const HParams& hp = model_.hparams();
  if (tokens.empty()) throw InputError("nothing to embed: empty input");
  const int n = static_cast<int>(tokens.size());
  int begin = o.token_begin;
  if (begin < 0) begin = (n > 1 && tokens[0] == model_.tokenizer().vocab().bos) ? 1 : 0;
  const int end = o.token_end < 0 ? n : std::min(o.token_end, n);
  if (begin >= end)
    throw InputError("empty token range [" + std::to_string(begin) + ", " + std::to_string(end) + ") of " +
                     std::to_string(n) + " tokens");
  // Last-token pooling is mean pooling over a one-token range.
  if (o.pool == Pool::Last) begin = end - 1;
  std::vector<float> out;
  if (o.source == EmbedSource::TokenEmbedding) {
    for (int32_t t : tokens)
      if (t < 0 || t >= hp.n_vocab) throw InputError("token id " + std::to_string(t) + " out of range");
    const auto& e = model_.tok_embd;
    std::vector<float> row(hp.n_embd);
    out.assign(hp.n_embd, 0.0f);
    for (int i = begin; i < end; ++i) {
      const uint8_t* src = static_cast<const uint8_t*>(e.data) + kernels::row_bytes(e.type, e.cols) * tokens[i];
      kernels::dequantize_row(e.type, src, row.data(), hp.n_embd);
      kernels::add_inplace(out.data(), row.data(), hp.n_embd);
    }
    normalize(out);
  } else {
    TapOptions to;
    to.layers = parse_layers(o.layers, hp.n_layer);
    to.pre_rope = o.pre_rope;
    to.begin = begin;
    to.end = end;
    to.hidden = o.source == EmbedSource::LastHidden;
    FeatureTap tap(hp, to);
    ctx_.reset();
    ctx_.set_tap(&tap);
    try {
      ctx_.eval(std::vector<int32_t>(tokens.begin(), tokens.begin() + end));
    } catch (...) {
      ctx_.set_tap(nullptr);
      throw;
    }
    ctx_.set_tap(nullptr);
    if (o.source == EmbedSource::KV) {
      out = tap.pooled_mean();
    } else {
      out = tap.hidden_means().back();
      normalize(out);
    }
  }
  if (o.dimensions > 0) out = truncate_dimensions(std::move(out), o.dimensions);
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
