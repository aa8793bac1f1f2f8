// Persistent worker pool. Protocol:
//  * run() publishes the job (a pointer to the caller's std::function), resets `done`, then bumps
//    the atomic generation counter `gen` (seq_cst). Workers wait for `gen` to change.
//  * A waiting worker first spins on `gen` with _mm_pause for kSpinUs (decode issues hundreds of
//    tiny jobs per token; spinning avoids a futex wake per job; it yields every 128 pauses so an
//    oversubscribed machine still makes progress), then sleeps on a condition
//    variable. Before sleeping it increments `sleepers` and re-checks `gen` under the mutex; run()
//    bumps `gen` and then reads `sleepers` (both seq_cst), so either the worker sees the new
//    generation or run() sees the sleeper and notifies under the mutex: no lost wake-ups.
//  * Each worker increments `done` (release) after its share; the caller runs share 0 and then
//    waits (spin, then yield) until done == n-1 (acquire), so all writes of the job are visible.
//  * Exceptions thrown by fn (on any thread) are captured; the first one is rethrown by run()
//    after every worker has finished its share. The pool stays usable.
//  * Nested run() from inside a job, or run() on a 1-thread pool, executes every share inline on
//    the calling thread. Concurrent run() calls from different threads are serialized.
//  * The destructor sets `stop`, bumps `gen` under the mutex, notifies, and joins.
#include "kernels/threadpool.h"

#include <immintrin.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kvscope::kernels {

namespace {
constexpr int64_t kSpinUs = 150;          // worker spin before sleeping
constexpr int kSpinBeforeYield = 2000;    // caller pauses before it starts yielding
thread_local int t_in_job = 0;            // >0 while this thread executes a pool job
}  // namespace

struct ThreadPool::Impl {
  int n = 1;
  std::vector<std::thread> threads;
  alignas(64) std::atomic<uint64_t> gen{0};
  alignas(64) std::atomic<int> done{0};
  alignas(64) std::atomic<int> sleepers{0};
  std::atomic<bool> stop{false};
  const std::function<void(int, int)>* job = nullptr;
  std::mutex m;
  std::condition_variable cv;
  std::mutex run_mutex;
  std::mutex err_mutex;
  std::exception_ptr err;

  void record(std::exception_ptr e) {
    std::lock_guard<std::mutex> lk(err_mutex);
    if (!err) err = std::move(e);
  }

  void worker(int ith) {
    uint64_t seen = 0;
    for (;;) {
      uint64_t g = gen.load(std::memory_order_acquire);
      if (g == seen) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int it = 0;; ++it) {
          _mm_pause();
          g = gen.load(std::memory_order_acquire);
          if (g != seen) break;
          if ((it & 127) == 127) {
            if (std::chrono::steady_clock::now() - t0 > std::chrono::microseconds(kSpinUs)) break;
            // With more threads than free cores a spinner may be holding the core the caller (or
            // another worker) needs; sched_yield returns at once when nobody else is runnable.
            std::this_thread::yield();
          }
        }
        if (g == seen) {
          std::unique_lock<std::mutex> lk(m);
          sleepers.fetch_add(1, std::memory_order_seq_cst);
          cv.wait(lk, [&] { return gen.load(std::memory_order_seq_cst) != seen; });
          sleepers.fetch_sub(1, std::memory_order_relaxed);
          g = gen.load(std::memory_order_acquire);
        }
      }
      seen = g;
      if (stop.load(std::memory_order_acquire)) return;
      ++t_in_job;
      try {
        (*job)(ith, n);
      } catch (...) {
        record(std::current_exception());
      }
      --t_in_job;
      done.fetch_add(1, std::memory_order_release);
    }
  }
};

ThreadPool::ThreadPool(int n_threads) : impl_(std::make_unique<Impl>()) {
  impl_->n = n_threads < 1 ? 1 : n_threads;
  impl_->threads.reserve(static_cast<size_t>(impl_->n - 1));
  for (int i = 1; i < impl_->n; ++i) impl_->threads.emplace_back([this, i] { impl_->worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(impl_->m);
    impl_->stop.store(true, std::memory_order_release);
    impl_->gen.fetch_add(1, std::memory_order_seq_cst);
  }
  impl_->cv.notify_all();
  for (auto& t : impl_->threads) t.join();
}

int ThreadPool::size() const { return impl_->n; }

void ThreadPool::run(const std::function<void(int ith, int nth)>& fn) {
  Impl& p = *impl_;
  if (p.n == 1 || t_in_job > 0) {
    for (int i = 0; i < p.n; ++i) fn(i, p.n);
    return;
  }
  std::lock_guard<std::mutex> run_lock(p.run_mutex);
  p.job = &fn;
  p.err = nullptr;
  p.done.store(0, std::memory_order_relaxed);
  p.gen.fetch_add(1, std::memory_order_seq_cst);
  if (p.sleepers.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lk(p.m); }
    p.cv.notify_all();
  }
  ++t_in_job;
  try {
    fn(0, p.n);
  } catch (...) {
    p.record(std::current_exception());
  }
  --t_in_job;
  const int want = p.n - 1;
  for (int it = 0; p.done.load(std::memory_order_acquire) != want; ++it) {
    if (it < kSpinBeforeYield)
      _mm_pause();
    else
      std::this_thread::yield();
  }
  p.job = nullptr;
  if (p.err) {
    std::exception_ptr e = p.err;
    p.err = nullptr;
    std::rethrow_exception(e);
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn) {
  if (n <= 0) return;
  const int nth = size();
  if (nth == 1 || n == 1) {
    fn(0, n);
    return;
  }
  run([&](int ith, int nt) {
    const int64_t b = n * ith / nt, e = n * (ith + 1) / nt;
    if (b < e) fn(b, e);
  });
}

}  // namespace kvscope::kernels
