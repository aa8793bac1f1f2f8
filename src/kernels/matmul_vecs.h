// Many matrix-vector products with their own input vectors in one pass of the pool: the chosen
// experts' projections of a decoded token (MoE), where one matmul each would wake the pool 2k+1
// times per layer for k experts.
#pragma once
#include "kernels/kernels.h"

namespace kvscope::kernels {

// ys[i] = W_i xs[i] (one row each), i < n_mats. Matrices of one type and width share one activation
// conversion; anything else falls back to one matmul per matrix. Same results as kernels::matmul.
void matmul_vecs(const WeightRef* ws, const float* const* xs, float* const* ys, int n_mats, ThreadPool& pool);

}  // namespace kvscope::kernels
