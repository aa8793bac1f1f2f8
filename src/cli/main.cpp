// kvscope: command-line entry point. Errors in user input end with one line on stderr and exit 1.
#include <algorithm>
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "util/env.h"
#include "util/error.h"

int main(int argc, char** argv) {
  kvscope::util::check_environment();
  CLI::App app{"kvscope: an LLM inference engine in which the KV cache is also a signal"};
  app.name("kvscope");
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for all subcommands");
  kvscope::cli::add_run_command(app);
  kvscope::cli::add_bench_command(app);
  kvscope::cli::add_logits_command(app);
  kvscope::cli::add_tokenize_command(app);
  kvscope::cli::add_gen_model_command(app);
  kvscope::cli::add_bench_serve_command(app);
  kvscope::cli::add_eval_command(app);
  kvscope::cli::add_tinygsm_command(app);
  kvscope::cli::add_serve_command(app);
  kvscope::cli::add_embed_command(app);
  kvscope::cli::add_eval_confidence_command(app);
  kvscope::cli::add_eval_embed_command(app);
  kvscope::cli::add_kv_calibrate_command(app);
  kvscope::cli::add_kv_eval_command(app);
  kvscope::cli::add_train_difficulty_command(app);
  kvscope::cli::add_analyze_difficulty_command(app);
  kvscope::cli::add_inspect_command(app);
  kvscope::cli::add_perplexity_command(app);
  kvscope::cli::add_train_confidence_command(app);
  kvscope::cli::add_kv_profile_command(app);
  kvscope::cli::add_eval_anomaly_command(app);
  try {
    // CLI11 wants the arguments in reverse order when given a vector.
    std::vector<std::string> args = kvscope::cli::rewrite_llama_flags(std::vector<std::string>(argv + 1, argv + argc));
    std::reverse(args.begin(), args.end());
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const kvscope::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: out of memory\n");
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: internal: %s\n", e.what());
    return 2;
  }
  return 0;
}
