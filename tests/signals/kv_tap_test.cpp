// The feature tap against a direct computation from the K/V stored in the paged cache, and the
// engine's behaviour with a tap attached.
#include "context_generate.h"
#include "signals/kv_tap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine/batch.h"
#include "engine/context.h"
#include "engine/engine.h"
#include "model/random_model.h"
#include "signals/scored_generation.h"
#include "fixtures.h"
#include "test_util.h"
#include "util/error.h"

namespace kv_tap_test {

using namespace kvscope;
using namespace kvscope::signals;

namespace {

std::string signals_model(const std::string& arch = "llama", int layers = 6) {
  RandomModelSpec s = fixtures::tiny_spec(64, layers, 4, 2, 128, 300, 128, 7);
  s.arch = arch;
  return fixtures::model_file(s, "signals_" + arch + std::to_string(layers));
}

std::vector<int32_t> some_tokens(int n, int salt = 0) {
  std::vector<int32_t> t = {1};
  for (int i = 1; i < n; ++i) t.push_back((i * 37 + salt * 11 + 5) % 290 + 5);
  return t;
}

// e_t straight from the cache, in double: mean over the layers of [K | V].
std::vector<std::vector<double>> reference_points(const Context& ctx, const std::vector<int>& layers, int begin, int end) {
  const PagedKVCache& kv = ctx.kv();
  const int kd = kv.kv_dim(), bs = kv.block_size();
  std::vector<std::vector<double>> pts;
  std::vector<float> row(kd);
  for (int pos = begin; pos < end; ++pos) {
    std::vector<double> e(2 * kd, 0.0);
    const BlockId b = ctx.table().block_of(pos, bs);
    for (int l : layers) {
      for (int half = 0; half < 2; ++half) {
        if (half) kv.read_v(l, b, pos % bs, row.data());
        else kv.read_k(l, b, pos % bs, row.data());
        for (int i = 0; i < kd; ++i) e[half * kd + i] += row[i] / double(layers.size());
      }
    }
    pts.push_back(e);
  }
  return pts;
}

double norm(const std::vector<double>& a) {
  double s = 0;
  for (double x : a) s += x * x;
  return std::sqrt(s);
}
double dist(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s);
}
double angle(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += a[i] * b[i];
  return std::acos(std::clamp(d / (norm(a) * norm(b)), -1.0, 1.0));
}

void expect_rel(double got, double want, double tol = 1e-4) {
  EXPECT_NEAR(got, want, tol * std::max(1.0, std::abs(want)));
}

}  // namespace

TEST(SignalsTap, LayerSelections) {
  EXPECT_EQ(parse_layers("mid", 6), (std::vector<int>{2, 3}));
  EXPECT_EQ(parse_layers("mid", 3), (std::vector<int>{1}));
  EXPECT_EQ(parse_layers("mid", 1), (std::vector<int>{0}));
  EXPECT_EQ(parse_layers("all", 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parse_layers("1-3", 6), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(parse_layers("4,0,4", 6), (std::vector<int>{0, 4}));
  EXPECT_THROW(parse_layers("6", 6), InputError);
  EXPECT_THROW(parse_layers("3-1", 6), InputError);
  EXPECT_THROW(parse_layers("middle", 6), InputError);
  EXPECT_THROW(parse_layers("1,,2", 6), InputError);
}

TEST(SignalsTap, ScoresEqualReferenceFromStoredKV) {
  auto model = Model::load(signals_model());
  const HParams& hp = model->hparams();
  for (const std::string sel : {"all", "mid", "4"}) {
    TapOptions o;
    o.layers = parse_layers(sel, hp.n_layer);
    o.begin = 5;
    o.trace = true;
    FeatureTap tap(hp, o);
    Context ctx(*model, {64, 1, 4});  // prefill in chunks of 4, then decode steps
    ctx.set_tap(&tap);
    auto toks = some_tokens(11);
    ctx.eval(toks);
    for (int32_t t : {7, 70, 170, 33, 9}) ctx.eval({t});
    const int end = ctx.n_past();
    ASSERT_EQ(tap.n_tokens(), end - 5) << sel;

    const auto pts = reference_points(ctx, o.layers, 5, end);
    double sdr = 0, sdt = 0;
    for (size_t i = 0; i + 1 < pts.size(); ++i) {
      sdr += dist(pts[i + 1], pts[i]);
      sdt += angle(pts[i], pts[i + 1]);
    }
    const double S = double(pts.size() - 1), mdr = sdr / S, mdt = sdt / S;
    const double DR = dist(pts.back(), pts.front()), DT = angle(pts.front(), pts.back());
    const CoEScores c = tap.scores();
    expect_rel(c.coe_r, mdr);
    expect_rel(c.coe_c, std::hypot(mdr, mdt));
    expect_rel(c.coe_r_norm, mdr / DR - mdt / DT);
    expect_rel(c.coe_c_norm, std::hypot(mdr / DR, mdt / DT));
    // Trace mode holds exactly the stored e_t.
    ASSERT_EQ(tap.trace().size(), pts.size() * tap.feature_dim());
    for (size_t i = 0; i < pts.size(); ++i)
      for (int j = 0; j < tap.feature_dim(); ++j) ASSERT_NEAR(tap.trace()[i * tap.feature_dim() + j], pts[i][j], 1e-5);

    // The library's own replay from the cache gives the same scores and embedding.
    o.trace = false;
    FeatureTap replay(hp, o);
    replay_from_cache(ctx.kv(), ctx.table(), 0, end, replay);
    expect_rel(replay.scores().coe_c, c.coe_c, 1e-6);
    expect_rel(replay.scores().coe_r_norm, c.coe_r_norm, 1e-6);
    EXPECT_EQ(replay.pooled_mean(), tap.pooled_mean());
  }
}

TEST(SignalsTap, F16CacheReplayIsCloseAndPreRopeIsRefused) {
  auto model = Model::load(signals_model("qwen3"));
  const HParams& hp = model->hparams();
  ContextParams cp{64, 1, 512, kernels::DType::F16};
  Context ctx(*model, cp);
  TapOptions o;
  o.layers = parse_layers("all", hp.n_layer);
  FeatureTap tap(hp, o);
  ctx.set_tap(&tap);
  ctx.eval(some_tokens(20));
  FeatureTap replay(hp, o);
  replay_from_cache(ctx.kv(), ctx.table(), 0, 20, replay);
  expect_rel(replay.scores().coe_c, tap.scores().coe_c, 1e-2);  // F16 rounding of the stored rows
  o.pre_rope = true;
  FeatureTap pre(hp, o);
  EXPECT_THROW(replay_from_cache(ctx.kv(), ctx.table(), 0, 20, pre), InputError);
}

TEST(SignalsTap, PreRopeKeyDiffersExceptAtPositionZero) {
  auto model = Model::load(signals_model());
  const HParams& hp = model->hparams();
  auto run = [&](bool pre) {
    TapOptions o;
    o.pre_rope = pre;
    o.trace = true;
    FeatureTap tap(hp, o);
    Context ctx(*model, {64, 1, 512});
    ctx.set_tap(&tap);
    ctx.eval(some_tokens(6));
    return tap.trace();
  };
  const auto post = run(false), pre = run(true);
  const int fd = 2 * hp.n_kv_dim();
  ASSERT_EQ(post.size(), pre.size());
  // RoPE rotates by zero at position 0, and never touches V.
  for (int i = 0; i < fd; ++i) EXPECT_FLOAT_EQ(pre[i], post[i]);
  bool k_differs = false;
  for (int i = fd; i < 2 * fd; ++i) {
    if (i - fd >= hp.n_kv_dim()) EXPECT_FLOAT_EQ(pre[i], post[i]);
    else k_differs |= pre[i] != post[i];
  }
  EXPECT_TRUE(k_differs);
}

TEST(SignalsTap, TapLeavesLogitsBitIdentical) {
  auto model = Model::load(signals_model());
  const auto toks = some_tokens(13);
  Context plain(*model, {64, 2, 512});
  const std::vector<float> a = plain.eval(toks, true);
  TapOptions o;
  o.layers = parse_layers("all", model->hparams().n_layer);
  o.hidden = true;
  o.trace = true;
  o.pre_rope = true;
  FeatureTap tap(model->hparams(), o);
  Context tapped(*model, {64, 2, 512});
  tapped.set_tap(&tap);
  const std::vector<float> b = tapped.eval(toks, true);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  EXPECT_EQ(tap.n_tokens(), 13);
}

TEST(SignalsTap, RecomputedPositionsAreNotCountedTwice) {
  auto model = Model::load(signals_model());
  FeatureTap once(model->hparams(), {}), twice(model->hparams(), {});
  Context a(*model, {64, 1, 512}), b(*model, {64, 1, 512});
  a.set_tap(&once);
  b.set_tap(&twice);
  const auto toks = some_tokens(9);
  a.eval(toks);
  b.eval(toks);
  b.truncate(4);  // as after a preemption: the same positions come again
  b.eval(std::vector<int32_t>(toks.begin() + 4, toks.end()));
  EXPECT_EQ(twice.n_tokens(), once.n_tokens());
  EXPECT_EQ(twice.n_steps(), once.n_steps());
  EXPECT_EQ(twice.scores().coe_c, once.scores().coe_c);
  EXPECT_EQ(twice.pooled_mean(), once.pooled_mean());
}

TEST(SignalsTap, EngineRequestTapMatchesContext) {
  auto model = Model::load(signals_model());
  const HParams& hp = model->hparams();
  const auto prompt = some_tokens(10);
  TapOptions o;
  o.begin = 10;
  FeatureTap via_engine(hp, o);
  EngineParams ep;
  ep.n_threads = 1;
  ep.n_ctx = 64;
  ep.kv_mem_bytes = 1 << 20;
  Engine eng(*model, ep);
  Request r;
  r.prompt = prompt;
  r.sampling.temperature = 0;
  r.max_tokens = 6;
  r.ignore_eos = true;
  r.tap = &via_engine;
  Completion c = eng.wait(eng.submit(r));
  ASSERT_EQ(c.tokens.size(), 6u);
  // The same tokens through a Context: the last generated token has no K/V in either.
  FeatureTap via_ctx(hp, o);
  Context ctx(*model, {64, 1, 512});
  ctx.set_tap(&via_ctx);
  std::vector<int32_t> all = prompt;
  all.insert(all.end(), c.tokens.begin(), c.tokens.end() - 1);
  ctx.eval(all);
  ASSERT_EQ(via_engine.n_tokens(), 5);
  ASSERT_EQ(via_ctx.n_tokens(), 5);
  expect_rel(via_engine.scores().coe_c, via_ctx.scores().coe_c, 1e-4);
}

TEST(SignalsTap, ScoredGenerationReportsEveryScore) {
  auto model = Model::load(signals_model());
  Engine eng(*model, scored_engine_params(*model, {64, 1, 512}));
  SamplingParams sp;
  sp.temperature = 0;
  SignalOptions so;
  so.extra = {{"all", parse_layers("all", model->hparams().n_layer), false}, {"layer0", {0}, false}};
  const auto prompt = model->tokenizer().encode("hello world", true, false);
  auto r = generate_scored(eng, prompt, sp, 7, so);
  ASSERT_EQ(r.gen.tokens.size(), 7u) << stop_reason_name(r.gen.stop_reason);
  const auto& s = r.signals;
  // The cap stopped generation, so one extra step computed the last token's K/V.
  EXPECT_EQ(s.n_tokens, static_cast<int>(r.gen.tokens.size()));
  EXPECT_GT(s.kv.coe_c, 0);
  EXPECT_GT(s.max_prob, 0);
  EXPECT_LE(s.max_prob, 1);
  EXPECT_GE(s.perplexity, 1);
  EXPECT_GT(s.entropy, 0);
  EXPECT_TRUE(s.has_hidden);
  EXPECT_GT(s.hidden.coe_c_norm, 0);
  ASSERT_EQ(s.extra.size(), 2u);
  EXPECT_NE(s.extra[0].second.coe_c, s.kv.coe_c);
  auto j = s.to_json();
  for (const char* k : {"kv_coe_c", "kv_coe_r", "kv_coe_c_norm", "max_prob", "perplexity", "entropy", "hidden_coe_c", "memory"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_GT(j["memory"]["tap_bytes"].get<size_t>(), 0u);
  // Its own session is dropped: the engine keeps nothing pinned.
  EXPECT_EQ(eng.stats().sessions, 0);
  // The scores do not depend on the tap: generation equals the plain one.
  Context plain(*model, {64, 1, 512});
  auto g = generate(plain, prompt, sp, 7);
  EXPECT_EQ(g.tokens, r.gen.tokens);
}

TEST(SignalsTap, SchedulerDrivenScorerMatchesScoredGeneration) {
  auto model = Model::load(signals_model());
  const auto prompt = model->tokenizer().encode("hello world", true, false);
  SignalOptions so;
  so.include_last = false;  // the scheduler computes no K/V for the last token either
  SamplingParams sp;
  sp.temperature = 0;
  Engine own(*model, scored_engine_params(*model, {64, 1, 512}));
  const auto ref = generate_scored(own, prompt, sp, 6, so);

  EngineParams ep;
  ep.n_threads = 1;
  ep.n_ctx = 64;
  ep.kv_mem_bytes = 1 << 20;
  Engine eng(*model, ep);
  ResponseScorer sc(*model, static_cast<int>(prompt.size()), so);
  Request r;
  r.prompt = prompt;
  r.sampling = sp;
  r.max_tokens = 6;
  r.tap = sc.tap();
  r.on_logits = [&](const float* l, int nv) { sc.observe_logits(l, nv); };
  r.on_token = [&](const TokenEvent& e) { sc.observe_token(e, model->tokenizer().vocab().eos); };
  Completion c = eng.wait(eng.submit(r));
  ASSERT_EQ(c.tokens, ref.gen.tokens);
  const ResponseSignals s = sc.result(0);
  EXPECT_EQ(s.n_tokens, ref.signals.n_tokens);
  expect_rel(s.kv.coe_c, ref.signals.kv.coe_c);
  expect_rel(s.kv.coe_r_norm, ref.signals.kv.coe_r_norm);
  expect_rel(s.max_prob, ref.signals.max_prob);
  expect_rel(s.perplexity, ref.signals.perplexity);
  expect_rel(s.hidden.coe_c_norm, ref.signals.hidden.coe_c_norm);
}

TEST(SignalsTap, MixedRopeFanoutGivesEachTapWhatItWouldSeeAlone) {
  auto model = Model::load(signals_model("qwen2"));
  const HParams& hp = model->hparams();
  const auto toks = some_tokens(12);
  auto alone = [&](bool pre) {
    TapOptions o;
    o.pre_rope = pre;
    o.trace = true;
    FeatureTap t(hp, o);
    Context ctx(*model, {64, 1, 5});
    ctx.set_tap(&t);
    ctx.eval(toks);
    return t.trace();
  };
  TapOptions o;
  o.trace = true;
  FeatureTap post(hp, o);
  o.pre_rope = true;
  FeatureTap pre(hp, o);
  EXPECT_THROW(TapFanout({&post, &pre}), InputError);  // cannot rotate without the model
  TapFanout fan({&post, &pre}, model.get());
  EXPECT_TRUE(fan.pre_rope);
  Context ctx(*model, {64, 1, 5});
  ctx.set_tap(&fan);
  ctx.eval(toks);
  EXPECT_EQ(post.trace(), alone(false));  // the same rotation arithmetic: bit-identical
  EXPECT_EQ(pre.trace(), alone(true));
}

TEST(SignalsTap, StateDoesNotGrowWithTheResponse) {
  // The scores need only running sums, so a tap's memory is fixed unless per-step values are asked for.
  auto model = Model::load(signals_model());
  FeatureTap tap(model->hparams(), {});
  TapOptions so;
  so.steps = true;
  FeatureTap with_steps(model->hparams(), so);
  TapFanout both({&tap, &with_steps});
  Context ctx(*model, {64, 1, 512});
  ctx.set_tap(&both);
  const auto toks = some_tokens(40);
  ctx.eval(std::vector<int32_t>(toks.begin(), toks.begin() + 8));
  ctx.eval(std::vector<int32_t>(toks.begin() + 8, toks.begin() + 9));
  const size_t early = tap.state_bytes();
  for (int i = 9; i < 40; ++i) ctx.eval(std::vector<int32_t>(toks.begin() + i, toks.begin() + i + 1));
  EXPECT_EQ(tap.state_bytes(), early);
  EXPECT_GT(with_steps.state_bytes(), early);
  EXPECT_EQ(static_cast<int>(with_steps.steps().size()), tap.n_steps());
  EXPECT_EQ(tap.scores().coe_c, with_steps.scores().coe_c);
  EXPECT_EQ(tap.n_steps(), 39);
}

}  // namespace kv_tap_test
