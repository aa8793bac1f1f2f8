// Each subcommand registers itself on the CLI11 app; main() wires them and maps errors to exits.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace kvscope::cli {

void add_run_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_logits_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_gen_model_command(CLI::App& app);
void add_bench_serve_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_tinygsm_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_embed_command(CLI::App& app);
void add_eval_confidence_command(CLI::App& app);
void add_eval_embed_command(CLI::App& app);
void add_kv_calibrate_command(CLI::App& app);
void add_kv_eval_command(CLI::App& app);
void add_train_difficulty_command(CLI::App& app);
void add_analyze_difficulty_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_perplexity_command(CLI::App& app);
void add_train_confidence_command(CLI::App& app);
void add_kv_profile_command(CLI::App& app);
void add_eval_anomaly_command(CLI::App& app);

// The model used when -m is not given: the project's reasoner when present, else the small model
// the build writes next to the executable. Throws InputError when neither exists.
std::string default_model_path();
std::string resolve_model(const std::string& given);

// llama.cpp's flag spellings (-ngl, -fa, -cb, -ctk, -ctv, -np, and "=value" forms) mapped to
// kvscope's, or dropped where they mean nothing here; argv[0] excluded. Applied before parsing.
std::vector<std::string> rewrite_llama_flags(const std::vector<std::string>& args);

// Parses "1,2,3" into token ids; throws InputError naming the bad item.
std::vector<int32_t> parse_token_list(const std::string& s);

}  // namespace kvscope::cli
