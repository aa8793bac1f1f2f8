// A fixed pool of worker threads for data-parallel loops. Workers spin briefly after a job (decode
// issues hundreds of small jobs per token) and then sleep on a condition variable, so an idle pool
// uses no CPU.
#pragma once
#include <functional>
#include <memory>

namespace kvscope::kernels {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);  // n_threads >= 1; the calling thread is worker 0
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;
  // Runs fn(thread_index, n_threads) on every worker (including the caller) and waits for all.
  void run(const std::function<void(int ith, int nth)>& fn);
  // Splits [0, n) into contiguous chunks, one per worker: fn(begin, end).
  void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvscope::kernels
