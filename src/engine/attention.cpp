#include "engine/attention.h"

#include <cmath>
#include <cstring>

#include "kernels/kernels.h"

namespace kvscope {

void attention(const KVCache& kv, int layer, const AttentionShape& s, const float* q, int n_tokens, int pos0,
               float* out, float* scratch, kernels::ThreadPool& pool) {
  const int qdim = s.n_head * s.head_dim;
  const int group = s.n_head / s.n_head_kv;
  const float scale = s.score_scale();
  const int64_t n_work = static_cast<int64_t>(n_tokens) * s.n_head;
  const int n_ctx = kv.n_ctx();
  pool.run([&](int ith, int nth) {
    float* scores = scratch + static_cast<size_t>(ith) * n_ctx;
    // Interleave work items across threads: later tokens attend to more positions.
    for (int64_t w = ith; w < n_work; w += nth) {
      const int t = static_cast<int>(w / s.n_head);
      const int h = static_cast<int>(w % s.n_head);
      const int kvh = h / group;
      const int n_pos = pos0 + t + 1, j0 = s.first_pos(pos0 + t);
      const float* qh = q + static_cast<size_t>(t) * qdim + static_cast<size_t>(h) * s.head_dim;
      for (int j = j0; j < n_pos; ++j)
        scores[j] = kernels::dot_f32(qh, kv.k(layer, j) + kvh * s.head_dim, s.head_dim) * scale;
      if (s.softcap > 0) kernels::softcap(scores + j0, n_pos - j0, s.softcap);
      kernels::softmax_inplace(scores + j0, n_pos - j0);
      float* oh = out + static_cast<size_t>(t) * qdim + static_cast<size_t>(h) * s.head_dim;
      std::memset(oh, 0, sizeof(float) * s.head_dim);
      for (int j = j0; j < n_pos; ++j) kernels::axpy(scores[j], kv.v(layer, j) + kvh * s.head_dim, oh, s.head_dim);
    }
  });
}

}  // namespace kvscope
