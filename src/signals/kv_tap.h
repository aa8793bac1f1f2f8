// The feature tap: per-token KV features accumulated where K and V are written into the cache.
//
// For the selected layers S and each observed token t:
//   e_t = (1/|S|) * sum_{l in S} [K(l,t) | V(l,t)]           (2 * n_kv_heads * head_dim floats)
// From e_t the tap keeps, without storing every e_t (unless trace is asked for):
//   - the embedding sums: u_t = L2norm( (1/H_kv) * sum_h [K_h | V_h] of e_t ) (2 * head_dim), their
//     sum and the last one (mean / last-token pooling, the spec's aggregate_kv);
//   - the trajectory over the positions in [begin, end): e_first, e_prev, and the running sums of
//     dr_t = ||e_{t+1} - e_t||_2 and dtheta_t = angle(e_t, e_{t+1}) over consecutive pairs (the
//     per-pair values too in trace or steps mode);
//   - optionally (hidden = true) per layer l = 0..n_layer the running sum of the residual stream
//     (h_0 the token embeddings, h_l after layer l-1): the original hidden-state CoE.
// Positions at or below the last one already seen are ignored, so recomputation after a
// preemption does not count a token twice.
#pragma once
#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "engine/batch.h"
#include "engine/rope.h"
#include "kvcache/block_table.h"
#include "kvcache/paged_kv_cache.h"
#include "model/model.h"
#include "signals/coe_scores.h"

namespace kvscope::signals {

// Which K to use by default: after RoPE (what the cache stores, so features can be recomputed
// from it). Whether pre-RoPE K scores better is measured by eval-confidence --pre-rope.
inline constexpr bool kDefaultPreRope = false;

// "mid" (the middle third: layers [L/3, 2L/3), at least one), "all", "a-b" (inclusive), "a,b,c",
// or a single index. Throws InputError naming the bad spec or an index outside [0, n_layer).
std::vector<int> parse_layers(const std::string& spec, int n_layer);

struct TapOptions {
  std::vector<int> layers;   // empty: the middle third
  bool pre_rope = kDefaultPreRope;
  int begin = 0;             // positions [begin, end) are observed
  int end = INT_MAX;
  bool trace = false;        // keep every e_t (n * 2 * kv_dim floats) and every step
  bool steps = false;        // keep every (dr_t, dtheta_t) (8 bytes per token)
  bool hidden = false;       // also accumulate per-layer hidden-state means (hidden CoE)
};

class FeatureTap final : public KVTap {
 public:
  FeatureTap(const HParams& hp, TapOptions o);

  void on_kv(int layer, int pos0, int n, const float* k, const float* v) override;
  void on_hidden(int layer, int pos0, int n, const float* x) override;
  // Forget everything and observe [begin, end) next (keeps the layer selection and buffers).
  void reset(int begin = 0, int end = INT_MAX);

  const std::vector<int>& layers() const { return layers_; }
  int n_tokens() const { return n_; }                    // tokens observed
  int feature_dim() const { return 2 * kv_dim_; }       // length of e_t
  int embedding_dim() const { return 2 * head_dim_; }   // length of u_t
  // Mean of u_t over the observed tokens, L2-normalized; the last u_t. Empty when nothing observed.
  std::vector<float> pooled_mean() const;
  std::vector<float> pooled_last() const { return last_u_; }
  // Every e_t in position order (trace mode only); every (dr_t, dtheta_t) (trace or steps mode).
  const std::vector<float>& trace() const { return trace_; }
  const std::vector<TrajectoryStep>& steps() const { return steps_; }
  int n_steps() const { return n_steps_; }              // consecutive pairs observed
  // KV-CoE over the observed trajectory (see coe_scores.h).
  CoEScores scores() const;
  // Original CoE over the layer trajectory of the mean hidden states (hidden mode; n_layer + 1 points).
  CoEScores hidden_scores() const;
  std::vector<std::vector<float>> hidden_means() const;
  // Bytes of state this tap holds per sequence beyond fixed buffers (for the overhead report).
  size_t state_bytes() const;

 private:
  void finalize(int pos, const float* e);
  int n_layer_, kv_dim_, head_dim_, n_head_kv_, n_embd_;
  std::vector<int> layers_;
  std::vector<char> selected_;
  int first_layer_ = 0, last_layer_ = 0;
  int begin_ = 0, end_ = INT_MAX;
  bool trace_on_, steps_on_;
  // Step buffer: the sum over selected layers of each row of the current step.
  std::vector<float> pending_;
  int pending_pos0_ = 0, pending_n_ = 0;
  int next_pos_ = INT_MIN;         // positions below are already observed (KV)
  int hidden_next_ = INT_MIN, hidden_step_next_ = INT_MIN;
  int n_ = 0;
  std::vector<float> first_e_, prev_e_;
  std::vector<double> u_sum_;
  std::vector<float> last_u_;
  double sum_dr_ = 0, sum_dtheta_ = 0;
  int n_steps_ = 0;
  std::vector<TrajectoryStep> steps_;
  std::vector<float> trace_;
  std::vector<double> hidden_sum_;  // (n_layer + 1) * n_embd
  int hidden_n_ = 0;
};

// Replays K/V stored in the paged cache for positions [pos0, pos0 + n) of one table into a tap,
// layer by layer as the forward pass would (F16 layers are widened). The cache holds K after
// RoPE, so a pre-RoPE tap is refused with InputError.
void replay_from_cache(const PagedKVCache& kv, const BlockTable& table, int pos0, int n, KVTap& tap);

// Forwards every call to several taps (e.g. one per layer selection in an ablation). Taps may
// disagree on pre_rope when the model is given: the fanout then takes K before RoPE and rotates a
// copy for the post-RoPE taps with the engine's own Rope, so both see what they would alone.
class TapFanout final : public KVTap {
 public:
  explicit TapFanout(std::vector<KVTap*> taps, const Model* model = nullptr);
  ~TapFanout() override;
  void on_kv(int layer, int pos0, int n, const float* k, const float* v) override;
  void on_hidden(int layer, int pos0, int n, const float* x) override;

 private:
  std::vector<KVTap*> taps_;
  bool mixed_ = false;
  std::unique_ptr<Rope> rope_, rope_swa_;  // global layers; sliding-window layers (gemma)
  const HParams* hp_ = nullptr;
  int n_head_kv_ = 0, kv_dim_ = 0;
  std::vector<float> rotated_;
};

}  // namespace kvscope::signals
