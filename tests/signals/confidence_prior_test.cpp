// The confidence probe's prompt prior (ProbeSpec::prior): the difficulty estimator read once from
// the prompt's KV. Its features against a reference from the K/V stored in the cache and against the
// estimator's own runtime (DifficultyTap + DifficultyMLP), batching, the file versions, and a probe
// or an estimator of another model refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "engine/context.h"
#include "engine/engine.h"
#include "fixtures.h"
#include "model/fingerprint.h"
#include "reasoning/difficulty_features.h"
#include "reasoning/difficulty_mlp.h"
#include "reasoning/prompt_prior.h"
#include "signals/confidence_probe.h"
#include "signals/scored_generation.h"
#include "test_util.h"
#include "util/error.h"
#include "util/rng.h"

namespace confidence_prior_test {

using namespace kvscope;
using namespace kvscope::signals;

namespace {

RandomModelSpec prior_model(uint64_t seed = 7) { return fixtures::tiny_spec(64, 4, 4, 2, 128, 300, 128, seed); }

std::vector<int32_t> tokens(int n, int salt = 0) {
  std::vector<int32_t> t = {1};
  for (int i = 1; i < n; ++i) t.push_back((i * 37 + salt * 11 + 5) % 290 + 5);
  return t;
}

// A random estimator over `layers` (empty: every layer) with a non-trivial standardization, so
// every part of the forward pass matters.
reasoning::DifficultyFile random_estimator(const Model& m, std::vector<int> layers, double fraction, uint64_t seed) {
  const HParams& hp = m.hparams();
  const int nl = layers.empty() ? hp.n_layer : static_cast<int>(layers.size());
  const int in = nl * 2 * hp.n_kv_dim(), hid = 16;
  reasoning::DifficultyFile f;
  f.model_fingerprint = model_fingerprint(m);
  f.features.layers = std::move(layers);
  f.features.prompt_fraction = fraction;
  f.mlp = reasoning::DifficultyMLP(in, hid, seed);
  auto w = f.mlp.pack();
  util::SplitMix64 r{seed + 1};
  for (int i = 0; i < in; ++i) {
    w[i] = static_cast<float>(0.05 * r.normal());                 // mean
    w[in + i] = static_cast<float>(0.5 + std::abs(r.normal()));  // inv_std
  }
  for (size_t i = 2 * static_cast<size_t>(in); i < w.size(); ++i) w[i] += static_cast<float>(0.05 * r.normal());  // biases too
  f.mlp.unpack(in, hid, w);
  f.info = "{\"test\":true}";
  return f;
}

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

// The prior's values inside a feature vector (they sit just before the token count).
std::vector<float> prior_part(const std::vector<float>& f) {
  return std::vector<float>(f.end() - 1 - kProbePriorFeatures, f.end() - 1);
}

uint32_t version_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char b[12];
  in.read(b, 12);
  uint32_t v;
  std::memcpy(&v, b + 8, 4);
  return v;
}

}  // namespace

TEST(ConfidencePrior, FeaturesEqualTheEstimatorAndAReferenceFromStoredKV) {
  const Model& m = fixtures::model(prior_model(), "prior4");
  const HParams& hp = m.hparams();
  struct Case {
    std::vector<int> layers;
    double fraction;
  };
  for (const Case& c : {Case{{}, 1.0}, Case{{1, 3}, 1.0}, Case{{0, 2}, 0.5}}) {
    const auto est = random_estimator(m, c.layers, c.fraction, 5 + c.layers.size());
    ProbeSpec spec;
    spec.layers = {2};
    spec.logits = false;
    spec.prior = reasoning::prompt_prior(est, hp.n_layer, "test");
    ASSERT_EQ(spec.dim(hp.head_dim), spec.per_layer(hp.head_dim) + kProbePriorFeatures + 1);
    const int P = 11, T = 6;
    ProbeFeatures tap(hp, spec, P);
    // The estimator as the adaptive controller runs it, on the same pass.
    reasoning::DifficultyTap dtap(hp, est.features.layers, false, est.features.window_end(P));
    TapFanout fan({&tap, &dtap}, &m);
    Context ctx(m, {64, 1, 512});
    ctx.set_tap(&fan);
    const auto all = tokens(P + T, static_cast<int>(c.layers.size()));
    ctx.eval(std::vector<int32_t>(all.begin(), all.begin() + 4));  // the prompt in two chunks
    ctx.eval(std::vector<int32_t>(all.begin() + 4, all.begin() + P));
    for (int t = P; t < P + T; ++t) ctx.eval({all[t]});
    const auto f = tap.features(LogitStats());
    ASSERT_EQ(static_cast<int>(f.size()), spec.dim(hp.head_dim));
    const auto got = prior_part(f);

    const auto e = est.mlp.estimate(dtap.features());
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], std::log(std::max(e.probs[i], 1e-6)), 2e-5) << "class " << i;

    std::vector<std::vector<std::vector<float>>> k, v;
    stored_kv(ctx, spec.prior->layers, 0, spec.prior->window_end(P), k, v);
    const auto ref = prior_features_reference(*spec.prior, k, v);
    // The cache holds F16 K/V, the tap sees them before rounding.
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], ref[i], 2e-3) << "class " << i;
    // Not a constant: the three classes get different probabilities, which sum to one.
    EXPECT_NE(got[0], got[1]);
    EXPECT_NEAR(std::exp(got[0]) + std::exp(got[1]) + std::exp(got[2]), 1.0, 1e-4);
    // Computed once: the sums are freed, the state is a few numbers.
    EXPECT_LT(tap.state_bytes(), spec.prior->layers.size() * 2 * hp.n_kv_dim() * sizeof(double));
  }
}

TEST(ConfidencePrior, UnchangedByBatchingAndFixedForTheWholeResponse) {
  const Model& m = fixtures::model(prior_model(), "prior4");
  const HParams& hp = m.hparams();
  const auto est = random_estimator(m, {}, 1.0, 21);
  ProbeFile pf;
  pf.spec.layers = {1};
  pf.spec.prior = reasoning::prompt_prior(est, hp.n_layer, "test");
  pf.mlp = ProbeMLP(pf.spec.dim(hp.head_dim), 8, 9);
  SignalOptions so;
  so.hidden = false;
  so.probe = &pf;
  so.probe_features_trace = true;
  auto run = [&](int max_seqs, std::vector<std::vector<std::vector<float>>>& traces, std::vector<double>& scores) {
    Engine eng(m, fixtures::small_engine(96, max_seqs));
    std::vector<std::unique_ptr<ResponseScorer>> sc;
    std::vector<RequestId> ids;
    for (int i = 0; i < 4; ++i) {
      Request r;
      r.prompt = tokens(7 + 4 * i, i);
      r.sampling.temperature = 0;
      r.max_tokens = 8 + i;
      r.ignore_eos = true;
      sc.push_back(std::make_unique<ResponseScorer>(m, static_cast<int>(r.prompt.size()), so));
      auto* s = sc.back().get();
      r.tap = s->tap();
      r.on_logits = [s](const float* l, int n) { s->observe_logits(l, n); };
      r.on_token = [s](const TokenEvent& e) { s->observe_token(e, -1); };
      ids.push_back(eng.submit(std::move(r)));
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      eng.wait(ids[i]);
      const auto res = sc[i]->result(0);
      traces.push_back(res.probe_features);
      scores.push_back(res.probe);
    }
  };
  std::vector<std::vector<std::vector<float>>> ta, tb;
  std::vector<double> sa, sb;
  run(1, ta, sa);
  run(4, tb, sb);
  ASSERT_EQ(ta.size(), 4u);
  for (size_t i = 0; i < ta.size(); ++i) {
    const auto pa = prior_part(ta[i].back()), pb = prior_part(tb[i].back());
    for (int j = 0; j < kProbePriorFeatures; ++j) EXPECT_NEAR(pa[j], pb[j], 1e-5) << "request " << i << " class " << j;
    EXPECT_NEAR(sa[i], sb[i], 1e-4) << "request " << i;
    // The prior is read from the prompt: the same after the first token as at the end.
    EXPECT_EQ(prior_part(ta[i].front()), pa) << "request " << i;
  }
  // Other prompts, other priors (the comparison above is not vacuous).
  EXPECT_NE(prior_part(ta[0].back()), prior_part(ta[1].back()));
}

TEST(ConfidencePrior, FileIsVersion3AndOlderFilesKeepTheirMeaning) {
  const Model& m = fixtures::model(prior_model(), "prior4");
  const HParams& hp = m.hparams();
  const uint64_t fp = model_fingerprint(m);
  ProbeFile f;
  f.model_fingerprint = fp;
  f.spec.layers = {3};
  f.mlp = ProbeMLP(f.spec.dim(hp.head_dim), 4, 3);
  const auto dir = test::temp_dir();
  const std::string p1 = (dir / "prior4_v1.confidence.bin").string(), p2 = (dir / "prior4_v2.confidence.bin").string(),
                    p3 = (dir / "prior4_v3.confidence.bin").string();
  save_probe(p1, f);  // the layouts older builds wrote: no number statistics, no prior
  f.spec.numbers = true;
  f.mlp = ProbeMLP(f.spec.dim(hp.head_dim), 4, 3);
  save_probe(p2, f);
  const auto est = random_estimator(m, {0, 3}, 1.0, 8);
  f.spec.prior = reasoning::prompt_prior(est, hp.n_layer, "test");
  f.mlp = ProbeMLP(f.spec.dim(hp.head_dim), 4, 3);
  save_probe(p3, f);
  EXPECT_EQ(version_of(p1), 1u);
  EXPECT_EQ(version_of(p2), 2u);
  EXPECT_EQ(version_of(p3), 3u);
  const auto g1 = load_probe(p1, fp), g2 = load_probe(p2, fp), g3 = load_probe(p3, fp);
  EXPECT_FALSE(g1.spec.prior);
  EXPECT_FALSE(g2.spec.prior);
  EXPECT_TRUE(g2.spec.numbers);
  EXPECT_EQ(g1.mlp.input_dim(), g1.spec.dim(hp.head_dim));
  EXPECT_EQ(g2.mlp.input_dim(), g2.spec.dim(hp.head_dim));
  ASSERT_TRUE(g3.spec.prior);
  EXPECT_EQ(g3.spec.prior->layers, (std::vector<int>{0, 3}));
  EXPECT_EQ(g3.spec.prior->mlp.pack(), f.spec.prior->mlp.pack());
  EXPECT_EQ(g3.spec.prior->id(), f.spec.prior->id());
  EXPECT_EQ(g3.mlp.input_dim(), g3.spec.dim(hp.head_dim));
  // The loaded prior computes what the saved one does.
  std::vector<float> x(f.spec.prior->mlp.input_dim());
  util::SplitMix64 r{2};
  for (float& v : x) v = static_cast<float>(r.normal());
  EXPECT_EQ(g3.spec.prior->probs(x.data()), f.spec.prior->probs(x.data()));
  // A damaged prior block is refused, not read.
  test::truncate_file(p3, std::filesystem::file_size(p3) - 100);
  EXPECT_THROW(load_probe(p3, fp), InputError);
}

TEST(ConfidencePrior, AnotherModelsProbeOrEstimatorIsRefused) {
  const Model& m = fixtures::model(prior_model(), "prior4");
  const RandomModelSpec wide = fixtures::tiny_spec(64, 4, 4, 4, 128, 300, 128, 8);  // more KV heads
  const Model& other = fixtures::model(wide, "prior4w");
  const HParams& hp = m.hparams();
  ProbeFile f;
  f.model_fingerprint = model_fingerprint(m);
  f.spec.layers = {1};
  f.spec.prior = reasoning::prompt_prior(random_estimator(m, {}, 1.0, 4), hp.n_layer, "test");
  f.mlp = ProbeMLP(f.spec.dim(hp.head_dim), 4, 3);
  const std::string path = (test::temp_dir() / "prior4.confidence.bin").string();
  save_probe(path, f);
  try {
    load_probe(path, model_fingerprint(other));
    FAIL() << "a probe of another model was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("another model"), std::string::npos) << e.what();
  }
  // An estimator whose input does not fit the model's KV (read without the fingerprint check).
  try {
    ProbeFeatures tap(other.hparams(), f.spec, 5);
    FAIL() << "a prior of the wrong width was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("prompt prior: the estimator reads"), std::string::npos) << e.what();
  }
  // An estimator pooling K before RoPE cannot be read from the cache's K.
  auto pre = random_estimator(m, {}, 1.0, 4);
  pre.features.pre_rope = true;
  EXPECT_THROW(reasoning::prompt_prior(pre, hp.n_layer, "pre.bin"), InputError);
}

TEST(ConfidencePrior, TrainConfidenceRefusesAnotherModelsEstimator) {
  const std::string model = fixtures::model_file(prior_model(), "prior4");
  const Model& om = fixtures::model(prior_model(8), "prior4b");
  const auto est = random_estimator(om, {}, 1.0, 4);
  const std::string dpath = (test::temp_dir() / "prior4b.difficulty.bin").string();
  reasoning::save_difficulty(dpath, est);
  const std::string data = (test::temp_dir() / "prior4_rows.jsonl").string();
  std::ofstream(data) << "{\"answer\": 3, \"prompt\": \"1 + 2 =\"}\n";
  const auto r = test::run_cli("train-confidence -m " + model + " --data " + data + " --prompt-prior --difficulty " +
                               dpath + " -o " + (test::temp_dir() / "x.bin").string() + " -q");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("error: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("another model"), std::string::npos) << r.out;
}

}  // namespace confidence_prior_test
