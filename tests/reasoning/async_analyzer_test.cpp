// The asynchronous analyzer: it estimates off the caller's thread, only after another
// check_every tokens, and leaves the controller's decision for the request to act on.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "reasoning/async_analyzer.h"

using namespace kvscope;
using namespace kvscope::reasoning;

namespace {
HParams hp() {
  HParams h;
  h.n_layer = 2;
  h.n_head_kv = 1;
  h.head_dim = 4;
  h.n_embd = 8;
  return h;
}
bool wait_for(const std::function<bool()>& f, double s = 2.0) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(s);
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return f();
}
}  // namespace

TEST(AsyncAnalyzer, EstimatesEveryCheckIntervalAndPostsTheDecision) {
  DifficultyTap tap(hp(), {}, false);
  DifficultyMLP mlp(tap.dim(), 4, 7);
  AsyncAnalyzer an(mlp, 5);
  // Starting in fast with d = 0 and a fast band of [0, 0]: any positive estimate is an upgrade.
  ControllerConfig cfg;
  cfg.fast_at_most = 0;
  Controller ctl(cfg);
  ctl.start({Mode::Fast, 0, 1, "test"});
  auto w = an.watch(tap, std::move(ctl));
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  EXPECT_EQ(an.stats().estimates, 0u);  // no tokens yet: nothing to look at
  w->generated = 4;
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  EXPECT_EQ(an.stats().estimates, 0u);  // still inside the first 5 tokens
  w->generated = 5;
  ASSERT_TRUE(wait_for([&] { return w->action.load() == static_cast<int>(Controller::Action::Upgrade); }));
  EXPECT_EQ(an.stats().estimates, 1u);
  {
    std::lock_guard<std::mutex> lk(w->mu);
    EXPECT_EQ(w->ctl.mode(), Mode::Mixed);
  }
  w->resume();
  EXPECT_EQ(w->generated.load(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  EXPECT_EQ(an.stats().estimates, 1u);
  EXPECT_EQ(an.stats().watched, 1);
  an.unwatch(w);
  EXPECT_EQ(an.stats().watched, 0);
  EXPECT_GT(an.stats().ticks, 5u);
}

TEST(AsyncAnalyzer, TapWritesDoNotWaitForTheAnalysis) {
  // The step thread's only cost is feeding the tap; time it with many watches being analyzed.
  DifficultyTap tap(hp(), {}, false);
  DifficultyMLP mlp(tap.dim(), 64, 7);
  AsyncAnalyzer an(mlp, 1);
  std::vector<std::shared_ptr<AsyncAnalyzer::Watch>> ws;
  for (int i = 0; i < 32; ++i) {
    Controller c;
    c.start({Mode::Slow, 50, 1, ""});
    ws.push_back(an.watch(tap, std::move(c)));
  }
  std::vector<float> k(4, 1.0f), v(4, 1.0f);
  for (int p = 0; p < 2000; ++p) {
    for (int l = 0; l < 2; ++l) tap.on_kv(l, p, 1, k.data(), v.data());
    for (auto& w : ws) w->generated.fetch_add(1);
  }
  EXPECT_EQ(tap.n_tokens(), 2000);
  EXPECT_TRUE(wait_for([&] { return an.stats().estimates > 0; }));
  for (auto& w : ws) an.unwatch(w);
}
