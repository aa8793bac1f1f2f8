#include "context_generate.h"
#include "engine/engine.h"

#include <gtest/gtest.h>
#include <chrono>
#include <thread>

#include <atomic>
#include <cmath>
#include <fstream>
#include <mutex>

#include "engine/context.h"
#include "model/random_model.h"
#include "fixtures.h"
#include "test_util.h"
#include "util/error.h"

namespace scheduler_test {

using namespace kvscope;

namespace {

const Model& tiny_model() {
  return fixtures::model(fixtures::tiny_spec(128, 2, 4, 2, 256, 400, 256, 23), "sched_llama");
}

SamplingParams greedy() {
  SamplingParams g;
  g.temperature = 0;
  return g;
}

std::vector<int32_t> prompt(int n, int seed) {
  std::vector<int32_t> p;
  for (int i = 0; i < n; ++i) p.push_back(3 + (i * 31 + seed * 17) % 390);
  return p;
}

std::vector<int32_t> solo(const std::vector<int32_t>& pr, int n) {
  Context ctx(tiny_model(), {256, 2, 512});
  return generate(ctx, pr, greedy(), n).tokens;
}

Request req(std::vector<int32_t> p, int max_tokens) {
  Request r;
  r.prompt = std::move(p);
  r.sampling = greedy();
  r.max_tokens = max_tokens;
  return r;
}

}  // namespace

TEST(Engine, BatchedSequencesProduceTheirSoloGreedyTokens) {
  EngineParams ep;
  ep.n_threads = 2;
  ep.n_blocks = 128;
  ep.max_batch_tokens = 24;  // forces chunked prefill next to running decodes
  Engine eng(tiny_model(), ep);
  const std::vector<int> lens = {5, 40, 17, 1, 64, 23};
  std::vector<RequestId> ids;
  for (size_t i = 0; i < lens.size(); ++i) ids.push_back(eng.submit(req(prompt(lens[i], static_cast<int>(i)), 12)));
  for (size_t i = 0; i < lens.size(); ++i) {
    Completion c = eng.wait(ids[i]);
    EXPECT_EQ(c.tokens, solo(prompt(lens[i], static_cast<int>(i)), 12)) << "request " << i;
    EXPECT_EQ(c.n_prompt, lens[i]);
  }
  EngineStats st = eng.stats();
  EXPECT_EQ(st.blocks.used, 0);  // everything released
  EXPECT_GT(st.steps, 12u);
  EXPECT_LT(st.kv_waste(), 0.5);
}

// A forced answer's token restrictions: its opening (only the first generated token is restricted,
// the rest are free) and its end (after the first token, the first token outside the set stops the
// request without being emitted).
TEST(Engine, ForcedAnswerRestrictsItsFirstTokenAndEndsOutsideTheContinuationSet) {
  EngineParams ep;
  ep.n_threads = 2;
  ep.n_blocks = 64;
  Engine eng(tiny_model(), ep);
  const auto pr = prompt(9, 4);
  const auto free_run = solo(pr, 6);

  std::vector<uint8_t> allowed(400, 0);
  const int32_t only = free_run[0] == 77 ? 78 : 77;  // a token greedy decoding would not pick first
  allowed[static_cast<size_t>(only)] = 1;
  Request r = req(pr, 6);
  r.first_token_allowed = &allowed;
  const Completion c = eng.wait(eng.submit(r));
  ASSERT_EQ(c.tokens.size(), 6u);
  EXPECT_EQ(c.tokens[0], only);
  auto cont = pr;
  cont.push_back(only);
  const auto rest = solo(cont, 5);  // after it, plain greedy decoding
  EXPECT_EQ(std::vector<int32_t>(c.tokens.begin() + 1, c.tokens.end()), rest);

  ASSERT_NE(free_run[1], free_run[3]);  // the tiny model's run, so that only the fourth token is barred
  ASSERT_NE(free_run[2], free_run[3]);
  std::vector<uint8_t> goes_on(400, 1);
  goes_on[static_cast<size_t>(free_run[3])] = 0;
  Request e = req(pr, 6);
  e.continue_allowed = &goes_on;
  const Completion ce = eng.wait(eng.submit(e));
  EXPECT_EQ(ce.tokens, std::vector<int32_t>(free_run.begin(), free_run.begin() + 3));
  EXPECT_EQ(ce.stop_reason, StopReason::Stop);
  std::vector<uint8_t> none(400, 0);
  e.continue_allowed = &none;
  const Completion c1 = eng.wait(eng.submit(e));
  EXPECT_EQ(c1.tokens, std::vector<int32_t>(free_run.begin(), free_run.begin() + 1));  // the first is always free
  EXPECT_EQ(c1.stop_reason, StopReason::Stop);
}

TEST(Engine, PrefixCacheHitGivesTheSameLogitsAsRecomputing) {
  EngineParams ep;
  ep.n_threads = 2;
  ep.n_blocks = 64;
  Engine eng(tiny_model(), ep);
  auto shared = prompt(48, 1);  // three full blocks
  auto a = shared, b = shared;
  a.insert(a.end(), {7, 8, 9});
  b.insert(b.end(), {10, 11});
  std::vector<float> la, lb;
  Request ra = req(a, 1), rb = req(b, 1), rc = req(shared, 1);
  ra.on_logits = [&](const float* l, int n) { la.assign(l, l + n); };
  rb.on_logits = [&](const float* l, int n) { lb.assign(l, l + n); };
  std::vector<float> lc;
  rc.on_logits = [&](const float* l, int n) { lc.assign(l, l + n); };
  Completion ca = eng.wait(eng.submit(ra));
  EXPECT_EQ(ca.n_cached, 0);
  Completion cb = eng.wait(eng.submit(rb));
  EXPECT_EQ(cb.n_cached, 48);
  // The whole prompt is cached: its last token is recomputed (copy-on-write into the shared block).
  Completion cc = eng.wait(eng.submit(rc));
  EXPECT_EQ(cc.n_cached, 47);
  Request salted = req(b, 1);
  salted.cache_salt = 99;  // another tenant does not see these blocks
  EXPECT_EQ(eng.wait(eng.submit(salted)).n_cached, 0);
  EXPECT_GE(eng.stats().blocks.prefix_hits, 6u);
  for (auto [toks, got] : {std::pair{b, &lb}, std::pair{shared, &lc}}) {
    Context ctx(tiny_model(), {256, 2, 512});
    const auto& ref = ctx.eval(toks);
    ASSERT_EQ(got->size(), ref.size());
    float m = 0;
    for (size_t i = 0; i < ref.size(); ++i) m = std::max(m, std::abs(ref[i] - (*got)[i]));
    EXPECT_LT(m, 1e-4f);
  }
}

TEST(Engine, PoolExhaustionPreemptsAndEveryRequestCompletes) {
  EngineParams ep;
  ep.n_threads = 2;
  ep.n_blocks = 12;  // 192 token slots for 6 requests that each grow to ~4 blocks
  ep.max_batch_tokens = 64;
  Engine eng(tiny_model(), ep);
  std::vector<RequestId> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(eng.submit(req(prompt(20 + i, 10 + i), 36)));
  for (int i = 0; i < 6; ++i) {
    Completion c = eng.wait(ids[i]);
    EXPECT_EQ(c.tokens, solo(prompt(20 + i, 10 + i), 36)) << "request " << i;
  }
  EXPECT_GT(eng.stats().preemptions, 0u);
  EXPECT_EQ(eng.stats().blocks.used, 0);
}

TEST(Engine, BackgroundLoopStreamsTokensAndCancels) {
  EngineParams ep;
  ep.n_threads = 2;
  ep.n_blocks = 64;
  Engine eng(tiny_model(), ep);
  eng.start();
  std::mutex mu;
  std::vector<int32_t> streamed;
  bool finished = false;
  Request r = req(prompt(10, 3), 10);
  r.on_token = [&](const TokenEvent& e) {
    std::lock_guard lk(mu);
    if (e.finished) finished = true;
    else streamed.push_back(e.token);
  };
  RequestId id = eng.submit(r);
  Request longr = req(prompt(10, 4), 200);
  longr.ignore_eos = true;
  std::atomic<int> n_long{0};
  std::atomic<bool> cancel_sent{false};
  longr.on_token = [&](const TokenEvent& e) {
    if (e.finished) return;
    ++n_long;
    // Past the short request's length, hold the step thread until the cancel is sent, so the long
    // request cannot simply run to its length first on a fast machine.
    for (int i = 0; n_long > 12 && !cancel_sent && i < 5000; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  RequestId lid = eng.submit(longr);
  Completion c = eng.wait(id);
  {
    std::lock_guard lk(mu);
    EXPECT_TRUE(finished);
    EXPECT_EQ(streamed, c.tokens);
  }
  EXPECT_EQ(c.tokens, solo(prompt(10, 3), 10));
  eng.cancel(lid);
  cancel_sent = true;
  Completion cl = eng.wait(lid);
  EXPECT_EQ(cl.stop_reason, StopReason::Cancelled);
  EXPECT_LT(cl.tokens.size(), 200u);
  eng.stop();
  EXPECT_THROW(eng.wait(lid), InputError);  // delivered once
}

TEST(Engine, RejectsBadRequests) {
  EngineParams ep;
  ep.n_threads = 1;
  ep.n_blocks = 4;  // 64 tokens per sequence at most
  Engine eng(tiny_model(), ep);
  EXPECT_THROW(eng.submit(req({}, 4)), InputError);
  EXPECT_THROW(eng.submit(req({400}, 4)), InputError);
  EXPECT_THROW(eng.submit(req(prompt(65, 0), 4)), LimitError);
  Completion c = eng.wait(eng.submit(req(prompt(60, 0), 50)));
  EXPECT_EQ(c.stop_reason, StopReason::Context);
  EXPECT_EQ(c.tokens.size(), 5u);
}

namespace {
float max_diff_vs_recompute(const std::vector<int32_t>& toks, const std::vector<float>& got) {
  Context ctx(tiny_model(), {256, 2, 512});
  const auto& ref = ctx.eval(toks);
  if (got.size() != ref.size()) return 1e9f;
  float m = 0;
  for (size_t i = 0; i < ref.size(); ++i) m = std::max(m, std::abs(ref[i] - got[i]));
  return m;
}
}  // namespace

TEST(Engine, SessionTurnComputesOnlyNewTokensAndSurvivesSaveRestore) {
  EngineParams ep;
  ep.n_threads = 2;
  ep.n_blocks = 64;
  ep.prefix_caching = false;  // the reuse below must come from the pinned session
  auto t1 = prompt(30, 5);
  std::vector<int32_t> history;
  const std::string file = (test::temp_dir() / "s.kvsession").string();
  {
    Engine eng(tiny_model(), ep);
    Request r1 = req(t1, 8);
    r1.session_id = "chat";
    Completion c1 = eng.wait(eng.submit(r1));
    ASSERT_TRUE(eng.has_session("chat"));
    history = t1;
    history.insert(history.end(), c1.tokens.begin(), c1.tokens.end());
    auto t2 = history;
    t2.insert(t2.end(), {21, 22, 23, 24});
    std::vector<float> l2;
    Request r2 = req(t2, 1);
    r2.session_id = "chat";
    r2.on_logits = [&](const float* l, int n) { l2.assign(l, l + n); };
    Completion c2 = eng.wait(eng.submit(r2));
    EXPECT_EQ(c2.n_cached, static_cast<int>(history.size()) - 1);  // the last generated token had no K/V yet
    EXPECT_LT(max_diff_vs_recompute(t2, l2), 1e-4f);
    history = t2;
    history.insert(history.end(), c2.tokens.begin(), c2.tokens.end());
    eng.save_session("chat", file);
    EXPECT_THROW(eng.save_session("nope", file + ".x"), InputError);
  }
  Engine eng(tiny_model(), ep);
  eng.restore_session("chat", file);
  auto t3 = history;
  t3.insert(t3.end(), {31, 32});
  std::vector<float> l3;
  Request r3 = req(t3, 1);
  r3.session_id = "chat";
  r3.on_logits = [&](const float* l, int n) { l3.assign(l, l + n); };
  Completion c3 = eng.wait(eng.submit(r3));
  EXPECT_EQ(c3.n_cached, static_cast<int>(history.size()) - 1);
  EXPECT_LT(max_diff_vs_recompute(t3, l3), 1e-4f);

  // Damaged, foreign and mismatched files are refused with clear errors.
  auto expect_refused = [&](Engine& e, const std::string& path, const std::string& what) {
    try {
      e.restore_session("x", path);
      FAIL() << "accepted " << what;
    } catch (const InputError& err) {
      EXPECT_NE(std::string(err.what()).find(what), std::string::npos) << err.what();
    }
  };
  std::string bytes = test::run_capture("cat '" + file + "'");
  {
    std::string bad = bytes;
    bad[bad.size() / 2] ^= 0x5a;
    std::ofstream(file + ".bad", std::ios::binary) << bad;
    expect_refused(eng, file + ".bad", "checksum");
    std::ofstream(file + ".short", std::ios::binary) << bytes.substr(0, 40);
    expect_refused(eng, file + ".short", "checksum");
  }
  const Model& other = fixtures::model(fixtures::tiny_spec(128, 2, 4, 2, 256, 400, 256, 24), "sched_other");
  Engine eng2(other, ep);
  expect_refused(eng2, file, "different model");
  EngineParams f16 = ep;
  f16.kv_type = kernels::DType::F16;
  Engine eng3(tiny_model(), f16);
  expect_refused(eng3, file, "element type");
}

TEST(Engine, PinnedSessionsYieldToRunningWork) {
  EngineParams ep;
  ep.n_threads = 2;
  ep.n_blocks = 8;
  Engine eng(tiny_model(), ep);
  Request r = req(prompt(60, 1), 4);
  r.session_id = "a";
  eng.wait(eng.submit(r));
  ASSERT_TRUE(eng.has_session("a"));
  // Needs most of the pool: the idle session is evicted rather than failing or preempting.
  Completion c = eng.wait(eng.submit(req(prompt(100, 2), 8)));
  EXPECT_EQ(c.tokens, solo(prompt(100, 2), 8));
  EXPECT_FALSE(eng.has_session("a"));
  EXPECT_EQ(eng.stats().blocks.used, 0);
}

}  // namespace scheduler_test
