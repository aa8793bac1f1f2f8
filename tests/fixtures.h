// Shared test fixtures: small random-weight models written once per test process.
//
//   auto s = fixtures::tiny_spec();                 // 128-dim, 2 layers, 4/2 heads, vocab 400
//   s.seed = 23;                                    // adjust what the test cares about
//   const std::string path = fixtures::model_file(s, "sched");   // written once, then reused
//   const Model& m = fixtures::model(s, "sched");                // loaded once, then reused
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "model/model.h"
#include "model/random_model.h"
#include "test_util.h"

namespace kvscope::fixtures {

// One-thread engine settings of the batching tests: at most max_seqs sequences of n_ctx tokens.
inline EngineParams small_engine(int n_ctx, int max_seqs) {
  EngineParams ep;
  ep.n_threads = 1;
  ep.n_ctx = n_ctx;
  ep.kv_mem_bytes = 4 << 20;
  ep.max_seqs = max_seqs;
  return ep;
}

// The small llama shape most engine tests use; fields can be changed before use.
inline RandomModelSpec tiny_spec(int dim = 128, int layers = 2, int heads = 4, int kv_heads = 2, int ffn = 256,
                                 int vocab = 400, int ctx = 128, uint64_t seed = 11) {
  RandomModelSpec s;
  s.dim = dim, s.layers = layers, s.heads = heads, s.kv_heads = kv_heads, s.ffn = ffn, s.vocab = vocab, s.ctx = ctx;
  s.seed = seed;
  return s;
}

// The GGUF file of `spec` in the test temp folder, named `name`.gguf; written the first time it is
// asked for in this process (a name stands for one spec: the test that names it owns it).
inline std::string model_file(const RandomModelSpec& spec, const std::string& name) {
  const std::string path = (test::temp_dir() / (name + ".gguf")).string();
  if (!std::filesystem::exists(path)) write_random_model(spec, path);
  return path;
}

// The loaded model of model_file(spec, name), shared by the tests of this process.
inline const Model& model(const RandomModelSpec& spec, const std::string& name) {
  static std::map<std::string, std::unique_ptr<Model>> loaded;
  auto& m = loaded[name];
  if (!m) m = Model::load(model_file(spec, name));
  return *m;
}

// A random-weight qwen3 with a real Qwen vocabulary: llama.cpp's tokenizer test file
// ggml-vocab-qwen2.gguf (151936 entries, padded from 151646) with Qwen3's added tokens in the
// padding, so <think> and </think> sit at their real ids 151667 and 151668, and a Qwen3-style chat template (ChatML; enable_thinking false
// renders an empty think block). "" when the oracle's vocabulary file is missing.
inline std::string qwen3_think_model() {
  static const std::string path = [] {
    const std::string vocab = test::oracle_dir() + "/llama.cpp/models/ggml-vocab-qwen2.gguf";
    if (!std::filesystem::exists(vocab)) return std::string();
    // Untied: a tied embedding this small makes greedy decoding repeat one token ("\n" forever).
    RandomModelSpec s = tiny_spec(32, 2, 2, 1, 64, 512, 512, 5);
    s.arch = "qwen3";
    s.vocab_from = vocab;
    s.added_tokens = {"<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>", "<|box_end|>", "<|quad_start|>",
                      "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>",
                      "<|video_pad|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>",
                      "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", "<tool_response>",
                      "</tool_response>", "<think>", "</think>"};
    s.chat_template =
        "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
        "{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
        "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}"
        "{%- endif %}{%- endif %}";
    return model_file(s, "qwen3-think");
  }();
  return path;
}

// A random-weight model whose chat template carries tools in one family's way, for the tool-calling
// tests: "hermes" (ChatML with <tools> in the system turn and <tool_call> answers, as Qwen2.5 / Qwen3 /
// Hermes 3), "llama3" (Llama 3.1's ipython role and JSON calls), "mistral" ([AVAILABLE_TOOLS],
// [TOOL_CALLS]). kvscope does not run the Jinja; it recognises the family and the tool format from the
// template's markers (tokenizer/chat_template.h, toolcall/parser.h) and renders them itself. The
// generated vocabulary writes the markers as plain pieces, so a parser sees them as text.
inline std::string tool_model(const std::string& family) {
  // 4096 positions: a tools section in a byte-level vocabulary takes a thousand tokens or more.
  RandomModelSpec s = tiny_spec(64, 2, 4, 2, 128, 512, 4096, 31);
  s.arch = family == "hermes" ? "qwen2" : family == "mistral" ? "mistral" : "llama";
  if (family == "hermes") {
    s.chat_template =
        "{%- if tools %}{{- '<|im_start|>system\\n' }}{%- if messages[0].role == 'system' %}{{- messages[0].content + '\\n\\n' }}"
        "{%- endif %}{{- '# Tools\\n\\n<tools>' }}{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}"
        "{{- '\\n</tools>\\n\\nCall a function as <tool_call>\\n{\"name\": <function-name>, \"arguments\": <args-json-object>}"
        "\\n</tool_call><|im_end|>\\n' }}{%- endif %}{%- for message in messages %}{%- if message.role == 'tool' %}"
        "{{- '<|im_start|>user\\n<tool_response>\\n' + message.content + '\\n</tool_response><|im_end|>\\n' }}{%- else %}"
        "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}{%- endif %}{%- endfor %}"
        "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";
  } else if (family == "llama3") {
    s.chat_template =
        "{{- bos_token }}{%- if tools is not none %}{{- '<|start_header_id|>system<|end_header_id|>\\n\\nEnvironment: ipython"
        "<|eot_id|>' }}{%- endif %}{%- for message in messages %}{%- if message.role == 'tool' %}"
        "{{- '<|start_header_id|>ipython<|end_header_id|>\\n\\n' + message.content + '<|eot_id|>' }}{%- else %}"
        "{{- '<|start_header_id|>' + message.role + '<|end_header_id|>\\n\\n' + message.content + '<|eot_id|>' }}"
        "{%- endif %}{%- endfor %}{%- if add_generation_prompt %}"
        "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}"
        "{#- Calls: {\"name\": function name, \"parameters\": dictionary of argument name and its value} #}";
  } else if (family == "mistral") {
    s.chat_template =
        "{{- bos_token }}{%- for message in messages %}{%- if message.role == 'user' %}{%- if tools and loop.last %}"
        "{{- '[AVAILABLE_TOOLS] ' + (tools | tojson) + '[/AVAILABLE_TOOLS]' }}{%- endif %}"
        "{{- '[INST] ' + message.content + '[/INST]' }}{%- elif message.tool_calls %}"
        "{{- '[TOOL_CALLS] ' + (message.tool_calls | tojson) + eos_token }}{%- elif message.role == 'tool' %}"
        "{{- '[TOOL_RESULTS] ' + message.content + '[/TOOL_RESULTS]' }}{%- else %}{{- ' ' + message.content + eos_token }}"
        "{%- endif %}{%- endfor %}";
  } else {
    ADD_FAILURE() << "no tool model for " << family;
  }
  return model_file(s, "tools-" + family);
}

}  // namespace kvscope::fixtures
