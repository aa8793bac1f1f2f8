// Scalar matmul rows: the reference semantics every SIMD variant is tested against.
//  F32/F16/BF16: sequential float dot of the weight row (widened) with the converted activations.
//  Q8_0/Q4_0: per 32-block exact integer dot with the Q8_0 activations, times d_w * d_x, summed in
//  float (as GGML's vec_dot_q8_0_q8_0 / vec_dot_q4_0_q8_0).
//  Q2_K..Q6_K: per 256-block exact integer dots with the Q8_K activations (kquant_ref.cpp).
#include <cstring>
#include <vector>

#include "kernels/internal.h"

namespace kvscope::kernels::detail::scalar {

namespace {
inline uint16_t ld16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
}  // namespace

void matmul_rows(const MatArgs& a, int64_t n0, int64_t n1) {
  if (is_kquant(a.wt)) return kquant_rows(a, n0, n1);
  const int64_t K = a.K, M = a.M;
  std::vector<float> wrow;
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* w = a.w + static_cast<size_t>(n) * a.wstride;
    switch (a.wt) {
      case DType::Q8_0:
      case DType::Q4_0: {
        const size_t bb = block_bytes(a.wt);
        for (int64_t m = 0; m < M; ++m) {
          const int8_t* xq = a.x.q + m * a.x.ldq;
          const float* xd = a.x.d + m * a.x.nb;
          float sum = 0.0f;
          for (int64_t b = 0; b < a.x.nb; ++b) {
            const uint8_t* blk = w + b * bb;
            const float dw = fp16_to_fp32(ld16(blk));
            const int8_t* qx = xq + b * 32;
            int32_t si = 0;
            if (a.wt == DType::Q8_0) {
              for (int j = 0; j < 32; ++j) si += static_cast<int8_t>(blk[2 + j]) * qx[j];
            } else {
              for (int j = 0; j < 16; ++j) {
                si += ((blk[2 + j] & 0xF) - 8) * qx[j];
                si += ((blk[2 + j] >> 4) - 8) * qx[j + 16];
              }
            }
            sum += static_cast<float>(si) * (dw * xd[b]);
          }
          a.y[m * a.ldy + n] = sum;
        }
        break;
      }
      default: {
        const float* wf;
        if (a.wt == DType::F32 && reinterpret_cast<uintptr_t>(w) % alignof(float) == 0) {
          wf = reinterpret_cast<const float*>(w);
        } else {
          wrow.resize(static_cast<size_t>(K));
          dequantize_row(a.wt, w, wrow.data(), K);
          wf = wrow.data();
        }
        for (int64_t m = 0; m < M; ++m) {
          const float* xf = a.x.f + m * a.x.ldf;
          float sum = 0.0f;
          for (int64_t k = 0; k < K; ++k) sum += wf[k] * xf[k];
          a.y[m * a.ldy + n] = sum;
        }
        break;
      }
    }
  }
}

}  // namespace kvscope::kernels::detail::scalar
