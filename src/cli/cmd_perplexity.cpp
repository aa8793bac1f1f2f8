// kvscope perplexity: llama-perplexity's measurement (engine/perplexity.h) over a text file.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/options.h"
#include "engine/perplexity.h"
#include "util/error.h"

namespace kvscope::cli {

void add_perplexity_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("perplexity", "Perplexity of a model over a text file (llama-perplexity's convention)");
  struct Opts {
    ModelOpts model;
    std::string file;
    int chunks = -1;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  o->model.ctx = 512;
  o->model.batch = 2048;
  add_model_options(cmd, o->model);
  cmd->add_option("-f,--file", o->file, "Text file to score")->required();
  cmd->add_option("--chunks", o->chunks, "Score at most this many chunks (default: all)")->check(CLI::Range(1, 1 << 30));
  cmd->add_flag("--json", o->json, "Print the result (and every chunk) as JSON");
  cmd->callback([o] {
    std::ifstream in(o->file, std::ios::binary);
    if (!in) throw InputError("cannot read text file " + o->file);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    if (!tok::is_valid_utf8(text)) throw InputError(o->file + " is not valid UTF-8 text");
    auto model = Model::load(resolve_model(o->model.path), o->model.threads);
    ContextParams cp = o->model.context_params();
    if (cp.n_ctx <= 0) cp.n_ctx = model->hparams().n_ctx_train;
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<int32_t> tokens = model->tokenizer().encode(text, true, false);
    const double tok_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!o->json)
      std::fprintf(stderr, "perplexity: %zu tokens (tokenized in %.2f s), chunks of %d, scoring the second half of each\n",
                   tokens.size(), tok_s, cp.n_ctx);
    auto r = perplexity(*model, tokens, cp, o->chunks, [&](const PerplexityChunk& c) {
      if (o->json) return;
      if (c.index == 0) std::fprintf(stderr, "perplexity: %.2f seconds per pass\n", c.seconds);
      std::printf("[%d]%.4f,", c.index + 1, c.running_ppl);
      std::fflush(stdout);
    });
    if (o->json) {
      nlohmann::json chunks = nlohmann::json::array();
      for (const auto& c : r.chunks)
        chunks.push_back({{"chunk", c.index + 1}, {"nll", c.nll}, {"scored", c.n_scored}, {"running_ppl", c.running_ppl},
                          {"seconds", c.seconds}});
      nlohmann::json j = {{"model", resolve_model(o->model.path)}, {"file", o->file}, {"n_ctx", cp.n_ctx},
                          {"n_batch", cp.n_batch}, {"n_tokens", r.n_tokens}, {"n_chunks", r.chunks.size()},
                          {"n_scored", r.n_scored}, {"nll_mean", r.nll_mean}, {"ppl", r.ppl}, {"ppl_err", r.ppl_err},
                          {"seconds_per_pass", r.seconds_per_pass}, {"chunks", chunks}};
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("\nFinal estimate: PPL = %.4f +/- %.5f (%lld tokens scored in %zu chunks, %.3f s per pass)\n", r.ppl,
                  r.ppl_err, static_cast<long long>(r.n_scored), r.chunks.size(), r.seconds_per_pass);
    }
  });
}

}  // namespace kvscope::cli
