// Kernel micro-benchmarks: matmul GFLOP/s and weight GB/s for the model's shapes.
//   build-kernels/kvscope_kernel_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// Names: matmul/<type>/N=<rows>/K=<cols>/M=<activation rows>/threads=<n>. KVSCOPE_ISA selects
// the ISA as in the engine.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"

using namespace kvscope::kernels;

namespace {

struct Case {
  DType t;
  int64_t N, K, M;
  int threads;
};

ThreadPool& pool_for(int n) {
  static std::unique_ptr<ThreadPool> pools[9];
  if (!pools[n]) pools[n] = std::make_unique<ThreadPool>(n);
  return *pools[n];
}

void bm_matmul(benchmark::State& st, Case c) {
  const size_t rb = row_bytes(c.t, c.K);
  std::vector<uint8_t> w(rb * static_cast<size_t>(c.N));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> row(static_cast<size_t>(c.K));
  for (int64_t r = 0; r < c.N; ++r) {
    for (auto& v : row) v = u(rng);
    quantize_row(c.t, row.data(), w.data() + static_cast<size_t>(r) * rb, c.K);
  }
  std::vector<float> x(static_cast<size_t>(c.M * c.K)), y(static_cast<size_t>(c.M * c.N));
  for (auto& v : x) v = u(rng);
  WeightRef wr{w.data(), c.t, c.N, c.K};
  ThreadPool& pool = pool_for(c.threads);
  for (auto _ : st) {
    matmul(wr, x.data(), c.M, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double it = static_cast<double>(st.iterations());
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * c.M * c.N * c.K * it / 1e9, benchmark::Counter::kIsRate);
  st.counters["GB/s"] = benchmark::Counter(static_cast<double>(w.size()) * it / 1e9, benchmark::Counter::kIsRate);
  st.SetLabel(isa_name(active_isa()));
}

const bool registered = [] {
  const std::pair<int64_t, int64_t> shapes[] = {{768, 768}, {2048, 768}, {768, 2048}, {32000, 768}};
  for (DType t : {DType::F32, DType::F16, DType::Q8_0, DType::Q4_0})
    for (int64_t M : {1, 256})
      for (auto [N, K] : shapes)
        for (int th : {1, 2}) {
          if (M == 256 && N == 32000) continue;  // prefill computes logits for the last token only
          const std::string name = std::string("matmul/") + dtype_name(t) + "/N=" + std::to_string(N) +
                                   "/K=" + std::to_string(K) + "/M=" + std::to_string(M) +
                                   "/threads=" + std::to_string(th);
          benchmark::RegisterBenchmark(name.c_str(), bm_matmul, Case{t, N, K, M, th})->UseRealTime();
        }
  // Batched decode (a few sequences at once).
  for (int64_t M : {4, 8})
    for (DType t : {DType::F32, DType::Q8_0}) {
      const std::string name = std::string("matmul/") + dtype_name(t) + "/N=2048/K=768/M=" + std::to_string(M) + "/threads=2";
      benchmark::RegisterBenchmark(name.c_str(), bm_matmul, Case{t, 2048, 768, M, 2})->UseRealTime();
    }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
