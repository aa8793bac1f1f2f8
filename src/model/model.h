// A loaded GGUF model: hyper-parameters from metadata, weight views into the mapping, tokenizer.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "kernels/kernels.h"
#include "tokenizer/tokenizer.h"

namespace kvscope {

enum class Arch { Llama, Mistral, Qwen2, Qwen3, Gemma2, Gemma3, Phi3, Qwen2Moe, Qwen3Moe, Olmoe };
const char* arch_name(Arch a);

enum class RopeScaling { None, Linear, Llama3 };

struct HParams {
  Arch arch = Arch::Llama;
  int n_vocab = 0;
  int n_ctx_train = 0;
  int n_embd = 0;
  int n_layer = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;   // attention.key_length when present, else n_embd / n_head
  int n_ff = 0;
  float norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  int rope_dim = 0;   // rope.dimension_count (defaults to head_dim)
  bool rope_neox = false;  // qwen2/qwen3 rotate halves; llama/mistral rotate adjacent pairs
  RopeScaling rope_scaling = RopeScaling::None;
  float rope_scale_factor = 1.0f;  // linear: positions divided by this; llama3: "factor"
  float rope_low_freq_factor = 1.0f, rope_high_freq_factor = 4.0f;
  int rope_orig_ctx = 8192;
  float rope_attn_factor = 1.0f;  // rope.scaling.attn_factor (phi3 long-context): scales cos and sin
  // Gemma: token embeddings times sqrt(n_embd) (0: unscaled); GeGLU instead of SwiGLU.
  float embd_scale = 0.0f;
  bool ffn_gelu = false;
  float attn_scale = 0.0f;     // query scale (0: 1/sqrt(head_dim)); gemma's 27B sizes use n_embd/n_head
  float attn_softcap = 0.0f;   // attention logits: cap * tanh(s / cap) (gemma2); 0: off
  float final_softcap = 0.0f;  // output logits likewise (gemma2, gemma3 when the file says so)
  // Sliding-window attention: a token at position p sees [p - n_swa + 1, p] on the layers marked in
  // layer_swa (gemma2: even layers; gemma3: 5 of every 6). Those layers rotate with their own base.
  int n_swa = 0;
  std::vector<uint8_t> layer_swa;
  float rope_theta_swa = 10000.0f;
  float rope_scale_swa = 1.0f;  // linear factor on the sliding layers
  // Mixture of experts (qwen2moe, qwen3moe, olmoe, llama/mistral files with expert_count, i.e.
  // Mixtral): a router picks n_expert_used of n_expert FFNs per token; their outputs are summed with
  // the router's softmax probabilities, renormalized over the chosen ones when expert_norm is set.
  int n_expert = 0, n_expert_used = 0;
  int n_ff_exp = 0;     // rows of one expert's gate/up
  int n_ff_shexp = 0;   // qwen2moe's shared expert
  bool expert_norm = false;
  float expert_weights_scale = 0.0f;  // 0 or 1: none
  bool is_moe() const { return n_expert > 0; }
  bool qk_norm_full = false;  // olmoe: q/k norms span the whole Q and K rows (others: each head)
  bool is_swa(int layer) const { return n_swa > 0 && layer < static_cast<int>(layer_swa.size()) && layer_swa[layer]; }
  int n_kv_dim() const { return n_head_kv * head_dim; }
  int n_q_dim() const { return n_head * head_dim; }
};

struct LayerWeights {
  const float* attn_norm = nullptr;
  kernels::WeightRef wq, wk, wv, wo;
  const float* bq = nullptr;  // qwen2 biases
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* q_norm = nullptr;  // qwen3 per-head RMSNorm weights [head_dim]
  const float* k_norm = nullptr;
  const float* attn_post_norm = nullptr;  // gemma: RMSNorm of the attention output before the residual add
  const float* ffn_norm = nullptr;
  kernels::WeightRef w_gate, w_up, w_down;
  const float* ffn_post_norm = nullptr;   // gemma: likewise for the FFN output
  // MoE layers: the router [n_expert x n_embd] and each expert's matrices, views into the 3-D
  // ffn_*_exps tensors (an expert's rows are contiguous, so only chosen experts are read).
  kernels::WeightRef router;
  std::vector<kernels::WeightRef> gate_exps, up_exps, down_exps;
  // qwen2moe's shared expert, run for every token and weighted by sigmoid(shexp_gate . x).
  const float* shexp_gate = nullptr;
  kernels::WeightRef w_gate_sh, w_up_sh, w_down_sh;
  bool has_shexp() const { return w_gate_sh.data != nullptr; }
};

// Per-pair frequency divisors of Llama 3.1's rope scaling (what converters store as rope_freqs.weight).
std::vector<float> llama3_rope_freq_factors(float theta, int rope_dim, float factor, float low_freq_factor,
                                            float high_freq_factor, int orig_ctx);

class Model {
 public:
  // Throws FormatError / InputError with a one-line message naming the problem. threads: workers
  // that lay matrices out for this CPU's kernels (kernels::pack_weight); 0: one per hardware thread.
  static std::unique_ptr<Model> load(const std::string& path, int threads = 0);

  const HParams& hparams() const { return hp_; }
  const tok::Tokenizer& tokenizer() const { return *tokenizer_; }
  const gguf::File& file() const { return *file_; }
  const std::string& path() const { return file_->path(); }
  std::string chat_template() const;  // "" when the model has none

  kernels::WeightRef tok_embd;   // [n_vocab x n_embd]
  kernels::WeightRef output;     // tied to tok_embd when the file has no output.weight
  const float* output_norm = nullptr;
  const float* rope_freqs = nullptr;  // per-pair frequency divisors [rope_dim/2] (llama3 scaling), or null
  // phi3 long-context rope: per-pair divisors for contexts above rope_orig_ctx (long) or within it.
  const float* rope_factors_long = nullptr;
  const float* rope_factors_short = nullptr;
  // The divisors a context of n_ctx tokens per sequence uses (as llama.cpp picks them), or null.
  const float* rope_freqs_for(int n_ctx) const;
  std::vector<LayerWeights> layers;
  uint64_t weight_bytes() const;  // bytes read per decoded token (all matrices; MoE: the experts used per token)
  uint64_t packed_bytes() const { return packed_.bytes(); }  // copies made by kernels::pack_weight

 private:
  Model() = default;
  std::unique_ptr<gguf::File> file_;
  HParams hp_;
  std::unique_ptr<tok::Tokenizer> tokenizer_;
  std::vector<std::vector<float>> owned_;
  kernels::PackedStore packed_;  // matrices re-laid out for this CPU's kernels (kernels::pack_weight)  // norm/bias vectors converted to F32 when stored otherwise
};

}  // namespace kvscope
