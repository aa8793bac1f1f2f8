// One step's work for one sequence (BatchSeq) and the observer of what the forward pass computes
// for it (KVTap). The pass itself is BatchedForward (engine/batched_forward.h).
#pragma once
#include <cstdint>

#include "kvcache/block_table.h"

namespace kvscope {

enum class LogitsMode { None, Last, All };

// Observes what the forward pass computes for one sequence (the signals module builds embeddings
// and KV-CoE scores on it). Called on the thread running BatchedForward::run, once per layer per
// step with all of that step's tokens of the sequence, in layer order. A sequence without a tap
// costs one null check per layer.
class KVTap {
 public:
  virtual ~KVTap() = default;
  // k, v: n rows of kv_dim floats for positions pos0 .. pos0 + n - 1. K is taken before RoPE when
  // pre_rope is set, else exactly what the cache stores (after RoPE, before F16 rounding).
  virtual void on_kv(int layer, int pos0, int n, const float* k, const float* v) = 0;
  // Only when hidden is set: n rows of n_embd floats, the residual stream after layer `layer`
  // (layer -1: the token embeddings entering layer 0).
  virtual void on_hidden(int layer, int pos0, int n, const float* x) { (void)layer, (void)pos0, (void)n, (void)x; }
  bool pre_rope = false;
  bool hidden = false;
};

struct BatchSeq {
  BlockTable* table = nullptr;  // must already hold writable blocks for [pos0, pos0 + n_tokens)
  const int32_t* tokens = nullptr;
  int n_tokens = 0;
  int pos0 = 0;                 // position of tokens[0]; K/V of [0, pos0) are already cached
  LogitsMode logits = LogitsMode::None;
  float* logits_out = nullptr;  // n_vocab floats (Last) or n_tokens * n_vocab (All)
  KVTap* tap = nullptr;         // optional observer of this sequence's K/V (and hidden states)
};

}  // namespace kvscope
