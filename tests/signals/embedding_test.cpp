// Embedding invariants a user relies on: unit vectors, determinism, batching independence,
// pooling and dimension truncation.
#include "signals/signals.h"  // the public header pulls in every part

#include <gtest/gtest.h>

#include <cmath>

#include "engine/batched_forward.h"
#include "model/random_model.h"
#include "fixtures.h"
#include "test_util.h"
#include "util/error.h"

namespace embedding_test {

using namespace kvscope;
using namespace kvscope::signals;

namespace {

std::string embed_model() {
  return fixtures::model_file(fixtures::tiny_spec(64, 3, 4, 2, 128, 300, 128, 5), "signals_embed");
}

double l2(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += double(x) * x;
  return std::sqrt(s);
}

}  // namespace

TEST(SignalsEmbedding, UnitNormDeterministicAndDistinct) {
  auto model = Model::load(embed_model());
  Embedder e(*model, {64, 1, 512});
  EmbeddingOptions o;
  for (auto src : {EmbedSource::KV, EmbedSource::TokenEmbedding, EmbedSource::LastHidden}) {
    o.source = src;
    auto a = e.embed_text("the cat sat on the mat", o);
    auto b = e.embed_text("the cat sat on the mat", o);
    auto c = e.embed_text("seven boats and a kettle", o);
    EXPECT_EQ(static_cast<int>(a.size()), e.embedding_dim(o));
    EXPECT_NEAR(l2(a), 1.0, 1e-5);
    EXPECT_EQ(a, b);  // identical text, identical vector (bit for bit)
    EXPECT_LT(cosine(a, c), 0.99999);
  }
  o.source = EmbedSource::KV;
  EXPECT_EQ(e.embed_text("x", o).size(), static_cast<size_t>(2 * model->hparams().head_dim));
  EXPECT_THROW(e.embed_text("", o), InputError);
  EXPECT_THROW(e.embed({}, o), InputError);
}

TEST(SignalsEmbedding, LastPoolingIsTheLastTokenAndRangesSelect) {
  auto model = Model::load(embed_model());
  Embedder e(*model, {64, 1, 512});
  const std::vector<int32_t> toks = {1, 40, 50, 60, 70, 80};
  EmbeddingOptions mean, last, range;
  last.pool = Pool::Last;
  range.token_begin = 5;
  range.token_end = 6;
  const auto m = e.embed(toks, mean), l = e.embed(toks, last), r = e.embed(toks, range);
  for (size_t i = 0; i < l.size(); ++i) EXPECT_NEAR(l[i], r[i], 1e-6);
  EXPECT_LT(cosine(m, l), 0.99999);
  // Mean pooling skips the BOS by default; including it changes the vector.
  EmbeddingOptions with_bos;
  with_bos.token_begin = 0;
  EXPECT_LT(cosine(m, e.embed(toks, with_bos)), 0.99999);
  // Text after the pooled range cannot influence it (causal attention).
  EmbeddingOptions prefix;
  prefix.token_end = 4;
  const auto p1 = e.embed(toks, prefix), p2 = e.embed({1, 40, 50, 60, 99, 98, 97}, prefix);
  for (size_t i = 0; i < p1.size(); ++i) EXPECT_NEAR(p1[i], p2[i], 1e-6);
  range.token_begin = 6;
  EXPECT_THROW(e.embed(toks, range), InputError);
}

TEST(SignalsEmbedding, DimensionsTruncateAndRenormalize) {
  auto model = Model::load(embed_model());
  Embedder e(*model, {64, 1, 512});
  EmbeddingOptions o;
  const auto full = e.embed_text("a short text", o);
  o.dimensions = 8;
  const auto cut = e.embed_text("a short text", o);
  ASSERT_EQ(cut.size(), 8u);
  EXPECT_NEAR(l2(cut), 1.0, 1e-5);
  const double s = l2(std::vector<float>(full.begin(), full.begin() + 8));
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(cut[i], full[i] / s, 1e-6);
  EXPECT_THROW(truncate_dimensions(full, 0), InputError);
  EXPECT_THROW(truncate_dimensions(full, static_cast<int>(full.size()) + 1), InputError);
}

TEST(SignalsEmbedding, BatchingSequencesInOneStepDoesNotChangeThem) {
  auto model = Model::load(embed_model());
  const HParams& hp = model->hparams();
  const std::vector<std::vector<int32_t>> texts = {{1, 20, 30, 40, 50}, {1, 77, 78}, {1, 9, 8, 7, 6, 5, 4, 3}};
  EmbeddingOptions o;
  o.token_begin = 0;
  Embedder single(*model, {64, 1, 512});
  std::vector<std::vector<float>> alone;
  for (const auto& t : texts) alone.push_back(single.embed(t, o));

  PagedKVCache kv(kv_config_for(hp, 16));
  kernels::ThreadPool pool(1);
  BatchedForward fwd(*model, kv, pool);
  std::vector<BlockTable> tables(texts.size());
  std::vector<std::unique_ptr<FeatureTap>> taps;
  std::vector<BatchSeq> batch;
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_TRUE(tables[i].prepare(kv, 0, static_cast<int>(texts[i].size())));
    taps.push_back(std::make_unique<FeatureTap>(hp, TapOptions{parse_layers("mid", hp.n_layer)}));
    BatchSeq q;
    q.table = &tables[i];
    q.tokens = texts[i].data();
    q.n_tokens = static_cast<int>(texts[i].size());
    q.tap = taps.back().get();
    batch.push_back(q);
  }
  fwd.run(batch);
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto b = taps[i]->pooled_mean();
    ASSERT_EQ(b.size(), alone[i].size());
    for (size_t j = 0; j < b.size(); ++j) EXPECT_NEAR(b[j], alone[i][j], 1e-5) << i;
    tables[i].release_all(kv.pool());
  }
}

TEST(SignalsEmbedding, EmbedManyEqualsOneByOneIncludingChunkedInputs) {
  auto model = Model::load(embed_model());
  std::vector<std::vector<int32_t>> inputs = {{1, 20, 30}, {1, 5, 6, 7, 8, 9}, {1}, {1, 100, 101}};
  std::vector<int32_t> longer = {1};
  for (int i = 0; i < 40; ++i) longer.push_back(10 + (i * 7) % 250);
  inputs.push_back(longer);
  EmbeddingOptions o;
  for (auto src : {EmbedSource::KV, EmbedSource::LastHidden, EmbedSource::TokenEmbedding}) {
    o.source = src;
    Embedder batched(*model, {64, 1, 16});  // 16-token steps: the long input runs in chunks
    const auto many = batched.embed_many(inputs, o);
    ASSERT_EQ(many.size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      Embedder one(*model, {64, 1, 512});
      const auto v = one.embed(inputs[i], o);
      ASSERT_EQ(v.size(), many[i].size());
      for (size_t j = 0; j < v.size(); ++j) EXPECT_NEAR(v[j], many[i][j], 1e-5) << i;
    }
  }
  Embedder small(*model, {8, 1, 512});
  EXPECT_THROW(small.embed(longer, o), LimitError);
}

}  // namespace embedding_test
