// Writes random-weight GGUF models of any shape (for tests, benchmarks and the default model).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dtype.h"

namespace kvscope {

struct RandomModelSpec {
  // llama | mistral | qwen2 | qwen3 | gemma2 | gemma3 | phi3 | qwen2moe | qwen3moe | olmoe
  // (llama or mistral with experts > 0: Mixtral's layout)
  std::string arch = "llama";
  int dim = 256, layers = 4, heads = 8, kv_heads = 4, ffn = 688, vocab = 512, ctx = 512;
  int head_dim = 0;            // 0: dim / heads
  kernels::DType type = kernels::DType::F32;  // matrices; norms stay F32
  // "" | "q4_k_m" | "q5_k_m" | "q3_k_m": per-tensor types approximating llama-quantize's mixes
  // (type is then the mix's base type). See tensor_type().
  std::string mix;
  uint64_t seed = 1;
  float rope_theta = 10000.0f;
  bool tied_output = false;
  std::string rope_scaling;    // "" | "linear" | "llama3" | "longrope" (phi3: long/short factor tensors)
  float rope_scale_factor = 1.0f;
  int experts = 0, experts_used = 0;  // MoE: expert_count (0: 8 for the MoE archs), expert_used_count (0: 2)
  int expert_ffn = 0;          // one expert's feed-forward size (0: ffn)
  int shared_ffn = 0;          // qwen2moe's shared expert (0: ffn)
  int sliding_window = 0;      // gemma2/gemma3: attention.sliding_window (0: gemma2 4096, gemma3 512)
  // A real vocabulary: the tokenizer.* metadata of this GGUF file (llama.cpp's ggml-vocab-*.gguf)
  // replaces the generated one, and `vocab` becomes its size (plus added_tokens).
  std::string vocab_from;
  // Tokens added to the vocabulary. With vocab_from they fill its "[PAD<id>]" entries (else are
  // appended), "<|...|>" as control tokens and others as user-defined ones (as llama.cpp's converter
  // types Qwen3's <think>); generated vocabularies take them all as control tokens.
  std::vector<std::string> added_tokens;
  std::string chat_template;   // tokenizer.chat_template ("" keeps the vocabulary file's, if any)
  std::string name;            // general.name ("" : kvscope-random-<arch>)
  void validate() const;       // throws InputError naming the bad field
  // The type a matrix is written in: the mix's choice for this tensor, then, for a K-quant whose
  // rows (cols) are not a multiple of 256, a fallback type as llama-quantize does.
  kernels::DType tensor_type(const std::string& name, int64_t cols) const;
};

// Sets spec.type (and spec.mix) from a --type value: a tensor type name or a mix name.
void set_random_model_type(RandomModelSpec& spec, const std::string& name);

// Builds a SentencePiece-style vocabulary of `vocab` entries (controls, 256 byte tokens, characters,
// then merged pieces with descending scores) and random weights; writes GGUF v3 to path.
void write_random_model(const RandomModelSpec& spec, const std::string& path);

}  // namespace kvscope
