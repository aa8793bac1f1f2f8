#include "model/fingerprint.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "util/hash.h"

namespace kvscope {

uint64_t model_fingerprint(const Model& model) {
  const HParams& hp = model.hparams();
  std::vector<uint8_t> b;  // host byte order, as the first session files were written
  auto put = [&](const auto& v) {
    const size_t at = b.size();
    b.resize(at + sizeof v);
    std::memcpy(b.data() + at, &v, sizeof v);
  };
  for (int v : {hp.n_vocab, hp.n_embd, hp.n_layer, hp.n_head, hp.n_head_kv, hp.head_dim, hp.n_ff, hp.rope_dim,
                static_cast<int>(hp.rope_neox), static_cast<int>(hp.arch)})
    put(v);
  put(hp.rope_theta);
  uint64_t h = util::fnv1a(b.data(), b.size());
  // Sample up to 4 KiB of each weight matrix: different weights of the same shape differ there.
  auto add = [&](const kernels::WeightRef& t) {
    const size_t n = kernels::row_bytes(t.type, t.cols) * t.rows;
    h = util::fnv1a(t.data, std::min<size_t>(n, 4096), h);
  };
  add(model.tok_embd);
  add(model.output);
  for (const auto& L : model.layers)
    for (const auto* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) add(*t);
  return h;
}

}  // namespace kvscope
