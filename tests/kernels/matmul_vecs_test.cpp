// matmul_vecs (one pool pass for many matrix-vector products with their own inputs) against the
// scalar reference, on every ISA and the weight types that share an activation conversion.
#include "kernels/matmul_vecs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/kernels.h"

namespace matmul_vecs_test {

using namespace kvscope::kernels;

TEST(MatmulVecs, EqualsOneMatmulEachOnEveryIsa) {
  std::mt19937 rng(11);
  std::normal_distribution<float> nd;
  ThreadPool pool(3);
  const Isa saved = active_isa();
  for (DType t : {DType::F32, DType::F16, DType::Q8_0, DType::Q4_0}) {
    for (int rows : {1, 17, 40}) {
      const int64_t K = 96, n = 5;
      std::vector<std::vector<uint8_t>> data(n);
      std::vector<WeightRef> ws(n);
      std::vector<std::vector<float>> x(n), y(n), want(n);
      std::vector<const float*> xs(n);
      std::vector<float*> ys(n);
      for (int i = 0; i < n; ++i) {
        std::vector<float> w(rows * K);
        for (auto& v : w) v = nd(rng);
        const size_t rb = row_bytes(t, K);
        data[i].resize(rb * rows);
        for (int r = 0; r < rows; ++r) quantize_row(t, w.data() + r * K, data[i].data() + r * rb, K);
        ws[i] = {data[i].data(), t, rows + 0, K};
        x[i].resize(K);
        for (auto& v : x[i]) v = nd(rng);
        y[i].assign(rows, 0.0f);
        want[i].assign(rows, 0.0f);
        ref::matmul(ws[i], x[i].data(), 1, want[i].data());
        xs[i] = x[i].data();
        ys[i] = y[i].data();
      }
      for (Isa isa : {Isa::Scalar, Isa::AVX2, Isa::AVX512}) {
        set_active_isa(isa);
        matmul_vecs(ws.data(), xs.data(), ys.data(), n, pool);
        for (int i = 0; i < n; ++i)
          for (int r = 0; r < rows; ++r)
            ASSERT_NEAR(y[i][r], want[i][r], 1e-3f * (1 + std::fabs(want[i][r])))
                << dtype_name(t) << " rows " << rows << " mat " << i << " isa " << isa_name(isa);
      }
    }
  }
  set_active_isa(saved);
}

}  // namespace matmul_vecs_test
