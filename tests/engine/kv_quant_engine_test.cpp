// Quantized KV caches in attention and in the engine: accuracy against the F32 reference, SIMD
// against scalar, sessions, copy-on-write and prefix-cache reuse keeping their types.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/context.h"
#include "training/kv_calibrate.h"
#include "engine/paged_attention.h"
#include "engine/engine.h"
#include "kernels/kernels.h"
#include "kvcache/block_table.h"
#include "model/random_model.h"
#include "fixtures.h"
#include "test_util.h"
#include "util/error.h"

namespace kv_quant_engine_test {

using namespace kvscope;

namespace {

const KVType kQuant[] = {KVType::F16, KVType::BF16, KVType::FP8_E4M3, KVType::FP8_E5M2,
                         KVType::INT8, KVType::INT4, KVType::INT2, KVType::FP8_E4M3C, KVType::INT4C, KVType::INT2C,
                         KVType::INT4CH, KVType::INT2CH};

// Relative RMS error of attention outputs each type may have on N(0,1) K/V.
double tolerance(KVType t) {
  switch (t) {
    case KVType::F16: return 2e-3;
    case KVType::BF16: return 1e-2;
    case KVType::FP8_E4M3:
    case KVType::FP8_E4M3C: return 6e-2;
    case KVType::FP8_E5M2: return 1.2e-1;
    case KVType::INT8: return 2e-2;
    case KVType::INT4:
    case KVType::INT4C:
    case KVType::INT4CH: return 1.6e-1;
    default: return 6e-1;
  }
}

// Random K/V for sequences of `lens` positions written through the cache (so per-channel K goes
// through staging and block quantization), attention of the last n_new tokens of each compared with
// contiguous F32 attention over the unquantized values.
void check_attention(KVType t, AttentionShape s, const std::vector<int>& lens, const std::vector<int>& n_new) {
  std::mt19937 rng(11);
  std::normal_distribution<float> nd;
  const int kvd = s.n_head_kv * s.head_dim, qd = s.n_head * s.head_dim, bs = 16;
  PagedKVConfig c;
  c.n_layer = 1;
  c.kv_dim = kvd;
  c.block_size = bs;
  c.n_blocks = 32;
  c.kv_types.assign(1, {t, t});
  PagedKVCache kv(c);
  kernels::ThreadPool pool(2);
  std::vector<BlockTable> tables(lens.size());
  std::vector<std::unique_ptr<KVCache>> refs;
  std::vector<SeqAttention> seqs;
  int rows = 0;
  for (size_t i = 0; i < lens.size(); ++i) {
    refs.push_back(make_contiguous_kv_cache(1, lens[i], kvd));
    ASSERT_TRUE(tables[i].prepare(kv, 0, lens[i]));
    for (int p = 0; p < lens[i]; ++p) {
      std::vector<float> k(kvd), v(kvd);
      for (auto& x : k) x = nd(rng);
      for (auto& x : v) x = nd(rng);
      kv.write(0, tables[i].block_of(p, bs), p % bs, k.data(), v.data());
      refs[i]->write(0, p, k.data(), v.data());
    }
    seqs.push_back({tables[i].blocks().data(), tables[i].n_blocks(), lens[i] - n_new[i], n_new[i], rows});
    rows += n_new[i];
  }
  std::vector<float> q(static_cast<size_t>(rows) * qd);
  for (auto& x : q) x = nd(rng);
  std::vector<float> out(q.size()), out_ref(q.size()), expect(q.size()), scratch;
  paged_attention(kv, 0, s, q.data(), seqs, out.data(), scratch, pool);
  paged_attention_ref(kv, 0, s, q.data(), seqs, out_ref.data());
  for (size_t i = 0; i < lens.size(); ++i) {
    std::vector<float> sc(static_cast<size_t>(pool.size()) * lens[i]);
    attention(*refs[i], 0, s, q.data() + static_cast<size_t>(seqs[i].row0) * qd, seqs[i].n_tokens, seqs[i].pos0,
              expect.data() + static_cast<size_t>(seqs[i].row0) * qd, sc.data(), pool);
  }
  double e2 = 0, n2 = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    ASSERT_NEAR(out[i], out_ref[i], 1e-4f) << kv_type_name(t) << ": SIMD vs scalar paged attention, element " << i;
    e2 += double(out[i] - expect[i]) * (out[i] - expect[i]);
    n2 += double(expect[i]) * expect[i];
  }
  EXPECT_LT(std::sqrt(e2 / n2), tolerance(t)) << kv_type_name(t) << " head_dim " << s.head_dim;
}

const Model& tiny_model() {
  return fixtures::model(fixtures::tiny_spec(128, 2, 4, 2, 256, 400, 256, 23), "kvq_llama");
}

std::vector<int32_t> prompt(int n, int seed) {
  std::vector<int32_t> p;
  for (int i = 0; i < n; ++i) p.push_back(3 + (i * 31 + seed * 17) % 390);
  return p;
}

Request req(std::vector<int32_t> p, int max_tokens, std::vector<float>* logits = nullptr) {
  Request r;
  r.prompt = std::move(p);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  if (logits) r.on_logits = [logits](const float* l, int n) { logits->assign(l, l + n); };
  return r;
}

EngineParams params(KVCacheTypes t, bool prefix) {
  EngineParams ep;
  ep.n_threads = 2;
  ep.n_blocks = 64;
  ep.kv_type = std::move(t);
  ep.prefix_caching = prefix;
  return ep;
}

float max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace

TEST(PagedAttentionQuant, CloseToTheF32ContiguousReferenceForEveryType) {
  for (KVType t : kQuant) {
    check_attention(t, {8, 2, 32}, {37, 16, 5}, {3, 16, 5});  // GQA 4:1, partial and full blocks
    check_attention(t, {4, 1, 64}, {50}, {2});
    check_attention(t, {4, 2, 128}, {21, 33}, {21, 1});
  }
}

TEST(KVQuantEngine, MixedLayerTypesRunAndStayCloseToF32) {
  KVCacheTypes mixed(KVType::F16, KVType::F16);
  mixed.layers = parse_kv_layer_types("0:int8,1:int4");
  std::vector<float> l32, lmix;
  Engine e32(tiny_model(), params(KVCacheTypes(), false));
  Engine emix(tiny_model(), params(mixed, false));
  e32.wait(e32.submit(req(prompt(40, 2), 1, &l32)));
  emix.wait(emix.submit(req(prompt(40, 2), 1, &lmix)));
  float scale = 0;
  for (float x : l32) scale = std::max(scale, std::fabs(x));
  EXPECT_LT(max_diff(l32, lmix), 0.2f * scale);
  EXPECT_GT(max_diff(l32, lmix), 0.0f);  // the types did take effect
  KVCacheTypes bad;
  bad.layers = parse_kv_layer_types("0-2:int4");
  EXPECT_THROW(Engine(tiny_model(), params(bad, false)), InputError);
}

// A session saved while its last block is partial (INT4 K still in staging) continues exactly as
// the engine that never saved it.
TEST(KVQuantEngine, SessionSavedInOneTypeRestoresAndContinuesIdentically) {
  for (KVCacheTypes t : {KVCacheTypes(KVType::INT4, KVType::INT4), KVCacheTypes(KVType::FP8_E4M3, KVType::INT8),
                         KVCacheTypes(KVType::FP8_E4M3C, KVType::FP8_E4M3C), KVCacheTypes(KVType::INT4C, KVType::INT4C),
                         KVCacheTypes(KVType::INT2C, KVType::INT4C), KVCacheTypes(KVType::INT4C, KVType::INT4CH),
                         KVCacheTypes(KVType::INT8, KVType::INT2CH)}) {
    const std::string file = (test::temp_dir() / "kvq.kvsession").string();
    auto t1 = prompt(30, 5);
    std::vector<int32_t> history, cont_a, cont_b;
    std::vector<float> la, lb;
    {
      Engine eng(tiny_model(), params(t, false));
      Request r1 = req(t1, 7);
      r1.session_id = "s";
      Completion c1 = eng.wait(eng.submit(r1));
      history = t1;
      history.insert(history.end(), c1.tokens.begin(), c1.tokens.end());
      eng.save_session("s", file);
      Request r2 = req(history, 12, &la);
      r2.session_id = "s";
      cont_a = eng.wait(eng.submit(r2)).tokens;
    }
    Engine eng(tiny_model(), params(t, false));
    eng.restore_session("s", file);
    Request r2 = req(history, 12, &lb);
    r2.session_id = "s";
    Completion c = eng.wait(eng.submit(r2));
    cont_b = c.tokens;
    EXPECT_EQ(c.n_cached, static_cast<int>(history.size()) - 1);
    EXPECT_EQ(cont_a, cont_b) << t.describe();
    EXPECT_EQ(max_diff(la, lb), 0.0f) << t.describe();
    Engine other(tiny_model(), params(KVCacheTypes(KVType::F16, KVType::F16), false));
    try {
      other.restore_session("s", file);
      FAIL() << "restored a session of other KV types";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("do not match"), std::string::npos) << e.what();
    }
  }
}

// Prefix-cache hits (shared quantized blocks) and the copy-on-write of a fully cached prompt give
// the logits of recomputing with the same types.
TEST(KVQuantEngine, PrefixCacheAndCopyOnWriteMatchRecomputation) {
  for (KVCacheTypes t : {KVCacheTypes(KVType::INT4, KVType::INT4), KVCacheTypes(KVType::INT8, KVType::INT2),
                         KVCacheTypes(KVType::FP8_E5M2, KVType::BF16), KVCacheTypes(KVType::FP8_E4M3C, KVType::INT4C),
                         KVCacheTypes(KVType::INT4C, KVType::INT4CH)}) {
    Engine cached(tiny_model(), params(t, true));
    auto shared = prompt(48, 1);
    auto b = shared;
    b.insert(b.end(), {10, 11});
    cached.wait(cached.submit(req(shared, 1)));
    std::vector<float> lb, lc, rb, rc;
    EXPECT_EQ(cached.wait(cached.submit(req(b, 1, &lb))).n_cached, 48);
    EXPECT_EQ(cached.wait(cached.submit(req(shared, 1, &lc))).n_cached, 47);  // last token into a COW copy
    Engine fresh(tiny_model(), params(t, false));
    fresh.wait(fresh.submit(req(b, 1, &rb)));
    fresh.wait(fresh.submit(req(shared, 1, &rc)));
    EXPECT_LT(max_diff(lb, rb), 1e-4f) << t.describe();
    EXPECT_LT(max_diff(lc, rc), 1e-3f) << t.describe();
  }
}

// Truncating inside a block whose INT4 K is already quantized and continuing restores its rows into
// staging: the continuation stays close to computing the whole text at once.
TEST(KVQuantEngine, TruncateInsideAQuantizedBlockContinues) {
  for (const KVCacheTypes& t : {KVCacheTypes(KVType::INT4, KVType::INT4), KVCacheTypes(KVType::FP8_E4M3C, KVType::INT4C),
                               KVCacheTypes(KVType::INT4C, KVType::INT4C), KVCacheTypes(KVType::INT4CH, KVType::INT4CH)}) {
    auto text = prompt(40, 3);
    Context whole(tiny_model(), {64, 2, 512, t});
    const std::vector<float> ref = whole.eval(text);
    Context ctx(tiny_model(), {64, 2, 512, t});
    ctx.eval(text);
    ctx.truncate(20);
    const std::vector<float> got = ctx.eval(std::vector<int32_t>(text.begin() + 20, text.end()));
    float scale = 0;
    for (float x : ref) scale = std::max(scale, std::fabs(x));
    EXPECT_LT(max_diff(ref, got), 0.05f * scale) << t.describe();
  }
}

KVCalibrateOptions calib_opts(std::vector<KVType> candidates, int search_passes) {
  KVCalibrateOptions o;
  o.candidates = std::move(candidates);
  o.search_passes = search_passes;
  return o;
}

TEST(KVCalibrate, PicksTypesWithinTheBudgetAtTheLeastDivergence) {
  const TextChunks text = {prompt(24, 1)};
  const std::vector<KVType> cands = {KVType::F16, KVType::INT8, KVType::INT4};
  const KVCalibration all16 = kv_calibrate(tiny_model(), text, 16.0, 2, calib_opts(cands, 4));
  for (const auto& lt : all16.types) EXPECT_EQ(lt, (KVLayerType{KVType::F16, KVType::F16}));
  EXPECT_EQ(all16.predicted_kl, 0.0);
  const KVCalibration c = kv_calibrate(tiny_model(), text, 5.5, 2, calib_opts(cands, 0));
  EXPECT_LE(c.bits, 5.5);
  // Every item's KL is measured, and the choice's predicted KL is the sum of its items'.
  double sum = 0;
  const size_t C = c.candidates.size();
  for (int l = 0; l < 2; ++l)
    for (int kv = 0; kv < 2; ++kv) {
      const KVType chosen = kv == 0 ? c.types[l].k : c.types[l].v;
      const size_t ci = std::find(c.candidates.begin(), c.candidates.end(), chosen) - c.candidates.begin();
      ASSERT_LT(ci, C);
      sum += c.kl[(l * 2 + kv) * C + ci];
    }
  EXPECT_NEAR(sum, c.predicted_kl, 1e-12);
  // Uniform INT4 fits 5.5 bits here, so the optimum is no worse than it.
  double int4 = 0;
  const size_t i4 = std::find(c.candidates.begin(), c.candidates.end(), KVType::INT4) - c.candidates.begin();
  for (int item = 0; item < 4; ++item) int4 += c.kl[item * C + i4];
  EXPECT_LE(c.predicted_kl, int4 + 1e-12);
  EXPECT_THROW(kv_calibrate(tiny_model(), text, 2.0, 2, calib_opts(cands, 4)), InputError);
}

TEST(KVCalibrate, JointSearchKeepsTheBudgetAndEndsNoWorseThanTheKnapsack) {
  const TextChunks text = {prompt(24, 1), prompt(24, 2)};
  const std::vector<KVType> cands = {KVType::F16, KVType::INT8, KVType::INT4, KVType::INT2};
  const KVCalibration c = kv_calibrate(tiny_model(), text, 5.0, 2, calib_opts(cands, 3));
  EXPECT_LE(c.bits, 5.0);
  ASSERT_GE(c.knapsack_kl, 0.0);
  EXPECT_LE(c.measured_kl, c.knapsack_kl);
  EXPECT_GT(c.searched_maps, 1);
  // The reported divergence is what the chosen map gives when run directly.
  KVCacheTypes t(KVType::F16, KVType::F16);
  for (int l = 0; l < static_cast<int>(c.types.size()); ++l) t.layers.push_back({l, l, c.types[l]});
  const LogProbs ref = teacher_forced(tiny_model(), KVCacheTypes(KVType::F16, KVType::F16), text, 2);
  EXPECT_NEAR(score(ref, teacher_forced(tiny_model(), t, text, 2)).mean_kl, c.measured_kl, 1e-6 * c.measured_kl + 1e-12);
  // Without the search the knapsack's map is returned unmeasured.
  const KVCalibration k = kv_calibrate(tiny_model(), text, 5.0, 2, calib_opts(cands, 0));
  EXPECT_EQ(k.types, c.knapsack_types);
  EXPECT_LT(k.measured_kl, 0.0);
}

}  // namespace kv_quant_engine_test
