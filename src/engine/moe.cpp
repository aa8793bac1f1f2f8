#include "engine/moe.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "kernels/kernels.h"
#include "kernels/matmul_vecs.h"

namespace kvscope {

void moe_route(const HParams& hp, float* probs, int n, int* sel, float* weight) {
  const int E = hp.n_expert, k = hp.n_expert_used;
  std::vector<int> idx(E);
  for (int t = 0; t < n; ++t) {
    float* p = probs + static_cast<size_t>(t) * E;
    kernels::softmax_inplace(p, E);
    std::iota(idx.begin(), idx.end(), 0);
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int a, int b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
    int* st = sel + static_cast<size_t>(t) * k;
    float* wt = weight + static_cast<size_t>(t) * k;
    float sum = 0;
    for (int i = 0; i < k; ++i) {
      st[i] = idx[i];
      wt[i] = p[idx[i]];
      sum += wt[i];
    }
    if (hp.expert_norm) {
      // Clamped at fp16's smallest normal, as llama.cpp does, so a row of zeros cannot divide by 0.
      sum = std::max(sum, 6.103515625e-5f);
      for (int i = 0; i < k; ++i) wt[i] /= sum;
    }
    if (hp.expert_weights_scale != 0.0f && hp.expert_weights_scale != 1.0f)
      for (int i = 0; i < k; ++i) wt[i] *= hp.expert_weights_scale;
  }
}

void moe_ffn(const HParams& hp, const LayerWeights& L, const float* xn, int n, float* y, MoeScratch& s,
             kernels::ThreadPool& pool) {
  const int d = hp.n_embd, E = hp.n_expert, k = hp.n_expert_used, ff = hp.n_ff_exp;
  const size_t m = static_cast<size_t>(n);
  if (s.probs.size() < m * E) s.probs.resize(m * E);
  if (s.sel.size() < m * k) s.sel.resize(m * k), s.weight.resize(m * k);
  kernels::matmul(L.router, xn, n, s.probs.data(), pool);
  moe_route(hp, s.probs.data(), n, s.sel.data(), s.weight.data());

  s.by_expert.resize(E);
  for (auto& v : s.by_expert) v.clear();
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < k; ++i) s.by_expert[s.sel[static_cast<size_t>(t) * k + i]].push_back({t, s.weight[static_cast<size_t>(t) * k + i]});
  std::memset(y, 0, sizeof(float) * m * d);
  // Experts with a single token (all of them when decoding one sequence): their gate/up products in
  // one pass of the pool and their down products in another, instead of a pass per matrix.
  s.single.clear();
  for (int e = 0; e < E; ++e)
    if (s.by_expert[e].size() == 1) s.single.push_back(e);
  if (!s.single.empty()) {
    const int ns = static_cast<int>(s.single.size());
    const size_t need = static_cast<size_t>(ns) * std::max(ff, d);
    if (s.gate.size() < need) s.gate.resize(need), s.up.resize(need), s.out.resize(need);
    s.ws.clear(), s.xs.clear(), s.ys.clear();
    for (int i = 0; i < ns; ++i) {
      const int e = s.single[i];
      const float* x = xn + static_cast<size_t>(s.by_expert[e][0].first) * d;
      s.ws.push_back(L.gate_exps[e]), s.xs.push_back(x), s.ys.push_back(s.gate.data() + static_cast<size_t>(i) * ff);
      s.ws.push_back(L.up_exps[e]), s.xs.push_back(x), s.ys.push_back(s.up.data() + static_cast<size_t>(i) * ff);
    }
    kernels::matmul_vecs(s.ws.data(), s.xs.data(), s.ys.data(), 2 * ns, pool);
    kernels::silu_mul(s.gate.data(), s.up.data(), s.gate.data(), static_cast<int64_t>(ns) * ff);
    s.ws.clear(), s.xs.clear(), s.ys.clear();
    for (int i = 0; i < ns; ++i) {
      s.ws.push_back(L.down_exps[s.single[i]]);
      s.xs.push_back(s.gate.data() + static_cast<size_t>(i) * ff);
      s.ys.push_back(s.out.data() + static_cast<size_t>(i) * d);
    }
    kernels::matmul_vecs(s.ws.data(), s.xs.data(), s.ys.data(), ns, pool);
    for (int i = 0; i < ns; ++i) {
      const auto& [t, w] = s.by_expert[s.single[i]][0];
      kernels::axpy(w, s.out.data() + static_cast<size_t>(i) * d, y + static_cast<size_t>(t) * d, d);
    }
  }
  for (int e = 0; e < E; ++e) {
    const auto& toks = s.by_expert[e];
    if (toks.size() < 2) continue;
    const int me = static_cast<int>(toks.size());
    const float* x;
    {  // gather this expert's tokens so its matrices are streamed once for all of them
      if (s.xg.size() < static_cast<size_t>(me) * d) s.xg.resize(static_cast<size_t>(me) * d);
      for (int i = 0; i < me; ++i)
        std::memcpy(s.xg.data() + static_cast<size_t>(i) * d, xn + static_cast<size_t>(toks[i].first) * d, sizeof(float) * d);
      x = s.xg.data();
    }
    const size_t need = static_cast<size_t>(me) * std::max(ff, d);
    if (s.gate.size() < need) s.gate.resize(need), s.up.resize(need), s.out.resize(need);
    const kernels::WeightRef gu[2] = {L.gate_exps[e], L.up_exps[e]};
    float* const outs[2] = {s.gate.data(), s.up.data()};
    kernels::matmul_multi(gu, outs, 2, x, me, pool);
    kernels::silu_mul(s.gate.data(), s.up.data(), s.gate.data(), static_cast<int64_t>(me) * ff);
    kernels::matmul(L.down_exps[e], s.gate.data(), me, s.out.data(), pool);
    for (int i = 0; i < me; ++i)
      kernels::axpy(toks[i].second, s.out.data() + static_cast<size_t>(i) * d, y + static_cast<size_t>(toks[i].first) * d, d);
  }

  if (!L.has_shexp()) return;
  const int fs = hp.n_ff_shexp;
  if (s.sh_gate.size() < m * std::max(fs, d)) s.sh_gate.resize(m * std::max(fs, d)), s.sh_up.resize(m * std::max(fs, d));
  const kernels::WeightRef gu[2] = {L.w_gate_sh, L.w_up_sh};
  float* const outs[2] = {s.sh_gate.data(), s.sh_up.data()};
  kernels::matmul_multi(gu, outs, 2, xn, n, pool);
  kernels::silu_mul(s.sh_gate.data(), s.sh_up.data(), s.sh_gate.data(), static_cast<int64_t>(n) * fs);
  kernels::matmul(L.w_down_sh, s.sh_gate.data(), n, s.sh_up.data(), pool);
  for (int t = 0; t < n; ++t) {
    const float g = kernels::dot_f32(L.shexp_gate, xn + static_cast<size_t>(t) * d, d);
    kernels::axpy(1.0f / (1.0f + std::exp(-g)), s.sh_up.data() + static_cast<size_t>(t) * d, y + static_cast<size_t>(t) * d, d);
  }
}

}  // namespace kvscope
