// Measuring what a KV element type costs in output quality, and mixed-precision calibration in the
// spirit of KVTuner: each layer's K and V are quantized alone to each candidate type and the mean KL
// divergence of the next-token distribution against an F16 cache is recorded; a knapsack over
// (layer, K|V) x type then picks the types that fit an average bit budget (scales included) at the
// least summed divergence. Errors of several quantized items do not add up exactly (an early layer's
// V error is carried through every later layer), so a local search then measures whole maps and moves
// to the one with the least joint divergence.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kvcache/kv_type_map.h"
#include "model/model.h"

namespace kvscope {

using TextChunks = std::vector<std::vector<int32_t>>;

// n chunks of `len` tokens sampled from the model (temperature 1, from BOS), reproducible by seed.
TextChunks sample_text_chunks(const Model& model, int n, int len, uint64_t seed, int threads);
// Tokenized text cut into chunks of `len` tokens (the last one kept if at least 8 tokens).
TextChunks text_chunks(const Model& model, const std::string& text, int len);

// Teacher-forced next-token log-probabilities (log-softmax rows) at every position but the last
// of each chunk, with the cache in the given types.
struct LogProbs {
  int n_vocab = 0;
  std::vector<float> rows;       // [positions x n_vocab]
  std::vector<int32_t> targets;  // the token that follows each position
};
LogProbs teacher_forced(const Model& model, const KVCacheTypes& types, const TextChunks& chunks, int threads);

struct KVScore {
  double ppl = 0;      // perplexity of the targets
  double mean_kl = 0;  // mean over positions of KL(ref || this)
  double max_kl = 0;
};
KVScore score(const LogProbs& ref, const LogProbs& test);

struct KVCalibration {
  std::vector<KVLayerType> types;
  double bits = 0;          // average stored bits per element of the choice
  double predicted_kl = 0;  // sum of the chosen items' single-item KL
  double measured_kl = 0;   // mean KL of the whole choice on the calibration text (-1: not measured)
  std::vector<KVLayerType> knapsack_types;  // the knapsack's choice, where the search started
  double knapsack_kl = 0;                   // its measured mean KL (-1: not measured)
  int searched_maps = 0;                    // whole maps measured by the search
  std::vector<KVType> candidates;
  // kl[(layer * 2 + (is_k ? 0 : 1)) * candidates.size() + c]
  std::vector<double> kl;
};

struct KVCalibrateOptions {
  // Default: f16, fp8_e4m3c, int8, fp8_e4m3, int4, int4c, int4ch, int2, int2c, int2ch.
  std::vector<KVType> candidates;
  int block_size = 16;
  // Local-search passes over whole maps after the knapsack; each pass measures at most one map per
  // (item, other type) and takes the best. 0: the knapsack's choice as is.
  int search_passes = 4;
  // The sensitivity table of an earlier call with the same model, text and candidates (its `kl`),
  // so several budgets share one measurement; empty: measured here.
  std::vector<double> known_kl;
  // phase is "sensitivity" or "search"; called after each measurement.
  std::function<void(const char* phase, int done, int total)> progress;
};
// InputError when the budget is below what the smallest candidates take.
KVCalibration kv_calibrate(const Model& model, const TextChunks& chunks, double bits, int threads,
                           const KVCalibrateOptions& options = {});

}  // namespace kvscope
