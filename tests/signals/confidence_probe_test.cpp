// The confidence probe's tap against a reference computed from the K/V stored in the cache, its
// file and the KV profile's refusing another model's, and scores that do not depend on batching.
#include "signals/confidence_probe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <fstream>

#include "engine/context.h"
#include "engine/engine.h"
#include "fixtures.h"
#include "model/fingerprint.h"
#include "signals/kv_profile.h"
#include "signals/scored_generation.h"
#include "test_util.h"
#include "training/confidence_train.h"
#include "util/error.h"
#include "util/rng.h"

namespace confidence_probe_test {

using namespace kvscope;
using namespace kvscope::signals;

namespace {

RandomModelSpec probe_spec_model(uint64_t seed = 7) {
  RandomModelSpec s = fixtures::tiny_spec(64, 4, 4, 2, 128, 300, 128, seed);
  return s;
}

std::vector<int32_t> tokens(int n, int salt = 0) {
  std::vector<int32_t> t = {1};
  for (int i = 1; i < n; ++i) t.push_back((i * 37 + salt * 11 + 5) % 290 + 5);
  return t;
}

// The K/V rows of `layers` at positions [begin, end) as the cache stores them.
void stored_kv(const Context& ctx, const std::vector<int>& layers, int begin, int end,
               std::vector<std::vector<std::vector<float>>>& k, std::vector<std::vector<std::vector<float>>>& v) {
  const PagedKVCache& kv = ctx.kv();
  const int kd = kv.kv_dim(), bs = kv.block_size();
  k.assign(layers.size(), {});
  v.assign(layers.size(), {});
  for (size_t s = 0; s < layers.size(); ++s)
    for (int pos = begin; pos < end; ++pos) {
      std::vector<float> kr(kd), vr(kd);
      const BlockId b = ctx.table().block_of(pos, bs);
      kv.read_k(layers[s], b, pos % bs, kr.data());
      kv.read_v(layers[s], b, pos % bs, vr.data());
      k[s].push_back(kr);
      v[s].push_back(vr);
    }
}

}  // namespace

TEST(ConfidenceProbe, FeaturesEqualReferenceFromStoredKV) {
  const Model& m = fixtures::model(probe_spec_model(), "probe4");
  const HParams& hp = m.hparams();
  for (const std::vector<int>& layers : {std::vector<int>{2}, std::vector<int>{1, 3}, std::vector<int>{0, 1, 2, 3}}) {
    ProbeSpec spec;
    spec.layers = layers;
    spec.logits = false;
    spec.prompt = true;
    spec.last = true;
    const int P = 9, T = 14;
    ProbeFeatures tap(hp, spec, P);
    Context ctx(m, {64, 1, 512});
    ctx.set_tap(&tap);
    const auto all = tokens(P + T, static_cast<int>(layers.size()));
    ctx.eval(std::vector<int32_t>(all.begin(), all.begin() + P));  // the prompt in one chunk
    for (int t = P; t < P + T; ++t) ctx.eval({all[t]});            // the response token by token
    ASSERT_EQ(tap.n_tokens(), T);
    const auto f = tap.features(LogitStats());
    ASSERT_EQ(static_cast<int>(f.size()), spec.dim(hp.head_dim));

    std::vector<std::vector<std::vector<float>>> k, v, pk, pv;
    stored_kv(ctx, layers, P, P + T, k, v);
    stored_kv(ctx, layers, 0, P, pk, pv);
    ProbeSpec resp = spec;
    resp.prompt = false;
    resp.last = false;
    const auto ref = probe_kv_features_reference(resp, hp.head_dim, hp.n_head_kv, k, v);
    const auto pref = probe_kv_features_reference(resp, hp.head_dim, hp.n_head_kv, pk, pv);
    // The cache holds F16 K/V, the tap sees them before rounding.
    const int e = 2 * hp.head_dim, per = spec.per_layer(hp.head_dim), rper = resp.per_layer(hp.head_dim);
    for (size_t s = 0; s < layers.size(); ++s) {
      for (int i = 0; i < rper; ++i)
        EXPECT_NEAR(f[s * per + i], ref[s * rper + i], 3e-3) << "layer " << layers[s] << " feature " << i;
      for (int i = 0; i < e; ++i)  // the prompt's pooled u: the reference's pooled part over the prompt
        EXPECT_NEAR(f[s * per + rper + i], pref[s * rper + i], 3e-3) << "layer " << layers[s] << " prompt " << i;
    }
    // The latest token's u: the reference with `last` ends each layer's block with it.
    ProbeSpec with_last = resp;
    with_last.last = true;
    const auto lref = probe_kv_features_reference(with_last, hp.head_dim, hp.n_head_kv, k, v);
    const int lper = with_last.per_layer(hp.head_dim);
    for (size_t s = 0; s < layers.size(); ++s) {
      for (int i = 0; i < e; ++i)
        EXPECT_NEAR(f[s * per + rper + e + i], lref[s * lper + rper + i], 3e-3) << "layer " << layers[s] << " last " << i;
    }
    EXPECT_NEAR(f.back(), std::log1p(double(T)), 1e-6);
    // The max step is at least the mean step, and a real trajectory moves.
    EXPECT_GT(f[2 * hp.head_dim + 2], 0.0f);
    EXPECT_GE(f[2 * hp.head_dim + 2] + 1e-6f, f[2 * hp.head_dim]);
  }
}

TEST(ConfidenceProbe, RecomputedPositionsAreNotCountedTwice) {
  const Model& m = fixtures::model(probe_spec_model(), "probe4");
  ProbeSpec spec;
  spec.layers = {1, 2};
  spec.prompt = true;
  ProbeFeatures once(m.hparams(), spec, 5), twice(m.hparams(), spec, 5);
  Context a(m, {64, 1, 512}), b(m, {64, 1, 512});
  a.set_tap(&once);
  b.set_tap(&twice);
  const auto toks = tokens(12);
  a.eval(toks);
  b.eval(toks);
  b.truncate(7);  // as after a preemption
  b.eval(std::vector<int32_t>(toks.begin() + 7, toks.end()));
  EXPECT_EQ(once.n_tokens(), 7);
  EXPECT_EQ(twice.features(LogitStats()), once.features(LogitStats()));
}

TEST(ConfidenceProbe, LogitStatisticsEnterTheFeatures) {
  LogitStats ls;
  const float a[4] = {0, 0, 0, 5}, b[4] = {1, 1, 1, 1};
  ls.add(a, 4, 3);
  ls.add(b, 4, 0);
  EXPECT_NEAR(ls.min_max_prob(), 0.25, 1e-9);
  EXPECT_NEAR(ls.share_max_prob_below(0.5), 0.5, 1e-9);
  EXPECT_NEAR(ls.min_logp(), std::log(0.25), 1e-6);
  EXPECT_NEAR(ls.max_entropy(), std::log(4.0), 1e-9);
  const Model& m = fixtures::model(probe_spec_model(), "probe4");
  ProbeSpec spec;
  spec.kv = false;
  ProbeFeatures tap(m.hparams(), spec);
  const auto f = tap.features(ls);
  ASSERT_EQ(f.size(), static_cast<size_t>(kProbeLogitFeatures + 1));
  EXPECT_NEAR(f[0], ls.max_prob(), 1e-6);
  EXPECT_NEAR(f[1], 0.25, 1e-6);
  EXPECT_NEAR(f.back(), std::log1p(2.0), 1e-6);
}

TEST(ConfidenceProbe, FileRoundTripsAndRefusesAnotherModel) {
  const Model& m = fixtures::model(probe_spec_model(), "probe4");
  const Model& other = fixtures::model(probe_spec_model(8), "probe4b");
  ProbeFile f;
  f.model_fingerprint = model_fingerprint(m);
  f.spec.layers = {1, 3};
  f.spec.prompt = true;
  f.mlp = ProbeMLP(f.spec.dim(m.hparams().head_dim), 8, 3);
  f.cut_below = 0.25;
  f.info = "{}";
  const std::string path = (test::temp_dir() / "probe4.confidence.bin").string();
  save_probe(path, f);
  const auto g = load_probe(path, model_fingerprint(m));
  EXPECT_EQ(g.spec.layers, f.spec.layers);
  EXPECT_TRUE(g.spec.prompt);
  EXPECT_EQ(g.cut_below, 0.25);
  std::vector<float> x(f.mlp.input_dim(), 0.5f);
  EXPECT_EQ(g.mlp.score(x), f.mlp.score(x));
  try {
    load_probe(path, model_fingerprint(other));
    FAIL() << "a probe of another model was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("another model"), std::string::npos) << e.what();
  }
  // Not a probe file at all; a damaged one.
  EXPECT_THROW(load_probe(fixtures::model_file(probe_spec_model(), "probe4")), InputError);
  test::truncate_file(path, 5);
  EXPECT_THROW(load_probe(path), InputError);
}

TEST(ConfidenceProbe, ProfileRefusesAnotherModelAndScoresItsOwnRowsNearOne) {
  const Model& m = fixtures::model(probe_spec_model(), "probe4");
  const Model& other = fixtures::model(probe_spec_model(8), "probe4b");
  util::SplitMix64 r{5};
  std::vector<std::vector<float>> rows;
  for (int i = 0; i < 400; ++i) {
    std::vector<float> x(6);
    for (float& v : x) v = static_cast<float>(r.normal());
    x[1] = x[0] * 2 + 0.1f * x[1];  // correlated: whitening must undo it
    rows.push_back(x);
  }
  auto p = fit_profile(rows, 0.0);
  p.model_fingerprint = model_fingerprint(m);
  p.layers = {0, 1};
  p.threshold = 2.0;
  double mean = 0;
  for (const auto& x : rows) mean += p.score(x) * p.score(x);
  EXPECT_NEAR(mean / rows.size(), 1.0, 0.05);  // whitened: E ||W(x - mu)||^2 / d = 1
  // Off the correlation line: far, though each coordinate alone is ordinary.
  std::vector<float> odd = {1.0f, -2.0f, 0, 0, 0, 0};
  EXPECT_GT(p.score(odd), 5.0);
  const std::string path = (test::temp_dir() / "probe4.kvprofile.bin").string();
  save_profile(path, p);
  const auto q = load_profile(path, model_fingerprint(m));
  EXPECT_NEAR(q.score(odd), p.score(odd), 1e-9);
  EXPECT_EQ(q.threshold, 2.0);
  try {
    load_profile(path, model_fingerprint(other));
    FAIL() << "a profile of another model was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("another model"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_profile(fixtures::model_file(probe_spec_model(), "probe4")), InputError);
}

TEST(ConfidenceProbe, ScoresUnchangedByBatching) {
  const Model& m = fixtures::model(probe_spec_model(), "probe4");
  const HParams& hp = m.hparams();
  ProbeFile pf;
  pf.spec.layers = {1, 2};
  pf.spec.prompt = true;
  pf.mlp = ProbeMLP(pf.spec.dim(hp.head_dim), 8, 9);
  SignalOptions so;
  so.hidden = false;
  so.probe = &pf;
  auto run = [&](int max_seqs, std::vector<double>& scores, std::vector<std::vector<float>>& prompt_vecs) {
    Engine eng(m, fixtures::small_engine(96, max_seqs));
    std::vector<std::unique_ptr<ResponseScorer>> sc;
    std::vector<std::unique_ptr<ProbeFeatures>> anomaly;
    std::vector<RequestId> ids;
    for (int i = 0; i < 4; ++i) {
      Request r;
      r.prompt = tokens(8 + 3 * i, i);
      r.sampling.temperature = 0;
      r.max_tokens = 10 + i;
      r.ignore_eos = true;
      sc.push_back(std::make_unique<ResponseScorer>(m, static_cast<int>(r.prompt.size()), so));
      anomaly.push_back(std::make_unique<ProbeFeatures>(hp, ProbeSpec{{0, 1, 2, 3}, true, false, false}, 0,
                                                        static_cast<int>(r.prompt.size())));
      auto* s = sc.back().get();
      auto fan = std::make_shared<TapFanout>(std::vector<KVTap*>{s->tap(), anomaly.back().get()}, &m);
      r.tap = fan.get();
      r.on_logits = [s](const float* l, int n) { s->observe_logits(l, n); };
      r.on_token = [s, fan](const TokenEvent& e) {
        (void)fan;  // keeps the fanout alive while the engine runs
        s->observe_token(e, -1);
      };
      ids.push_back(eng.submit(std::move(r)));
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      eng.wait(ids[i]);
      scores.push_back(sc[i]->result(0).probe);
      prompt_vecs.push_back(prompt_vector(*anomaly[i]));
    }
  };
  std::vector<double> alone, batched;
  std::vector<std::vector<float>> pa, pb;
  run(1, alone, pa);
  run(4, batched, pb);
  ASSERT_EQ(alone.size(), 4u);
  for (size_t i = 0; i < alone.size(); ++i) {
    EXPECT_NEAR(alone[i], batched[i], 1e-4) << "request " << i;
    ASSERT_EQ(pa[i].size(), pb[i].size());
    for (size_t j = 0; j < pa[i].size(); ++j) EXPECT_NEAR(pa[i][j], pb[i][j], 1e-4) << "request " << i << " value " << j;
  }
  // Different requests do get different scores (the comparison above is not vacuous).
  EXPECT_NE(alone[0], alone[1]);
}

TEST(ConfidenceProbe, TrainingSeparatesALearnableSignal) {
  // Rows whose label follows one feature: the trained probe ranks held-out rows by it.
  util::SplitMix64 r{11};
  std::vector<std::vector<float>> X;
  std::vector<int> y, g;
  for (int i = 0; i < 600; ++i) {
    std::vector<float> x(5);
    for (float& v : x) v = static_cast<float>(r.normal());
    y.push_back(x[2] + 0.3 * r.normal() > 0);
    X.push_back(x);
    g.push_back(i);
  }
  ProbeMLP mlp(5, 8, 1);
  training::ProbeTrainOptions o;
  o.max_epochs = 60;
  const auto rep = training::train_probe(mlp, X, y, g, o);
  EXPECT_GT(rep.val_auroc, 0.9);
  std::vector<float> hi = {0, 0, 2, 0, 0}, lo = {0, 0, -2, 0, 0};
  EXPECT_GT(mlp.score(hi), 0.8);
  EXPECT_LT(mlp.score(lo), 0.2);
}

// ---- number-token statistics (ProbeSpec::numbers) ----

namespace {

// A response as its tokens' text: "12 + 30 = 42\n42 x 2 = 8 4\nThe answer is 84".
std::vector<std::string> answer_pieces() {
  return {"1", "2", " +", " ", "3", "0", " =", " ", "4", "2", "\n", "4", "2", " x", " ", "2", " =", " ", "8", " ", "4",
          "\n", "The", " answer", " is", " ", "8", "4"};
}

}  // namespace

TEST(ConfidenceProbe, NumberTokensAreClassifiedByTheirText) {
  EXPECT_EQ(classify_piece("7"), kTokDigit);
  EXPECT_EQ(classify_piece(" ="), kTokEquals);
  EXPECT_EQ(classify_piece(" x"), kTokOperator);
  EXPECT_EQ(classify_piece(" extra"), 0);  // an x inside a word is no times sign
  EXPECT_EQ(classify_piece("-"), kTokOperator);
  EXPECT_EQ(classify_piece("\n"), kTokNewline);
  EXPECT_EQ(classify_piece("=1"), kTokEquals | kTokDigit);
}

TEST(ConfidenceProbe, NumberStatisticsEqualTheReferenceOnAHandWrittenAnswer) {
  const auto pieces = answer_pieces();
  const size_t n = pieces.size();
  std::vector<double> p(n, 0.99), margin(n, 0.98), ent(n, 0.05);
  // The result's second digit ("8 4": index 20) is the unsure token; the first number's digit a
  // little unsure; the operator "x" unsure; the final answer's first digit "8" (index 26).
  p[20] = 0.40, margin[20] = 0.10, ent[20] = 1.2;
  p[1] = 0.70, margin[1] = 0.50;
  p[13] = 0.60, margin[13] = 0.30;
  p[26] = 0.80, margin[26] = 0.65;
  NumberStats ns;
  for (size_t i = 0; i < n; ++i) ns.add(p[i], margin[i], ent[i], classify_piece(pieces[i]));
  std::vector<float> f;
  ns.append(f);
  ASSERT_EQ(f.size(), static_cast<size_t>(kProbeNumberFeatures));
  // By hand: results are "42" and "8 4" (the space splits it into the numbers 8 and 4, only the
  // 8 follows "="): result digits 4, 2, 8 (indices 8, 9, 18).
  EXPECT_NEAR(f[0], 0.99, 1e-6);                  // min p over result digits (the unsure 4 is not a result)
  EXPECT_NEAR(f[1], std::log(0.99), 1e-6);
  EXPECT_NEAR(f[4], 0.40, 1e-6);                  // min p over every digit
  EXPECT_NEAR(f[7], 0.60, 1e-6);                  // the operator x
  EXPECT_NEAR(f[8], 0.30, 1e-6);
  EXPECT_NEAR(f[9], 0.80, 1e-6);                  // the final answer's first token
  EXPECT_NEAR(f[10], 0.80, 1e-6);
  EXPECT_NEAR(f[11], 0.65, 1e-6);
  EXPECT_NEAR(f[12], std::log1p(3.0), 1e-6);      // three result digits
  EXPECT_NEAR(f[13], std::log1p(8.0), 1e-6);      // 12 30 42 42 2 8 4 84
  const auto ref = number_features_reference(pieces, p, margin, ent);
  ASSERT_EQ(ref.size(), f.size());
  for (size_t j = 0; j < f.size(); ++j) EXPECT_NEAR(f[j], ref[j], 1e-6) << "feature " << j;
}

TEST(ConfidenceProbe, NumberStatisticsEqualTheReferenceOnRandomTexts) {
  // Pieces of one class each, as tokenizers that split digits and symbols give them (a piece
  // mixing "=" or a newline with digits follows the running rule, documented in NumberStats).
  const std::vector<std::string> kinds = {"1", "23", " =", "=", " +", " -", " x", " *", "/", " ", "\n", " the", " box",
                                          " 5", ".", " \n"};
  util::SplitMix64 r{5};
  for (int c = 0; c < 300; ++c) {
    const int n = 1 + static_cast<int>(r.next() % 40);
    std::vector<std::string> pieces;
    std::vector<double> p, margin, ent;
    NumberStats ns;
    for (int i = 0; i < n; ++i) {
      pieces.push_back(kinds[r.next() % kinds.size()]);
      p.push_back(0.05 + 0.95 * r.uniform());
      margin.push_back(p.back() * r.uniform());
      ent.push_back(3 * r.uniform());
      ns.add(p.back(), margin.back(), ent.back(), classify_piece(pieces.back()));
    }
    std::vector<float> f;
    ns.append(f);
    const auto ref = number_features_reference(pieces, p, margin, ent);
    for (size_t j = 0; j < f.size(); ++j) ASSERT_NEAR(f[j], ref[j], 1e-5) << "case " << c << " feature " << j;
  }
}

TEST(ConfidenceProbe, NumberFeaturesOfAGenerationEqualTheReferenceAndIgnoreBatching) {
  // Generated tokens of a random model, scored by the engine one request at a time and four at a
  // time: the number features equal the reference recomputed from the logits the scheduler gave
  // and the chosen tokens' text.
  const Model& m = fixtures::model(probe_spec_model(), "probe4");
  ProbeFile pf;
  pf.spec.layers = {2};
  pf.spec.numbers = true;
  pf.mlp = ProbeMLP(pf.spec.dim(m.hparams().head_dim), 8, 4);
  SignalOptions so;
  so.hidden = false;
  so.probe = &pf;
  so.probe_features_trace = true;
  struct Seen {
    std::vector<std::string> pieces;
    std::vector<double> p, margin, ent;
    std::vector<double> pending;  // the latest logits' probabilities
  };
  auto run = [&](int max_seqs, std::vector<std::vector<float>>& feats, std::vector<std::vector<double>>& refs) {
    Engine eng(m, fixtures::small_engine(128, max_seqs));
    std::vector<std::unique_ptr<ResponseScorer>> sc;
    std::vector<std::shared_ptr<Seen>> seen;
    std::vector<RequestId> ids;
    for (int i = 0; i < 4; ++i) {
      Request rq;
      rq.prompt = tokens(6 + 2 * i, i + 3);
      rq.sampling.temperature = 0.8f;
      rq.sampling.seed = 40 + i;
      rq.max_tokens = 40;
      rq.ignore_eos = true;
      sc.push_back(std::make_unique<ResponseScorer>(m, static_cast<int>(rq.prompt.size()), so));
      seen.push_back(std::make_shared<Seen>());
      auto* s = sc.back().get();
      auto w = seen.back();
      rq.tap = s->tap();
      rq.on_logits = [s, w](const float* l, int nv) {
        s->observe_logits(l, nv);
        const float mx = *std::max_element(l, l + nv);
        double z = 0;
        w->pending.assign(nv, 0.0);
        for (int j = 0; j < nv; ++j) z += w->pending[j] = std::exp(double(l[j]) - mx);
        for (double& x : w->pending) x /= z;
      };
      rq.on_token = [s, w, &m](const TokenEvent& e) {
        s->observe_token(e, -1);
        if (e.token < 0) return;
        std::vector<double> q = w->pending;
        std::sort(q.begin(), q.end(), std::greater<>());
        double h = 0;
        for (double x : w->pending)
          if (x > 0) h -= x * std::log(x);
        w->pieces.push_back(m.tokenizer().token_to_piece(e.token));
        w->p.push_back(w->pending[e.token]);
        w->margin.push_back(q[0] - q[1]);
        w->ent.push_back(h);
      };
      ids.push_back(eng.submit(std::move(rq)));
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      eng.wait(ids[i]);
      const auto res = sc[i]->result(0);
      const auto& x = res.probe_features.back();
      feats.push_back(std::vector<float>(x.end() - 1 - kProbeNumberFeatures, x.end() - 1));
      refs.push_back(number_features_reference(seen[i]->pieces, seen[i]->p, seen[i]->margin, seen[i]->ent));
    }
  };
  std::vector<std::vector<float>> fa, fb;
  std::vector<std::vector<double>> ra, rb;
  run(1, fa, ra);
  run(4, fb, rb);
  for (size_t i = 0; i < fa.size(); ++i)
    for (int j = 0; j < kProbeNumberFeatures; ++j) {
      EXPECT_NEAR(fa[i][j], ra[i][j], 1e-4) << "request " << i << " feature " << j;
      EXPECT_NEAR(fa[i][j], fb[i][j], 1e-4) << "request " << i << " feature " << j << " (batched)";
    }
}

TEST(ConfidenceProbe, NumberProbeFilesAreVersion2AndVersion1FilesStillLoad) {
  const Model& m = fixtures::model(probe_spec_model(), "probe4");
  ProbeFile f;
  f.model_fingerprint = model_fingerprint(m);
  f.spec.layers = {3};
  f.mlp = ProbeMLP(f.spec.dim(m.hparams().head_dim), 4, 3);
  const std::string p1 = (test::temp_dir() / "probe4_v1.confidence.bin").string();
  const std::string p2 = (test::temp_dir() / "probe4_v2.confidence.bin").string();
  save_probe(p1, f);  // no number statistics: a version-1 file, as older builds wrote
  f.spec.numbers = true;
  f.mlp = ProbeMLP(f.spec.dim(m.hparams().head_dim), 4, 3);
  save_probe(p2, f);
  auto version_of = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char b[12];
    in.read(b, 12);
    uint32_t v;
    std::memcpy(&v, b + 8, 4);
    return v;
  };
  EXPECT_EQ(version_of(p1), 1u);
  EXPECT_EQ(version_of(p2), 2u);
  const auto g1 = load_probe(p1, f.model_fingerprint);
  EXPECT_FALSE(g1.spec.numbers);
  EXPECT_EQ(g1.mlp.input_dim(), g1.spec.dim(m.hparams().head_dim));
  const auto g2 = load_probe(p2, f.model_fingerprint);
  EXPECT_TRUE(g2.spec.numbers);
  EXPECT_EQ(g2.mlp.input_dim(), g2.spec.dim(m.hparams().head_dim));
  // A file of a later version is refused by name.
  {
    std::fstream io(p2, std::ios::binary | std::ios::in | std::ios::out);
    io.seekp(8);
    const uint32_t v4 = 4;  // version 3 (the prompt prior) is read: confidence_prior_test.cpp
    io.write(reinterpret_cast<const char*>(&v4), 4);
  }
  try {
    load_probe(p2, f.model_fingerprint);
    FAIL() << "a version-4 file was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("version 4"), std::string::npos) << e.what();
  }
}

}  // namespace confidence_probe_test
