#include "reasoning/async_analyzer.h"

#include <algorithm>
#include <chrono>

#include "util/error.h"

namespace kvscope::reasoning {

void AsyncAnalyzer::Watch::resume() {
  std::lock_guard<std::mutex> lk(mu);
  generated.store(0);
  answer_started.store(false);
  last_checked = 0;
  action.store(static_cast<int>(Controller::Action::Continue));
}

AsyncAnalyzer::AsyncAnalyzer(const DifficultyMLP& mlp, int interval_ms) : mlp_(mlp), interval_ms_(interval_ms) {
  if (interval_ms < 1) throw InputError("analysis interval must be at least 1 ms");
  thread_ = std::thread([this] { loop(); });
}

AsyncAnalyzer::~AsyncAnalyzer() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::shared_ptr<AsyncAnalyzer::Watch> AsyncAnalyzer::watch(DifficultyTap& tap, Controller ctl) {
  auto w = std::make_shared<Watch>(std::move(ctl));
  w->tap = &tap;
  std::lock_guard<std::mutex> lk(mu_);
  watches_.push_back(w);
  return w;
}

void AsyncAnalyzer::unwatch(const std::shared_ptr<Watch>& w) {
  std::lock_guard<std::mutex> lk(mu_);
  watches_.erase(std::remove(watches_.begin(), watches_.end(), w), watches_.end());
}

void AsyncAnalyzer::count_token(Watch& w) {
  const int g = w.generated.fetch_add(1, std::memory_order_relaxed) + 1;
  if (g % w.every != 0) return;
  due_.fetch_add(1, std::memory_order_relaxed);
  woken_.store(true, std::memory_order_release);
  cv_.notify_one();
}

AsyncAnalyzer::Stats AsyncAnalyzer::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  Stats s = stats_;
  s.due = due_.load(std::memory_order_relaxed);
  s.watched = static_cast<int>(watches_.size());
  return s;
}

void AsyncAnalyzer::loop() {
  using clock = std::chrono::steady_clock;
  std::unique_lock<std::mutex> lk(mu_);
  while (!stop_) {
    // Woken by token counts (count_token); the interval tick is the fallback for a missed wake-up.
    const auto next = clock::now() + std::chrono::milliseconds(interval_ms_);
    cv_.wait_until(lk, next, [&] { return stop_ || woken_.exchange(false, std::memory_order_acq_rel); });
    if (stop_) break;
    auto snapshot = watches_;
    ++stats_.ticks;
    lk.unlock();
    uint64_t n = 0;
    double ms = 0;
    for (auto& w : snapshot) {
      if (w->action.load() != static_cast<int>(Controller::Action::Continue)) continue;  // not yet acted on
      std::lock_guard<std::mutex> wl(w->mu);
      const int every = w->ctl.config().check_every;
      const int g = w->generated.load();
      if (g / every <= w->last_checked / every) continue;
      const auto t0 = clock::now();
      const Estimate e = mlp_.estimate(w->tap->features());
      const auto act = w->ctl.observe(g, e, w->answer_started.load());
      ms += std::chrono::duration<double, std::milli>(clock::now() - t0).count();
      ++n;
      w->last_checked = g;
      if (act != Controller::Action::Continue) w->action.store(static_cast<int>(act));
    }
    lk.lock();
    stats_.estimates += n;
    stats_.estimate_ms_total += ms;
  }
}

}  // namespace kvscope::reasoning
