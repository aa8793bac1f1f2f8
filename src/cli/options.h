// Option groups shared by several subcommands.
#pragma once
#include <CLI/CLI.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "engine/context.h"
#include "model/model.h"
#include "reasoning/controller.h"
#include "reasoning/format.h"
#include "sampling/sampler.h"
#include "server/server.h"
#include "tokenizer/chat_template.h"

namespace kvscope::cli {

struct ModelOpts {
  std::string path;
  int threads = 0, ctx = 0, batch = 512;
  // F16 K/V by default, as llama.cpp (half the memory of F32; --cache-type-k/-v f32 for exact F32).
  std::string cache_type_k = "f16", cache_type_v = "f16", kv_layer_types;
  std::string kv_type;  // --kv-type X: K and V alike (overrides --cache-type-k/-v)
  bool swa_full = false;
  // --kv-type, --cache-type-k/-v and --kv-layer-types; InputError on bad names or maps.
  KVCacheTypes kv_types() const;
  ContextParams context_params() const { return {ctx, threads, batch, kv_types(), swa_full}; }
};
// The engine flags every model-running command shares (run, serve, bench-serve, the eval commands):
// one definition, so a flag means the same everywhere.
void add_model_options(CLI::App* cmd, ModelOpts& o);

struct SamplingOpts {
  float temp = 0.8f, top_p = 0.95f, min_p = 0.05f, repeat_penalty = 1.0f, presence = 0.0f, frequency = 0.0f;
  int top_k = 40, repeat_last_n = 64;
  uint64_t seed = 0xC0FFEE;
  std::vector<std::string> logit_bias;  // "ID+BIAS" / "ID-BIAS" / "ID-inf", as llama.cpp's -l
  SamplingParams params() const;
};
void add_sampling_options(CLI::App* cmd, SamplingOpts& o);

// The fast/slow controller's knobs and the difficulty estimator file. The defaults are
// reasoning::ControllerConfig's own, defined there once.
struct ReasoningOpts {
  std::string difficulty;  // "" : the model's own "<model>.difficulty.bin" when it exists
  reasoning::ControllerConfig cfg;
  bool early_answer = false, no_early_answer = false, no_upgrade = false;
  reasoning::ControllerConfig controller() const;
  // Reasoning formats (reasoning/format.h).
  std::string format = "auto";          // --reasoning-format: auto (detect) | none | think | qwen3 | ...
  reasoning::EffortBudgets budgets;     // --think-budget-low / --think-budget-medium
  // The model's format: detected, or the one --reasoning-format names.
  reasoning::FormatKind format_of(const Model& m) const;
};
void add_reasoning_options(CLI::App* cmd, ReasoningOpts& o);
// --reasoning-format alone (the signal tools' prompt rendering), and the format it names on a model.
CLI::Option* add_reasoning_format_option(CLI::App* cmd, std::string& format);
reasoning::FormatKind format_named(const Model& m, const std::string& name);
// The difficulty file to use: the given one, else the model's sibling "<stem>.difficulty.bin" when it
// exists, else "" (none).
std::string difficulty_path_for(const std::string& model_path, const std::string& given);

// The options of the server's pipeline run in-process (run, eval): the model flags, the reasoning
// flags, and a KV pool for one sequence of the whole context; no signals (set so.signals to want them).
server::ServerOptions local_server_options(const std::string& model_path, const ModelOpts& mo, const ReasoningOpts& ro);

// Plain greedy decoding (no top-k/top-p/min-p filtering), as benchmark evaluations use.
SamplingParams greedy_sampling();
// Opens a per-item details file for writing ("" leaves it closed); InputError when it cannot.
void open_details(std::ofstream& f, const std::string& path);

// Renders messages with the model's chat template and tokenizes them (special tokens parsed).
// plan: its think block (or gpt-oss level) goes into the prompt, as the server renders it.
std::vector<int32_t> encode_chat(const Model& model, const std::vector<tok::ChatMessage>& msgs,
                                 const reasoning::ReasoningPlan* plan = nullptr);

}  // namespace kvscope::cli
