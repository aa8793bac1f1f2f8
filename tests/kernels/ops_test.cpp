// Element-wise ops: every ISA against the scalar reference on odd lengths.
// The SIMD exp is a Cephes polynomial (<= ~2 ulp); sums are reordered. Tolerances: 2e-6 relative
// for element-wise results, (n+2) u sum|a b| for dot products.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/isa_fixture.h"
#include "kernels/kernels.h"

namespace ops_test {

using namespace kvscope::kernels;

namespace {
const int64_t kLens[] = {1, 2, 7, 8, 15, 16, 17, 33, 100, 1000, 4097};

std::vector<float> rnd(int64_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = nd(rng);
  return v;
}
void near_rel(float a, float b, float rel, const char* what, int64_t n, int64_t i, Isa isa) {
  ASSERT_LE(std::fabs(a - b), rel * std::fabs(b) + 1e-30f) << what << " n=" << n << " i=" << i << " isa=" << isa_name(isa);
}
}  // namespace

TEST(Ops, Rmsnorm) {
  IsaGuard g;
  std::mt19937 rng(1);
  for (int64_t n : kLens) {
    auto x = rnd(n, rng, 3.0f), w = rnd(n, rng);
    std::vector<float> ref(n), out(n);
    for (bool use_w : {true, false}) {
      ref::rmsnorm(x.data(), use_w ? w.data() : nullptr, ref.data(), n, 1e-5f);
      for (Isa isa : isas()) {
        set_active_isa(isa);
        rmsnorm(x.data(), use_w ? w.data() : nullptr, out.data(), n, 1e-5f);
        for (int64_t i = 0; i < n; ++i) near_rel(out[i], ref[i], 2e-6f, "rmsnorm", n, i, isa);
      }
    }
    // In place.
    std::vector<float> y = x;
    rmsnorm(y.data(), w.data(), y.data(), n, 1e-5f);
    ref::rmsnorm(x.data(), w.data(), ref.data(), n, 1e-5f);
    for (int64_t i = 0; i < n; ++i) near_rel(y[i], ref[i], 2e-6f, "rmsnorm-inplace", n, i, active_isa());
  }
  float one = 2.0f, out = 0.0f;
  ref::rmsnorm(&one, nullptr, &out, 1, 0.0f);
  EXPECT_FLOAT_EQ(out, 1.0f);
}

TEST(Ops, Softmax) {
  IsaGuard g;
  std::mt19937 rng(2);
  for (int64_t n : kLens) {
    auto x = rnd(n, rng, 10.0f);
    if (n > 3) {
      x[1] = -std::numeric_limits<float>::infinity();  // masked
      x[2] = 80.0f;                                     // large: must not overflow
    }
    std::vector<float> ref = x;
    ref::softmax_inplace(ref.data(), n);
    for (Isa isa : isas()) {
      set_active_isa(isa);
      std::vector<float> y = x;
      softmax_inplace(y.data(), n);
      double sum = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_LE(std::fabs(y[i] - ref[i]), 4e-6f * ref[i] + 1e-37f) << "n=" << n << " i=" << i << " " << isa_name(isa);
        sum += y[i];
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);
      if (n > 3) {
        EXPECT_EQ(y[1], 0.0f);
      }
    }
  }
}

TEST(Ops, SiluMul) {
  IsaGuard g;
  std::mt19937 rng(3);
  for (int64_t n : kLens) {
    auto a = rnd(n, rng, 4.0f), b = rnd(n, rng);
    if (n > 2) {
      a[0] = -100.0f;
      a[1] = 100.0f;
    }
    std::vector<float> ref(n), y(n);
    ref::silu_mul(a.data(), b.data(), ref.data(), n);
    for (Isa isa : isas()) {
      set_active_isa(isa);
      silu_mul(a.data(), b.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_LE(std::fabs(y[i] - ref[i]), 4e-6f * std::fabs(ref[i]) + 1e-30f) << n << " " << i << " " << isa_name(isa);
    }
  }
}

TEST(Ops, GeluMulMatchesTanhGeluWithFp16Rounding) {
  IsaGuard g;
  std::mt19937 rng(13);
  // Known values of GELU's tanh form (to fp16 precision), and the +-10 cut-offs.
  const float xs[] = {1.0f, -1.0f, 0.5f, 3.0f, -10.0f, -12.0f, 10.0f, 25.0f};
  const float want[] = {0.841192f, -0.158808f, 0.345714f, 2.996363f, 0.0f, 0.0f, 10.0f, 25.0f};
  std::vector<float> ones(8, 1.0f), out(8);
  ref::gelu_mul(xs, ones.data(), out.data(), 8);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(out[i], want[i], 1e-3f * std::fabs(want[i]) + 1e-6f) << xs[i];
  for (int64_t n : kLens) {
    auto a = rnd(n, rng, 6.0f), b = rnd(n, rng);
    if (n > 3) {
      a[0] = -30.0f;
      a[1] = 30.0f;
      a[2] = 1e-5f;
    }
    std::vector<float> ref(n), y(n);
    ref::gelu_mul(a.data(), b.data(), ref.data(), n);
    for (Isa isa : isas()) {
      set_active_isa(isa);
      gelu_mul(a.data(), b.data(), y.data(), n);
      // Both round GELU's result to fp16; a last-bit tanh difference may move it by one fp16 step.
      for (int64_t i = 0; i < n; ++i)
        ASSERT_LE(std::fabs(y[i] - ref[i]), 1e-3f * std::fabs(ref[i]) + 1e-7f) << n << " " << i << " " << isa_name(isa);
    }
  }
}

TEST(Ops, SoftcapBoundsAndMatchesTanh) {
  IsaGuard g;
  std::mt19937 rng(14);
  for (int64_t n : kLens) {
    auto a = rnd(n, rng, 80.0f);
    if (n > 3) {
      a[0] = 1e6f;
      a[1] = -1e6f;
      a[2] = 1e-3f;
    }
    std::vector<float> ref = a;
    ref::softcap(ref.data(), n, 30.0f);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_LE(std::fabs(ref[i]), 30.0f);
      ASSERT_NEAR(ref[i], 30.0 * std::tanh(a[i] / 30.0), 1e-5 * 30.0);
    }
    for (Isa isa : isas()) {
      set_active_isa(isa);
      std::vector<float> y = a;
      softcap(y.data(), n, 30.0f);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_LE(std::fabs(y[i] - ref[i]), 3e-6f * std::fabs(ref[i]) + 1e-9f) << n << " " << i << " " << isa_name(isa);
    }
  }
}

TEST(Ops, AddAxpyDot) {
  IsaGuard g;
  std::mt19937 rng(4);
  for (int64_t n : kLens) {
    auto a = rnd(n, rng), b = rnd(n, rng);
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += std::fabs(a[i] * b[i]);
    const float dref = ref::dot_f32(a.data(), b.data(), n);
    std::vector<float> addref = b, axref = b;
    ref::add_inplace(addref.data(), a.data(), n);
    ref::axpy(0.37f, a.data(), axref.data(), n);
    for (Isa isa : isas()) {
      set_active_isa(isa);
      EXPECT_LE(std::fabs(dot_f32(a.data(), b.data(), n) - dref), (n + 2) * 1.2e-7 * s + 1e-30) << n;
      std::vector<float> y = b;
      add_inplace(y.data(), a.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], addref[i]);
      y = b;
      axpy(0.37f, a.data(), y.data(), n);
      // FMA vs mul+add: one rounding apart.
      for (int64_t i = 0; i < n; ++i) ASSERT_LE(std::fabs(y[i] - axref[i]), 2.5e-7f * (std::fabs(axref[i]) + std::fabs(0.37f * a[i])));
    }
  }
}

}  // namespace ops_test
