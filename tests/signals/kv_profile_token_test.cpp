// The per-token part of the KV anomaly profile: its tap against a reference computed from the K/V
// stored in the cache, scores that do not depend on batching or on recomputation, the version-2
// file (and version 1 still read), and a single odd token that the pooled vector hides.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "engine/context.h"
#include "engine/engine.h"
#include "fixtures.h"
#include "model/fingerprint.h"
#include "reasoning/format.h"
#include "reasoning/user_spans.h"
#include "signals/confidence_metrics.h"
#include "signals/kv_profile.h"
#include "signals/kv_tap.h"
#include "test_util.h"
#include "util/error.h"
#include "util/model_file.h"
#include "util/rng.h"

namespace kv_profile_token_test {

using namespace kvscope;
using namespace kvscope::signals;

namespace {

RandomModelSpec spec_model(uint64_t seed = 7) { return fixtures::tiny_spec(64, 4, 4, 2, 128, 300, 128, seed); }

// A prompt of ordinary tokens from [5, 105), seeded.
std::vector<int32_t> prompt(int n, uint64_t seed) {
  util::SplitMix64 r{seed};
  std::vector<int32_t> t = {1};
  for (int i = 1; i < n; ++i) t.push_back(5 + static_cast<int32_t>(r.next() % 100));
  return t;
}

// Every token vector of a prompt, from a collecting tap.
std::vector<float> token_rows(const Model& m, const std::vector<int>& layers, const std::vector<int32_t>& ids) {
  TokenTap tap(m.hparams(), layers, nullptr, 0, static_cast<int>(ids.size()));
  Context ctx(m, {128, 1, 512});
  ctx.set_tap(&tap);
  ctx.eval(ids);
  return tap.rows();
}

// A token model fitted on the tokens of `n` normal prompts.
TokenModel fitted(const Model& m, const std::vector<int>& layers, int n, int k) {
  std::vector<float> rows;
  for (int i = 0; i < n; ++i) {
    const auto r = token_rows(m, layers, prompt(24, 100 + i));
    rows.insert(rows.end(), r.begin(), r.end());
  }
  return fit_token_model(rows, static_cast<int>(layers.size()) * m.hparams().head_dim, 0.05, k, 6, 3);
}

// dist_t in double precision from a token vector: whiten, then the nearest centroid.
double reference_distance(const TokenModel& t, const std::vector<double>& y, int* nearest = nullptr) {
  const int d = t.dim;
  std::vector<double> c(d), z(d, 0.0);
  for (int i = 0; i < d; ++i) c[i] = y[i] - t.mean[i];
  for (int i = 0; i < d; ++i)
    for (int j = 0; j <= i; ++j) z[i] += t.whiten[static_cast<size_t>(i) * d + j] * c[j];
  double best = -1;
  for (int j = 0; j < std::max(t.k, 1); ++j) {
    double s = 0;
    for (int i = 0; i < d; ++i) {
      const double dz = z[i] - (t.k ? t.centroids[static_cast<size_t>(j) * d + i] : 0.0);
      s += dz * dz;
    }
    if (best < 0 || s < best) {
      best = s;
      if (nearest) *nearest = j;
    }
  }
  return std::sqrt(best / d);
}

}  // namespace

TEST(KvProfileTokens, DistanceEqualsReferenceFromStoredKV) {
  const Model& m = fixtures::model(spec_model(), "probe4");
  const HParams& hp = m.hparams();
  for (const std::vector<int>& layers : {std::vector<int>{2}, std::vector<int>{0, 1, 2, 3}}) {
    const TokenModel tm = fitted(m, layers, 12, 16);
    ASSERT_EQ(tm.k, 16);
    const auto ids = prompt(20, 7);
    const int P = static_cast<int>(ids.size());
    TokenTap keep(hp, layers, nullptr, 0, P), score(hp, layers, &tm, 0, P);
    TapFanout fan({&keep, &score}, &m);
    Context ctx(m, {64, 1, 512});
    ctx.set_tap(&fan);
    ctx.eval(ids);
    ASSERT_EQ(score.n_tokens(), P);
    ASSERT_EQ(keep.rows().size(), static_cast<size_t>(P) * keep.dim());
    // Each token's vector from the cache's K/V (F16 there; the tap sees them before rounding).
    const PagedKVCache& kv = ctx.kv();
    const int kd = kv.kv_dim(), bs = kv.block_size();
    double ref_max = -1;
    std::vector<double> ref_dist(P);
    std::vector<int> ref_counts(tm.k, 0);
    for (int pos = 0; pos < P; ++pos) {
      std::vector<std::vector<float>> v(layers.size(), std::vector<float>(kd));
      for (size_t s = 0; s < layers.size(); ++s)
        kv.read_v(layers[s], ctx.table().block_of(pos, bs), pos % bs, v[s].data());
      const auto y = token_vector_reference(hp.head_dim, hp.n_head_kv, v);
      ASSERT_EQ(static_cast<int>(y.size()), keep.dim());
      for (int i = 0; i < keep.dim(); ++i)
        EXPECT_NEAR(keep.rows()[static_cast<size_t>(pos) * keep.dim() + i], y[i], 3e-3) << "position " << pos << " value " << i;
      int near = -1;
      ref_dist[pos] = reference_distance(tm, y, &near);
      ++ref_counts[near];
      ref_max = std::max(ref_max, ref_dist[pos]);
      // The distance function itself, on the tap's own vector, to double precision.
      std::vector<double> own(keep.rows().begin() + static_cast<size_t>(pos) * keep.dim(),
                              keep.rows().begin() + static_cast<size_t>(pos + 1) * keep.dim());
      EXPECT_NEAR(tm.distance(keep.rows().data() + static_cast<size_t>(pos) * keep.dim()), reference_distance(tm, own), 1e-4);
    }
    EXPECT_NEAR(score.max_distance(), ref_max, 2e-2 * ref_max) << "layers " << layers.size();
    // Tokens per centroid: the same nearest centroids (F16 rounding may move a near tie, not more).
    int moved = 0;
    for (int j = 0; j < tm.k; ++j) moved += std::abs(score.counts()[j] - ref_counts[j]);
    EXPECT_LE(moved, 2);
    ASSERT_GE(score.argmax(), 0);
    EXPECT_NEAR(ref_dist[score.argmax()], ref_max, 2e-2 * ref_max);
  }
}

TEST(KvProfileTokens, RecomputedPositionsAreNotCountedTwice) {
  const Model& m = fixtures::model(spec_model(), "probe4");
  const std::vector<int> layers = {1, 3};
  const TokenModel tm = fitted(m, layers, 6, 4);
  TokenTap once(m.hparams(), layers, &tm), twice(m.hparams(), layers, &tm);
  Context a(m, {64, 1, 512}), b(m, {64, 1, 512});
  a.set_tap(&once);
  b.set_tap(&twice);
  const auto toks = prompt(14, 3);
  a.eval(toks);
  b.eval(toks);
  b.truncate(7);  // as after a preemption
  b.eval(std::vector<int32_t>(toks.begin() + 7, toks.end()));
  EXPECT_EQ(once.n_tokens(), 14);
  EXPECT_EQ(twice.n_tokens(), 14);
  EXPECT_EQ(twice.max_distance(), once.max_distance());
  EXPECT_EQ(twice.argmax(), once.argmax());
  EXPECT_EQ(twice.counts(), once.counts());
}

TEST(KvProfileTokens, ScoresUnchangedByBatching) {
  const Model& m = fixtures::model(spec_model(), "probe4");
  const std::vector<int> layers = {0, 1, 2, 3};
  const TokenModel tm = fitted(m, layers, 8, 8);
  auto run = [&](int max_seqs, std::vector<double>& dist, std::vector<int>& where, std::vector<std::vector<int>>& cnt) {
    Engine eng(m, fixtures::small_engine(96, max_seqs));
    std::vector<std::unique_ptr<TokenTap>> taps;
    std::vector<RequestId> ids;
    for (int i = 0; i < 4; ++i) {
      Request r;
      r.prompt = prompt(10 + 5 * i, 40 + i);
      r.sampling.temperature = 0;
      r.max_tokens = 3;
      r.ignore_eos = true;
      taps.push_back(std::make_unique<TokenTap>(m.hparams(), layers, &tm, 0, static_cast<int>(r.prompt.size())));
      r.tap = taps.back().get();
      ids.push_back(eng.submit(std::move(r)));
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      eng.wait(ids[i]);
      EXPECT_EQ(taps[i]->n_tokens(), 10 + 5 * static_cast<int>(i));  // the prompt only
      dist.push_back(taps[i]->max_distance());
      where.push_back(taps[i]->argmax());
      cnt.push_back(taps[i]->counts());
    }
  };
  std::vector<double> alone, batched;
  std::vector<int> wa, wb;
  std::vector<std::vector<int>> ca, cb;
  run(1, alone, wa, ca);
  run(4, batched, wb, cb);
  ASSERT_EQ(alone.size(), 4u);
  for (size_t i = 0; i < alone.size(); ++i) {
    EXPECT_NEAR(alone[i], batched[i], 1e-4) << "request " << i;
    EXPECT_EQ(wa[i], wb[i]) << "request " << i;
    EXPECT_EQ(ca[i], cb[i]) << "request " << i;
  }
  EXPECT_NE(alone[0], alone[1]);  // different prompts, different scores: the comparison is not vacuous
}

TEST(KvProfileTokens, OneOddTokenRaisesTheTokenPart) {
  // Normal prompts use tokens [5, 105); an odd one puts one token from [200, 290) in the middle:
  // the largest token distance rises.
  const Model& m = fixtures::model(spec_model(), "probe4");
  const std::vector<int> layers = {0, 1, 2, 3};
  const TokenModel tm = fitted(m, layers, 40, 32);
  auto token_max = [&](const std::vector<int32_t>& ids) {
    TokenTap tap(m.hparams(), layers, &tm);
    Context ctx(m, {64, 1, 512});
    ctx.set_tap(&tap);
    ctx.eval(ids);
    return tap.max_distance();
  };
  std::vector<double> s;
  std::vector<bool> odd;
  for (int i = 0; i < 20; ++i) {
    auto ids = prompt(24, 500 + i);
    s.push_back(token_max(ids));
    odd.push_back(false);
    ids[12] = 200 + (i * 7) % 90;
    s.push_back(token_max(ids));
    odd.push_back(true);
  }
  EXPECT_GT(auroc(s, odd), 0.9);
}

TEST(KvProfileTokens, FileRoundTripsAndVersionOneStillLoads) {
  const Model& m = fixtures::model(spec_model(), "probe4");
  const std::vector<int> layers = {1, 2};
  util::SplitMix64 r{5};
  std::vector<std::vector<float>> rows;
  for (int i = 0; i < 100; ++i) {
    std::vector<float> x(5);
    for (float& v : x) v = static_cast<float>(r.normal());
    rows.push_back(x);
  }
  KVProfile p = fit_profile(rows, 0.01);
  p.model_fingerprint = model_fingerprint(m);
  p.layers = layers;
  p.threshold = 1.5;
  p.token = fitted(m, layers, 6, 5);
  p.pooled_ref = 1.4;
  p.token_ref = 2.0;
  p.count_ref = 5.0;
  fit_token_counts(p.token, {std::vector<int>(5, 1), std::vector<int>(5, 3)}, 0.01);
  const auto path = (test::temp_dir() / "tok.kvprofile.bin").string();
  save_profile(path, p);
  const KVProfile q = load_profile(path, model_fingerprint(m));
  ASSERT_EQ(q.token.dim, p.token.dim);
  ASSERT_EQ(q.token.k, 5);
  const auto y = token_rows(m, layers, prompt(6, 1));
  EXPECT_DOUBLE_EQ(q.token.distance(y.data()), p.token.distance(y.data()));
  EXPECT_EQ(q.token.count_mean, p.token.count_mean);
  EXPECT_EQ(q.token.count_scale, p.token.count_scale);
  EXPECT_NEAR(q.token.count_scale[0], 1 / std::sqrt(1.01), 1e-6);  // counts 1 and 3: variance 1
  EXPECT_DOUBLE_EQ(q.combine(1.4, 1.0, 0.0), 1.0);   // the pooled part at its reference
  EXPECT_DOUBLE_EQ(q.combine(0.7, 4.0, 0.0), 2.0);   // the token part twice its reference
  EXPECT_DOUBLE_EQ(q.combine(0.7, 1.0, 15.0), 3.0);  // the count part three times its reference
  // A version-1 profile (pooled only), as kvscope wrote before the token part: it scores by the
  // pooled distance alone.
  const char magic[8] = {'K', 'V', 'S', 'P', 'R', 'O', 'F', '1'};
  auto write_v = [&](uint32_t version, const std::string& to) {
    ModelFileWriter o(magic, version, p.model_fingerprint);
    o.put<uint32_t>(2);
    o.put<int32_t>(1);
    o.put<int32_t>(2);
    o.put<double>(1.25);
    o.str("{}");
    o.put<int32_t>(p.dim);
    for (double v : p.mean) o.put<double>(v);
    for (int i = 0; i < p.dim; ++i)
      for (int j = 0; j <= i; ++j) o.put<double>(p.whiten[static_cast<size_t>(i) * p.dim + j]);
    o.save(to, "KV profile");
  };
  const auto v1 = (test::temp_dir() / "tok_v1.kvprofile.bin").string();
  write_v(1, v1);
  const KVProfile old = load_profile(v1, model_fingerprint(m));
  EXPECT_TRUE(old.token.empty());
  EXPECT_EQ(old.threshold, 1.25);
  EXPECT_DOUBLE_EQ(old.combine(1.7, 99.0, 99.0), 1.7);
  EXPECT_DOUBLE_EQ(old.score(rows[3]), p.score(rows[3]));
  // A version this build does not know is refused, naming the versions it reads.
  const auto v9 = (test::temp_dir() / "tok_v9.kvprofile.bin").string();
  write_v(9, v9);
  try {
    load_profile(v9);
    FAIL() << "a version-9 profile was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("version 9, this build reads 1 to 3"), std::string::npos) << e.what();
  }
  // A truncated version-2 file is damaged, not read short.
  test::truncate_file(path, 7);
  EXPECT_THROW(load_profile(path), InputError);
}

TEST(KvProfileTokens, OneExtraTemplateTokenRaisesTheCountPart) {
  // Every normal prompt holds token 3 exactly twice (like a template's turn markers) among words of
  // a small vocabulary; an odd one holds it three times. Read at layer 0 (where V is the token's
  // own), token 3 has a centroid of its own whose count is constant in normal prompts, so one more
  // scores 1/sqrt(floor), far above the words' count spread.
  const Model& m = fixtures::model(spec_model(), "probe4");
  const std::vector<int> layers = {0};
  auto templ = [](uint64_t seed, bool extra) {
    util::SplitMix64 r{seed};
    std::vector<int32_t> ids = {1};
    for (int i = 1; i < 24; ++i) ids.push_back(5 + static_cast<int32_t>(r.next() % 5));
    ids[5] = 3;
    ids[20] = 3;
    if (extra) ids[12] = 3;
    return ids;
  };
  std::vector<float> rows;
  for (int i = 0; i < 30; ++i) {
    const auto r = token_rows(m, layers, templ(100 + i, false));
    rows.insert(rows.end(), r.begin(), r.end());
  }
  TokenModel tm = fit_token_model(rows, static_cast<int>(layers.size()) * m.hparams().head_dim, 0.05, 40, 6, 3);
  auto scan = [&](const std::vector<int32_t>& ids) {
    TokenTap tap(m.hparams(), layers, &tm);
    Context ctx(m, {64, 1, 512});
    ctx.set_tap(&tap);
    ctx.eval(ids);
    return tap.counts();
  };
  std::vector<std::vector<int>> normal;
  for (int i = 0; i < 40; ++i) normal.push_back(scan(templ(300 + i, false)));
  fit_token_counts(tm, normal, 0.01);
  std::vector<double> s;
  std::vector<bool> odd;
  for (int i = 0; i < 20; ++i) {
    s.push_back(tm.count_score(scan(templ(600 + i, false))));
    odd.push_back(false);
    s.push_back(tm.count_score(scan(templ(600 + i, true))));
    odd.push_back(true);
  }
  EXPECT_GT(auroc(s, odd), 0.9);
  // No counts fitted: no count part.
  TokenModel bare = tm;
  bare.count_mean.clear();
  bare.count_scale.clear();
  EXPECT_EQ(bare.count_score(scan(templ(1, true))), 0.0);
}

namespace {
// A prompt of template tokens around a user's text: [1, 3, 4] (a turn header), the user's tokens
// from [5, 25), then [3, 2, 3, 4] (end of turn, the assistant header). The template's marker 3
// never occurs in the user text of a normal prompt; `stray` puts one inside it.
std::vector<int32_t> templated(uint64_t seed, bool stray, std::vector<std::pair<int, int>>* span) {
  util::SplitMix64 r{seed};
  std::vector<int32_t> ids = {1, 3, 4};
  const int n = 12 + static_cast<int>(r.next() % 8);
  for (int i = 0; i < n; ++i) ids.push_back(5 + static_cast<int32_t>(r.next() % 20));
  if (stray) ids[3 + n / 2] = 3;
  *span = {{3, 3 + n}};
  for (int32_t t : {3, 2, 3, 4}) ids.push_back(t);
  return ids;
}

TokenTap scan_user(const Model& m, const std::vector<int>& layers, const TokenModel* tm, const std::vector<int32_t>& ids,
                   const std::vector<std::pair<int, int>>& spans) {
  TokenTap tap(m.hparams(), layers, tm, spans);
  Context ctx(m, {64, 1, 512});
  ctx.set_tap(&tap);
  ctx.eval(ids);
  return tap;
}
}  // namespace

TEST(KvProfileTokens, UserSpanTapReadsOnlyTheSpans) {
  // The user-content tap keeps exactly the rows of the all-token tap at the spans' positions.
  const Model& m = fixtures::model(spec_model(), "probe4");
  const std::vector<int> layers = {1, 3};
  const auto ids = prompt(30, 77);
  const auto all = token_rows(m, layers, ids);
  const int d = static_cast<int>(layers.size()) * m.hparams().head_dim;
  const std::vector<std::pair<int, int>> spans = {{20, 26}, {3, 9}};  // unsorted on purpose
  const TokenTap tap = scan_user(m, layers, nullptr, ids, spans);
  ASSERT_EQ(tap.n_tokens(), 12);
  std::vector<float> want;
  for (int t : {3, 4, 5, 6, 7, 8, 20, 21, 22, 23, 24, 25}) want.insert(want.end(), all.begin() + t * d, all.begin() + (t + 1) * d);
  EXPECT_EQ(tap.rows(), want);
  // No span: nothing is read, and the part is 0.
  const TokenModel tm = fitted(m, layers, 4, 4);
  const TokenTap none = scan_user(m, layers, &tm, ids, {});
  EXPECT_EQ(none.n_tokens(), 0);
  EXPECT_EQ(none.top_mean(3), 0.0);
  EXPECT_EQ(none.argmax(), -1);
  // The top distances are the spans' largest, largest first; their mean is the top-k part.
  const TokenTap scored = scan_user(m, layers, &tm, ids, spans);
  std::vector<double> dist;
  for (int i = 0; i < 12; ++i) dist.push_back(tm.distance(tap.rows().data() + static_cast<size_t>(i) * d));
  std::sort(dist.rbegin(), dist.rend());
  ASSERT_EQ(scored.top().size(), static_cast<size_t>(TokenTap::kTop));
  for (int i = 0; i < TokenTap::kTop; ++i) EXPECT_NEAR(scored.top()[i], dist[i], 1e-5);
  EXPECT_NEAR(scored.top_mean(3), (dist[0] + dist[1] + dist[2]) / 3, 1e-5);
  EXPECT_EQ(scored.max_distance(), scored.top()[0]);
}

TEST(KvProfileTokens, UserPartUnchangedByBatching) {
  // The serve path's user-content tap: one request at a time and four at a time give the same part.
  const Model& m = fixtures::model(spec_model(), "probe4");
  const std::vector<int> layers = {0, 1, 2, 3};
  const TokenModel tm = fitted(m, layers, 8, 8);
  auto run = [&](int max_seqs, std::vector<std::vector<double>>& top, std::vector<int>& where) {
    Engine eng(m, fixtures::small_engine(96, max_seqs));
    std::vector<std::unique_ptr<TokenTap>> taps;
    std::vector<RequestId> ids;
    for (int i = 0; i < 4; ++i) {
      Request r;
      std::vector<std::pair<int, int>> span;
      r.prompt = templated(40 + i, i == 2, &span);
      r.sampling.temperature = 0;
      r.max_tokens = 3;
      r.ignore_eos = true;
      taps.push_back(std::make_unique<TokenTap>(m.hparams(), layers, &tm, span));
      r.tap = taps.back().get();
      ids.push_back(eng.submit(std::move(r)));
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      eng.wait(ids[i]);
      top.push_back(taps[i]->top());
      where.push_back(taps[i]->argmax());
    }
  };
  std::vector<std::vector<double>> alone, batched;
  std::vector<int> wa, wb;
  run(1, alone, wa);
  run(4, batched, wb);
  ASSERT_EQ(alone.size(), 4u);
  for (size_t i = 0; i < alone.size(); ++i) {
    ASSERT_EQ(alone[i].size(), batched[i].size()) << "request " << i;
    for (size_t j = 0; j < alone[i].size(); ++j) EXPECT_NEAR(alone[i][j], batched[i][j], 1e-4) << "request " << i;
    EXPECT_EQ(wa[i], wb[i]) << "request " << i;
    EXPECT_GE(wa[i], 3);  // inside the user's text, never a template token
  }
  EXPECT_NE(alone[0][0], alone[1][0]);
}

TEST(KvProfileTokens, StrayTemplateMarkerInUserTextRaisesTheUserPart) {
  // The template's marker 3 sits in every normal prompt (so the all-token model has a centroid for
  // it) but never in the user's text: a model fitted on user tokens alone finds a stray one far,
  // where the all-token model finds it next to the template's own. Read at layer 0, where V is the
  // token's own, so each word of the small user vocabulary has a centroid.
  const Model& m = fixtures::model(spec_model(), "probe4");
  const std::vector<int> layers = {0};
  std::vector<float> user_rows, all_rows;
  for (int i = 0; i < 40; ++i) {
    std::vector<std::pair<int, int>> span;
    const auto ids = templated(100 + i, false, &span);
    const auto r = scan_user(m, layers, nullptr, ids, span).rows();
    user_rows.insert(user_rows.end(), r.begin(), r.end());
    const auto a = token_rows(m, layers, ids);
    all_rows.insert(all_rows.end(), a.begin(), a.end());
  }
  const int d = static_cast<int>(layers.size()) * m.hparams().head_dim;
  const TokenModel um = fit_token_model(user_rows, d, 0.05, 32, 6, 3);
  const TokenModel am = fit_token_model(all_rows, d, 0.05, 32, 6, 3);
  std::vector<double> s, sa;
  std::vector<bool> odd;
  for (int i = 0; i < 20; ++i)
    for (bool stray : {false, true}) {
      std::vector<std::pair<int, int>> span;
      const auto ids = templated(600 + i, stray, &span);
      s.push_back(scan_user(m, layers, &um, ids, span).top_mean(1));
      TokenTap all(m.hparams(), layers, &am);
      Context ctx(m, {64, 1, 512});
      ctx.set_tap(&all);
      ctx.eval(ids);
      sa.push_back(all.max_distance());
      odd.push_back(stray);
    }
  EXPECT_GT(auroc(s, odd), 0.9);
  EXPECT_LT(auroc(sa, odd), auroc(s, odd) - 0.2);  // the all-token model barely sees it
}

TEST(KvProfileTokens, UserSpanIsFoundAfterTextThatAlmostMatchesIt) {
  // The client writes every message: an assistant turn that repeats the start of the next user turn
  // many times must not hide it (nor make the search quadratic: it is linear in the prompt).
  const std::string path = fixtures::qwen3_think_model();
  if (path.empty()) GTEST_SKIP() << "no oracle vocabulary";
  const auto model = Model::load(path);
  std::string run;
  for (int i = 0; i < 300; ++i) run += " seven";
  const std::vector<tok::ChatMessage> msgs = {{"user", "Count."}, {"assistant", run}, {"user", run + " eight"}};
  const auto ids = reasoning::encode_rendered(*model, reasoning::render_chat(*model, msgs, nullptr));
  const auto spans = reasoning::user_token_spans(*model, ids, {msgs[0].content, msgs[2].content});
  ASSERT_EQ(spans.size(), 2u);
  std::string second;
  for (int i = spans[1].first; i < spans[1].second; ++i) second += model->tokenizer().token_to_piece(ids[i], true);
  EXPECT_EQ(second.find("seven"), second.find_first_not_of(' '));
  EXPECT_EQ(second.substr(second.size() - 6), " eight");
  EXPECT_EQ(model->tokenizer().token_to_piece(ids[spans[1].second], true), "<|im_end|>");
}

TEST(KvProfileTokens, UserSpansAreWhatTheTemplateRendersForUserMessages) {
  // A real vocabulary and a ChatML template: each user message's span decodes to its text, inside
  // its turn (after "<|im_start|>user\n", before "<|im_end|>"); system and assistant text is not in
  // a span; a special-token spelling typed by the user is parsed, as the server parses it.
  const std::string path = fixtures::qwen3_think_model();
  if (path.empty()) GTEST_SKIP() << "no oracle vocabulary";
  const auto model = Model::load(path);
  const std::vector<tok::ChatMessage> msgs = {{"system", "You answer briefly."},
                                              {"user", "Question: what is 2 + 3?"},
                                              {"assistant", "5"},
                                              {"user", "And <|im_start|> then 7 times 6?"}};
  const std::string text = reasoning::render_chat(*model, msgs, nullptr);
  const auto ids = reasoning::encode_rendered(*model, text);
  const auto spans = reasoning::user_token_spans(*model, ids, {msgs[1].content, msgs[3].content});
  ASSERT_EQ(spans.size(), 2u);
  const auto& tk = model->tokenizer();
  auto piece = [&](int b, int e) {
    std::string s;
    for (int i = b; i < e; ++i) s += tk.token_to_piece(ids[i], true);
    return s;
  };
  EXPECT_EQ(piece(spans[0].first, spans[0].second), msgs[1].content);
  EXPECT_EQ(piece(spans[1].first, spans[1].second), msgs[3].content);
  EXPECT_EQ(piece(0, spans[0].first).substr(piece(0, spans[0].first).size() - 17), "<|im_start|>user\n");
  EXPECT_EQ(tk.token_to_piece(ids[spans[0].second], true), "<|im_end|>");
  EXPECT_LT(spans[0].second, spans[1].first);
  EXPECT_EQ(piece(spans[1].first, spans[1].second).find("<|im_start|>"), 4u);
  int specials = 0;
  for (int i = spans[1].first; i < spans[1].second; ++i) specials += tk.token_to_piece(ids[i], true) == "<|im_start|>";
  EXPECT_EQ(specials, 1);  // one token, as the server encodes a chat request
  // The marker count of the user-content part: that one special token, none in the first turn,
  // and the template's own (outside the spans) never count.
  EXPECT_EQ(special_tokens_in(tk, ids, spans), 1);
  EXPECT_EQ(special_tokens_in(tk, ids, {spans[0]}), 0);
  EXPECT_EQ(special_tokens_in(tk, ids, {}), 0);
  // A content the prompt does not hold gives no span; the others are still found.
  const auto some = reasoning::user_token_spans(*model, ids, {"not in the prompt at all", msgs[3].content});
  ASSERT_EQ(some.size(), 1u);
  EXPECT_EQ(some[0], spans[1]);
}

TEST(KvProfileTokens, VersionThreeRoundTripsVersionTwoKeepsItsMeaningAndAnotherModelIsRefused) {
  const Model& m = fixtures::model(spec_model(), "probe4");
  const std::vector<int> layers = {1, 2};
  util::SplitMix64 r{9};
  std::vector<std::vector<float>> rows;
  for (int i = 0; i < 100; ++i) {
    std::vector<float> x(4);
    for (float& v : x) v = static_cast<float>(r.normal());
    rows.push_back(x);
  }
  KVProfile p = fit_profile(rows, 0.01);
  p.model_fingerprint = model_fingerprint(m);
  p.layers = layers;
  p.threshold = 1.2;
  p.pooled_ref = 1.5;
  p.user = fitted(m, layers, 6, 7);
  p.user_ref = 2.5;
  p.user_topk = 3;
  p.marker_weight = 0.75;
  const auto path = (test::temp_dir() / "user.kvprofile.bin").string();
  save_profile(path, p);
  const KVProfile q = load_profile(path, model_fingerprint(m));
  EXPECT_TRUE(q.token.empty());
  ASSERT_EQ(q.user.k, 7);
  EXPECT_EQ(q.user_topk, 3);
  EXPECT_EQ(q.user_ref, 2.5);
  EXPECT_EQ(q.marker_weight, 0.75);
  const auto y = token_rows(m, layers, prompt(6, 2));
  EXPECT_DOUBLE_EQ(q.user.distance(y.data()), p.user.distance(y.data()));
  EXPECT_DOUBLE_EQ(q.combine(1.5, 0, 0, 1.0), 1.0);  // the pooled part at its reference
  EXPECT_DOUBLE_EQ(q.combine(0.3, 0, 0, 5.0), 2.0);  // the user part twice its reference
  EXPECT_DOUBLE_EQ(q.combine(0.3, 0, 0, 5.0, 2), 3.5);  // and two special tokens typed by the user
  // A profile of another model is refused, naming the remedy.
  try {
    load_profile(path, model_fingerprint(m) ^ 1);
    FAIL() << "another model's profile was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("another model"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kvscope kv-profile"), std::string::npos) << e.what();
  }
  // A version-2 file (pooled and all-token parts, as written before the user part) loads with its
  // meaning: no user part, the score the largest of its three parts.
  const char magic[8] = {'K', 'V', 'S', 'P', 'R', 'O', 'F', '1'};
  ModelFileWriter o(magic, 2, p.model_fingerprint);
  o.put<uint32_t>(2);
  for (int l : layers) o.put<int32_t>(l);
  o.put<double>(1.3);
  o.str("{}");
  o.put<int32_t>(p.dim);
  for (double v : p.mean) o.put<double>(v);
  for (int i = 0; i < p.dim; ++i)
    for (int j = 0; j <= i; ++j) o.put<double>(p.whiten[static_cast<size_t>(i) * p.dim + j]);
  o.put<double>(1.4);
  o.put<double>(2.0);
  o.put<double>(5.0);
  const TokenModel& t = p.user;  // any token model will do as the version-2 file's token part
  o.put<int32_t>(t.dim);
  for (double v : t.mean) o.put<double>(v);
  for (int i = 0; i < t.dim; ++i)
    for (int j = 0; j <= i; ++j) o.put<double>(t.whiten[static_cast<size_t>(i) * t.dim + j]);
  o.put<int32_t>(t.k);
  for (float c : t.centroids) o.put<float>(c);
  o.put<uint8_t>(0);
  const auto v2 = (test::temp_dir() / "user_v2.kvprofile.bin").string();
  o.save(v2, "KV profile");
  const KVProfile old = load_profile(v2, model_fingerprint(m));
  EXPECT_TRUE(old.user.empty());
  ASSERT_EQ(old.token.k, 7);
  EXPECT_EQ(old.threshold, 1.3);
  EXPECT_DOUBLE_EQ(old.token.distance(y.data()), p.user.distance(y.data()));
  EXPECT_DOUBLE_EQ(old.combine(0.7, 4.0, 0.0, 99.0, 3), 2.0);  // the token part; user part and markers ignored
  EXPECT_DOUBLE_EQ(old.combine(2.8, 1.0, 0.0), 2.0);        // the pooled part
}

}  // namespace kv_profile_token_test
