// kvscope gen-model: write a random-weight GGUF model of any shape.
#include <cstdio>
#include <fstream>
#include <iterator>

#include "cli/commands.h"
#include "model/random_model.h"
#include "util/error.h"

namespace kvscope::cli {

void add_gen_model_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("gen-model", "Write a random-weight GGUF model of a given shape");
  struct Opts {
    RandomModelSpec spec;
    std::string type = "f32", out, template_file;
  };
  auto o = std::make_shared<Opts>();
  auto& s = o->spec;
  cmd->add_option("--arch", s.arch, "llama | mistral | qwen2 | qwen3 | gemma2 | gemma3 | phi3 | qwen2moe | qwen3moe | olmoe");
  cmd->add_option("--dim", s.dim, "Embedding size");
  cmd->add_option("--layers", s.layers, "Layers");
  cmd->add_option("--heads", s.heads, "Query heads");
  cmd->add_option("--kv-heads", s.kv_heads, "KV heads");
  cmd->add_option("--head-dim", s.head_dim, "Head dimension (0: dim/heads)");
  cmd->add_option("--ffn", s.ffn, "Feed-forward size");
  cmd->add_option("--vocab", s.vocab, "Vocabulary size");
  cmd->add_option("--ctx", s.ctx, "Training context length");
  cmd->add_option("--type", o->type,
                  "Matrix type: f32 | f16 | bf16 | q8_0 | q4_0 | q4_1 | q5_0 | q5_1 | q2_k | q3_k | q4_k | q5_k | q6_k | "
                  "iq4_nl | iq4_xs, or a llama-quantize-like mix: q4_k_m | q5_k_m | q3_k_m (K-quant and iq4_xs rows "
                  "that are not a multiple of 256 fall back to a 32-element type, as llama-quantize does)");
  cmd->add_option("--seed", s.seed, "Seed");
  cmd->add_option("--rope-theta", s.rope_theta, "RoPE base");
  cmd->add_option("--rope-scaling", s.rope_scaling, "none | linear | llama3 | longrope (phi3)");
  cmd->add_option("--rope-scale", s.rope_scale_factor, "RoPE scaling factor");
  cmd->add_option("--experts", s.experts, "MoE: expert count (0: 8 for the MoE archs; llama/mistral > 0: Mixtral)");
  cmd->add_option("--experts-used", s.experts_used, "MoE: experts per token (0: 2)");
  cmd->add_option("--expert-ffn", s.expert_ffn, "MoE: one expert's feed-forward size (0: --ffn)");
  cmd->add_option("--shared-ffn", s.shared_ffn, "qwen2moe: shared expert's feed-forward size (0: --ffn)");
  cmd->add_option("--sliding-window", s.sliding_window, "gemma2/gemma3 attention window (0: 4096 / 512)");
  cmd->add_option("--vocab-from", s.vocab_from,
                  "Copy the tokenizer of this GGUF file (e.g. llama.cpp's models/ggml-vocab-qwen2.gguf); --vocab is then its size");
  cmd->add_option("--add-token", s.added_tokens, "Append this token to the vocabulary (repeatable; e.g. <think> </think>)");
  cmd->add_option("--chat-template-file", o->template_file, "Store this file's text as tokenizer.chat_template");
  cmd->add_option("--name", s.name, "general.name (default kvscope-random-<arch>)");
  cmd->add_flag("--tied", s.tied_output, "Tie the output matrix to the token embedding");
  cmd->add_option("-o,--output", o->out, "Output path")->required();
  cmd->callback([o] {
    set_random_model_type(o->spec, o->type);
    if (!o->template_file.empty()) {
      std::ifstream f(o->template_file, std::ios::binary);
      if (!f) throw InputError("cannot read the chat template file " + o->template_file);
      o->spec.chat_template.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    if (o->spec.rope_scaling == "none") o->spec.rope_scaling.clear();
    write_random_model(o->spec, o->out);
    std::fprintf(stderr, "wrote %s\n", o->out.c_str());
  });
}

}  // namespace kvscope::cli
