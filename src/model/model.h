// A loaded GGUF model: hyper-parameters from metadata, weight views into the mapping, tokenizer.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "kernels/kernels.h"
#include "tokenizer/tokenizer.h"

namespace kvscope {

enum class Arch { Llama, Mistral, Qwen2, Qwen3 };
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
  const float* ffn_norm = nullptr;
  kernels::WeightRef w_gate, w_up, w_down;
};

// Per-pair frequency divisors of Llama 3.1's rope scaling (what converters store as rope_freqs.weight).
std::vector<float> llama3_rope_freq_factors(float theta, int rope_dim, float factor, float low_freq_factor,
                                            float high_freq_factor, int orig_ctx);

class Model {
 public:
  // Throws FormatError / InputError with a one-line message naming the problem.
  static std::unique_ptr<Model> load(const std::string& path);

  const HParams& hparams() const { return hp_; }
  const tok::Tokenizer& tokenizer() const { return *tokenizer_; }
  const gguf::File& file() const { return *file_; }
  const std::string& path() const { return file_->path(); }
  std::string chat_template() const;  // "" when the model has none

  kernels::WeightRef tok_embd;   // [n_vocab x n_embd]
  kernels::WeightRef output;     // tied to tok_embd when the file has no output.weight
  const float* output_norm = nullptr;
  const float* rope_freqs = nullptr;  // per-pair frequency divisors [rope_dim/2] (llama3 scaling), or null
  std::vector<LayerWeights> layers;
  uint64_t weight_bytes() const;  // bytes read per decoded token (all matrices)
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
