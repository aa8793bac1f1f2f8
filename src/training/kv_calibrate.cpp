#include "training/kv_calibrate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "engine/context.h"
#include "kvcache/paged_kv_cache.h"
#include "sampling/sampler.h"
#include "util/error.h"

namespace kvscope {

TextChunks sample_text_chunks(const Model& model, int n, int len, uint64_t seed, int threads) {
  const auto& tk = model.tokenizer();
  const int bos = tk.vocab().bos >= 0 ? tk.vocab().bos : 1;
  TextChunks out;
  Context ctx(model, {len, threads, 512, {}});
  for (int i = 0; i < n; ++i) {
    SamplingParams sp;
    sp.temperature = 1.0f;
    sp.top_k = 0;
    sp.top_p = 1.0f;
    sp.min_p = 0.0f;
    sp.seed = seed + static_cast<uint64_t>(i) * 7919;
    Sampler sampler(sp);
    std::vector<int32_t> toks = {bos};
    ctx.reset();
    const std::vector<float>* logits = &ctx.eval(toks);
    while (static_cast<int>(toks.size()) < len) {
      int32_t id = sampler.sample(logits->data(), model.hparams().n_vocab, toks);
      if (tk.is_eog(id)) id = bos;  // a new story in the same chunk
      toks.push_back(id);
      if (static_cast<int>(toks.size()) < len) logits = &ctx.eval({id});
    }
    out.push_back(std::move(toks));
  }
  return out;
}

TextChunks text_chunks(const Model& model, const std::string& text, int len) {
  const auto toks = model.tokenizer().encode(text, true, false);
  TextChunks out;
  for (size_t i = 0; i < toks.size(); i += len) {
    const size_t e = std::min(toks.size(), i + len);
    if (e - i >= 8) out.emplace_back(toks.begin() + i, toks.begin() + e);
  }
  if (out.empty()) throw InputError("text too short: fewer than 8 tokens");
  return out;
}

LogProbs teacher_forced(const Model& model, const KVCacheTypes& types, const TextChunks& chunks, int threads) {
  LogProbs lp;
  lp.n_vocab = model.hparams().n_vocab;
  const size_t nv = static_cast<size_t>(lp.n_vocab);
  int len = 0;
  for (const auto& c : chunks) len = std::max<int>(len, static_cast<int>(c.size()));
  Context ctx(model, {len, threads, 512, types});
  for (const auto& c : chunks) {
    ctx.reset();
    const auto& logits = ctx.eval(c, true);
    for (size_t t = 0; t + 1 < c.size(); ++t) {
      const float* l = logits.data() + t * nv;
      const float mx = *std::max_element(l, l + nv);
      double z = 0;
      for (size_t i = 0; i < nv; ++i) z += std::exp(double(l[i]) - mx);
      const float lz = static_cast<float>(mx + std::log(z));
      for (size_t i = 0; i < nv; ++i) lp.rows.push_back(l[i] - lz);
      lp.targets.push_back(c[t + 1]);
    }
  }
  return lp;
}

KVScore score(const LogProbs& ref, const LogProbs& test) {
  if (ref.targets != test.targets || ref.n_vocab != test.n_vocab) throw InputError("score: different texts");
  const size_t nv = static_cast<size_t>(ref.n_vocab), n = ref.targets.size();
  KVScore s;
  double nll = 0, kl_sum = 0;
  for (size_t t = 0; t < n; ++t) {
    const float* p = ref.rows.data() + t * nv;
    const float* q = test.rows.data() + t * nv;
    nll -= q[ref.targets[t]];
    double kl = 0;
    for (size_t i = 0; i < nv; ++i) kl += std::exp(double(p[i])) * (double(p[i]) - q[i]);
    kl = std::max(kl, 0.0);
    kl_sum += kl;
    s.max_kl = std::max(s.max_kl, kl);
  }
  s.ppl = n ? std::exp(nll / n) : 0;
  s.mean_kl = n ? kl_sum / n : 0;
  return s;
}

namespace {

// One (layer, K|V) item per index i = layer * 2 + (K ? 0 : 1); choice[i] indexes the candidates.
std::vector<KVLayerType> layer_types_of(const std::vector<int>& choice, const std::vector<KVType>& cands) {
  std::vector<KVLayerType> t(choice.size() / 2);
  for (size_t l = 0; l < t.size(); ++l) t[l] = {cands[choice[l * 2]], cands[choice[l * 2 + 1]]};
  return t;
}

KVCacheTypes types_of(const std::vector<int>& choice, const std::vector<KVType>& cands) {
  KVCacheTypes t(KVType::F16, KVType::F16);
  const auto lt = layer_types_of(choice, cands);
  for (int l = 0; l < static_cast<int>(lt.size()); ++l) t.layers.push_back({l, l, lt[l]});
  return t;
}

}  // namespace

KVCalibration kv_calibrate(const Model& model, const TextChunks& chunks, double bits, int threads,
                           const KVCalibrateOptions& opt) {
  const HParams& hp = model.hparams();
  const int L = hp.n_layer, D = hp.n_kv_dim();
  std::vector<KVType> candidates = opt.candidates;
  if (candidates.empty())
    candidates = {KVType::F16,  KVType::FP8_E4M3C, KVType::INT8, KVType::FP8_E4M3, KVType::INT4,
                  KVType::INT4C, KVType::INT4CH,    KVType::INT2, KVType::INT2C,    KVType::INT2CH};
  const int C = static_cast<int>(candidates.size());
  KVCalibration r;
  r.candidates = candidates;
  r.kl.assign(static_cast<size_t>(2 * L * C), 0.0);

  // Sensitivity: one (layer, K|V) item in a candidate type, everything else F16.
  const KVCacheTypes base(KVType::F16, KVType::F16);
  const LogProbs ref = teacher_forced(model, base, chunks, threads);
  int done = 0;
  if (!opt.known_kl.empty()) {
    if (opt.known_kl.size() != r.kl.size()) throw InputError("kv_calibrate: sensitivity table of another shape");
    r.kl = opt.known_kl;
  } else {
    for (int l = 0; l < L; ++l)
      for (int kv = 0; kv < 2; ++kv)
        for (int c = 0; c < C; ++c) {
          if (candidates[c] != KVType::F16) {
            KVCacheTypes t = base;
            KVLayerType lt{KVType::F16, KVType::F16};
            (kv == 0 ? lt.k : lt.v) = candidates[c];
            t.layers.push_back({l, l, lt});
            r.kl[(l * 2 + kv) * C + c] = score(ref, teacher_forced(model, t, chunks, threads)).mean_kl;
          }
          if (opt.progress) opt.progress("sensitivity", ++done, 2 * L * C);
        }
  }

  // Knapsack over the 2L items: cost = block bytes of the item in a type (in units of their gcd).
  std::vector<size_t> cost(static_cast<size_t>(2 * C));
  size_t unit = 0;
  for (int kv = 0; kv < 2; ++kv)
    for (int c = 0; c < C; ++c) {
      cost[kv * C + c] = kv_block_bytes(candidates[c], kv == 0, D, opt.block_size);
      unit = std::gcd(unit, cost[kv * C + c]);
    }
  const double elems = 2.0 * L * D * opt.block_size;
  const size_t budget = static_cast<size_t>(std::floor(bits * elems / 8.0 / unit + 1e-9));
  size_t min_cost = 0;
  for (int l = 0; l < L; ++l)
    for (int kv = 0; kv < 2; ++kv) {
      size_t m = std::numeric_limits<size_t>::max();
      for (int c = 0; c < C; ++c) m = std::min(m, cost[kv * C + c] / unit);
      min_cost += m;
    }
  if (min_cost > budget)
    throw InputError("bit budget " + std::to_string(bits) + " is below the smallest candidate mix (" +
                     std::to_string(min_cost * unit * 8.0 / elems) + " bits per element, scales included)");
  const double inf = std::numeric_limits<double>::infinity();
  const int items = 2 * L;
  // best[i][b]: least KL of items [0, i) using at most b units; choice[i][b] remembers the type.
  std::vector<std::vector<double>> best(items + 1, std::vector<double>(budget + 1, inf));
  std::vector<std::vector<int>> choice(items, std::vector<int>(budget + 1, -1));
  std::fill(best[0].begin(), best[0].end(), 0.0);
  for (int i = 0; i < items; ++i) {
    const int kv = i % 2;
    for (size_t b = 0; b <= budget; ++b)
      for (int c = 0; c < C; ++c) {
        const size_t w = cost[kv * C + c] / unit;
        if (w > b || best[i][b - w] == inf) continue;
        const double v = best[i][b - w] + r.kl[i * C + c];
        // Ties go to the larger type (listed first): the same predicted loss at no extra risk.
        if (v < best[i + 1][b] - 1e-15) best[i + 1][b] = v, choice[i][b] = c;
      }
  }
  std::vector<int> cur(items);
  for (int i = items - 1, b = static_cast<int>(budget); i >= 0; --i) {
    cur[i] = choice[i][b];
    b -= static_cast<int>(cost[(i % 2) * C + cur[i]] / unit);
  }
  auto weight = [&](int i, int c) { return cost[(i % 2) * C + c] / unit; };
  auto kl_of = [&](int i, int c) { return r.kl[i * C + c]; };

  // Local search on measured whole maps. For each item and each other type, one move: the change
  // alone when it fits and is predicted to help, else paired with the other item whose change
  // keeps the budget at the least predicted cost (a downgrade freeing bytes pairs with the most
  // useful upgrade they pay for). The best measured move is taken per pass.
  std::map<std::vector<int>, double> measured;
  auto joint = [&](const std::vector<int>& ch) {
    auto it = measured.find(ch);
    if (it != measured.end()) return it->second;
    const double kl = score(ref, teacher_forced(model, types_of(ch, candidates), chunks, threads)).mean_kl;
    measured.emplace(ch, kl);
    return kl;
  };
  r.knapsack_types = layer_types_of(cur, candidates);
  r.knapsack_kl = r.measured_kl = -1;
  if (opt.search_passes > 0) {
    double cur_kl = r.knapsack_kl = joint(cur);
    for (int pass = 0; pass < opt.search_passes; ++pass) {
      size_t used = 0;
      for (int i = 0; i < items; ++i) used += weight(i, cur[i]);
      std::vector<std::vector<int>> moves;
      for (int i = 0; i < items; ++i)
        for (int a = 0; a < C; ++a) {
          if (a == cur[i]) continue;
          const size_t w = used - weight(i, cur[i]) + weight(i, a);
          const double d = kl_of(i, a) - kl_of(i, cur[i]);
          std::vector<int> m = cur;
          m[i] = a;
          int pj = -1, pb = -1;
          double pd = inf;
          for (int j = 0; j < items; ++j)
            for (int b = 0; j != i && b < C; ++b) {
              if (b == cur[j] || w - weight(j, cur[j]) + weight(j, b) > budget) continue;
              const double dj = kl_of(j, b) - kl_of(j, cur[j]);
              if (dj < pd) pd = dj, pj = j, pb = b;
            }
          if (w <= budget && d < 0 && (pj < 0 || pd >= 0)) {
            moves.push_back(std::move(m));  // fits alone and helps; no partner helps more
          } else if (pj >= 0 && (w > budget || pd < 0)) {
            m[pj] = pb;
            moves.push_back(std::move(m));
          }
        }
      std::vector<int> best_move;
      double best_kl = cur_kl;
      int k = 0;
      for (const auto& m : moves) {
        const double kl = joint(m);
        // A relative margin keeps the search from chasing differences that are only rounding.
        if (kl < best_kl * (1 - 1e-3)) best_kl = kl, best_move = m;
        if (opt.progress) opt.progress("search", ++k, static_cast<int>(moves.size()));
      }
      if (best_move.empty()) break;
      cur = best_move, cur_kl = best_kl;
    }
    r.measured_kl = cur_kl;
  }
  r.searched_maps = static_cast<int>(measured.size());
  r.types = layer_types_of(cur, candidates);
  size_t used = 0;
  r.predicted_kl = 0;
  for (int i = 0; i < items; ++i) used += weight(i, cur[i]), r.predicted_kl += kl_of(i, cur[i]);
  r.bits = used * unit * 8.0 / elems;
  return r;
}

}  // namespace kvscope
