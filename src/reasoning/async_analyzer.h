// The asynchronous analysis (off the decode path): one thread wakes every interval (50 ms), takes a
// snapshot of the pooled KV features of each watched generation that has produced another
// check_every tokens since its last look, runs the difficulty MLP and feeds the controller. The
// decode path only writes into the taps (a short lock per layer per step) and bumps a counter; it
// never waits for the MLP. What the controller decides is left in the watch for the request's own
// thread to act on (answer early, restart slower).
#pragma once
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "reasoning/controller.h"
#include "reasoning/difficulty_features.h"
#include "reasoning/difficulty_mlp.h"

namespace kvscope::reasoning {

class AsyncAnalyzer {
 public:
  struct Watch {
    DifficultyTap* tap = nullptr;            // owned by the request; outlives the watch
    std::atomic<int> generated{0};           // bumped by the step thread per token of the attempt
    std::atomic<int> action{static_cast<int>(Controller::Action::Continue)};  // set by the analyzer
    std::atomic<bool> answer_started{false};  // the attempt's text holds the answer cue: no early answer
    std::mutex mu;                           // guards ctl and last_checked
    Controller ctl;
    int last_checked = 0;
    explicit Watch(Controller c) : ctl(std::move(c)) {}
    // The request's thread, after acting on an action: a new attempt starts counting from zero.
    void resume();
  };

  AsyncAnalyzer(const DifficultyMLP& mlp, int interval_ms = 50);
  ~AsyncAnalyzer();
  AsyncAnalyzer(const AsyncAnalyzer&) = delete;
  AsyncAnalyzer& operator=(const AsyncAnalyzer&) = delete;

  std::shared_ptr<Watch> watch(DifficultyTap& tap, Controller ctl);
  void unwatch(const std::shared_ptr<Watch>& w);

  struct Stats {
    uint64_t ticks = 0, estimates = 0;
    double estimate_ms_total = 0;
    int watched = 0;
  };
  Stats stats() const;
  int interval_ms() const { return interval_ms_; }

 private:
  void loop();
  const DifficultyMLP& mlp_;
  const int interval_ms_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::shared_ptr<Watch>> watches_;
  Stats stats_;
  std::thread thread_;
};

}  // namespace kvscope::reasoning
