// Scalar reference for K-quant weights times Q8_K activations: one exact integer dot per 256-block
// (kquant::dot_ref), blocks summed in order. Every SIMD variant is tested against this.
#include "kernels/internal.h"
#include "kernels/kquant.h"

namespace kvscope::kernels::detail::scalar {

void kquant_rows(const MatArgs& a, int64_t n0, int64_t n1) {
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* w = a.w + static_cast<size_t>(n) * a.wstride;
    for (int64_t m = 0; m < a.M; ++m)
      a.y[m * a.ldy + n] = kquant::dot_ref(a.wt, w, a.x.q + m * a.x.ldq, a.x.d + m * a.x.nb, a.x.bs + m * a.x.nb * 16, a.x.nb);
  }
}

}  // namespace kvscope::kernels::detail::scalar
