// Per-CPU-second rate of the matmul kernels on one thread (thread CPU time, so a shared machine's
// other load does not count): a 4096 x 4096 matrix of each quantized type, M activation rows.
// Build and run against the release library:
//   g++ -O2 -std=c++20 -Isrc bench/kquant_kernel_rate.cpp build/release/libkvscope_kernels.a build/release/libkvscope_util.a -lpthread -o /tmp/kq_rate
//   /tmp/kq_rate 1     # decode (matrix-vector)
//   /tmp/kq_rate 16    # prefill-like
//   /tmp/kq_rate 1 32768          # decode on a DRAM-sized matrix (32768 x 4096)
//   KVSCOPE_REPACK=0 /tmp/kq_rate 1   # the in-place (unpacked) kernels
//   /tmp/kq_rate 64 4096 f16,bf16,f32  # chosen types (GGUF names as gen-model --type takes them)
//   /tmp/kq_rate 1 32000 q6_k,q4_k 768  # a 125M output matrix (32000 x 768)
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
#include <cstring>
#include <sstream>
#include <string>
#include <ctime>
#include "kernels/kernels.h"
using namespace kvscope::kernels;
int main(int argc, char** argv) {
  int M = argc > 1 ? atoi(argv[1]) : 1;
  const int64_t N = argc > 2 ? atoll(argv[2]) : 4096, K = argc > 4 ? atoll(argv[4]) : 4096;
  ThreadPool pool(1);
  std::mt19937 rng(1);
  std::normal_distribution<float> nd;
  std::vector<float> x(M * K), y(M * N), row(K);
  for (auto& v : x) v = nd(rng);
  std::vector<DType> types = {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q3_K, DType::Q2_K, DType::IQ4_XS};
  if (argc > 3) {
    types.clear();
    std::stringstream ss(argv[3]);
    for (std::string n; std::getline(ss, n, ',');) types.push_back(dtype_from_name(n));
  }
  for (DType t : types) {
    size_t rb = row_bytes(t, K);
    std::vector<uint8_t> w(rb * N);
    for (int64_t r = 0; r < N; ++r) { for (auto& v : row) v = nd(rng); quantize_row(t, row.data(), w.data() + r * rb, K); }
    WeightRef wr{w.data(), t, N, K};
    PackedStore st; pack_weight(wr, st);
    for (int i = 0; i < 2; ++i) matmul(wr, x.data(), M, y.data(), pool);
    double best = 1e9;
    for (int rep = 0; rep < 7; ++rep) {
      timespec a,b; clock_gettime(CLOCK_THREAD_CPUTIME_ID,&a);
      matmul(wr, x.data(), M, y.data(), pool);
      clock_gettime(CLOCK_THREAD_CPUTIME_ID,&b); best = std::min(best, (b.tv_sec-a.tv_sec)+1e-9*(b.tv_nsec-a.tv_nsec));
    }
    printf("%-6s M=%d %.2f ms  %.2f GB/s  %.1f GMAC/s packed=%d\n", dtype_name(t), M, best * 1e3, rb * N / best / 1e9, double(M) * N * K / best / 1e9, wr.packed != nullptr);
  }
}
