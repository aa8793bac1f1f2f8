// kvscope bench-serve: drives the continuous-batching Engine in-process with N concurrent requests
// (distinct random prompts, so the prefix cache does not help) and reports aggregate generation
// throughput, time to first token and KV memory waste per concurrency level.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "engine/scheduler.h"
#include "util/error.h"

namespace kvscope::cli {

void add_bench_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench-serve", "Aggregate generation tokens/s of concurrent requests (continuous batching)");
  struct Opts {
    ModelOpts model;
    std::string concurrency = "1,4,16,64";
    int prompt_len = 128, gen_len = 64, budget = 512, kv_mem_mib = 0;
    std::string kv_type;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  cmd->add_option("--concurrency", o->concurrency, "Comma-separated concurrency levels");
  cmd->add_option("--prompt-len", o->prompt_len, "Prompt tokens per request")->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--gen-len", o->gen_len, "Generated tokens per request")->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--batch-tokens", o->budget, "Token budget per engine step")->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--kv-mem", o->kv_mem_mib, "KV pool size in MiB (0: enough for the largest level)")->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--kv-type", o->kv_type, "KV element type for K and V (same as --cache-type-k X --cache-type-v X)");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] {
    auto model = Model::load(resolve_model(o->model.path));
    const HParams& hp = model->hparams();
    std::vector<int> levels;
    for (int32_t v : parse_token_list(o->concurrency)) {
      if (v < 1 || v > 4096) throw InputError("concurrency must be in [1, 4096]");
      levels.push_back(v);
    }
    if (!o->kv_type.empty()) o->model.cache_type_k = o->model.cache_type_v = o->kv_type;
    const KVCacheTypes kvt = o->model.kv_types();
    const auto layer_types = kvt.resolve(hp.n_layer);
    const int per_seq = o->prompt_len + o->gen_len;
    if (per_seq > hp.n_ctx_train && o->model.ctx == 0)
      throw LimitError("prompt + generation exceed the model's context of " + std::to_string(hp.n_ctx_train));
    nlohmann::json results = nlohmann::json::array();
    using clock = std::chrono::steady_clock;
    for (int c : levels) {
      EngineParams ep;
      ep.n_threads = o->model.threads;
      ep.n_ctx = o->model.ctx;
      ep.kv_type = kvt;
      ep.max_batch_tokens = o->budget;
      ep.max_seqs = std::max(c, 1);
      const size_t per_tok = PagedKVCache::bytes_per_token(hp.n_kv_dim(), layer_types, ep.block_size);
      ep.kv_mem_bytes = o->kv_mem_mib > 0 ? size_t(o->kv_mem_mib) << 20 : per_tok * (size_t(c) * (per_seq + 16) + 64);
      Engine eng(*model, ep);
      std::mutex mu;
      std::vector<double> ttft(c, -1);
      auto t0 = clock::now();
      std::vector<RequestId> ids;
      for (int i = 0; i < c; ++i) {
        Request r;
        for (int k = 0; k < o->prompt_len; ++k) r.prompt.push_back(static_cast<int32_t>((k * 7919 + i * 104729 + 13) % hp.n_vocab));
        r.sampling.temperature = 0;
        r.max_tokens = o->gen_len;
        r.ignore_eos = true;
        r.on_token = [&, i](const TokenEvent& e) {
          std::lock_guard lk(mu);
          if (!e.finished && ttft[i] < 0) ttft[i] = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
        };
        ids.push_back(eng.submit(std::move(r)));
      }
      eng.start();
      size_t generated = 0;
      for (RequestId id : ids) generated += eng.wait(id).tokens.size();
      const double wall = std::chrono::duration<double>(clock::now() - t0).count();
      eng.stop();
      const EngineStats st = eng.stats();
      double ttft_mean = 0;
      for (double t : ttft) ttft_mean += t / c;
      // Decode-phase rate: tokens after each request's first, over the time after the last first token.
      const double last_first = *std::max_element(ttft.begin(), ttft.end()) / 1e3;
      const double decode = wall > last_first ? (generated - static_cast<double>(c)) / (wall - last_first) : 0;
      nlohmann::json j = {{"concurrency", c},
                          {"gen_tok_s", generated / wall},
                          {"decode_tok_s", decode},
                          {"wall_s", wall},
                          {"ttft_ms_mean", ttft_mean},
                          {"ttft_ms_max", *std::max_element(ttft.begin(), ttft.end())},
                          {"steps", st.steps},
                          {"preemptions", st.preemptions},
                          {"kv_waste", st.kv_waste()},
                          {"kv_blocks", st.blocks.total},
                          {"kv_bytes_per_token", st.bytes_per_token}};
      results.push_back(j);
      if (!o->json)
        std::printf("concurrency %3d: %8.1f gen tok/s (decode phase %.1f), ttft %.0f ms (max %.0f), %llu steps, %llu preemptions, KV waste %.1f%%\n",
                    c, generated / wall, decode, ttft_mean, j["ttft_ms_max"].get<double>(), (unsigned long long)st.steps,
                    (unsigned long long)st.preemptions, 100 * st.kv_waste());
    }
    if (o->json) {
      nlohmann::json out = {{"model", model->path()}, {"prompt_len", o->prompt_len}, {"gen_len", o->gen_len},
                            {"kv_type", kvt.describe()}, {"isa", kernels::isa_name(kernels::active_isa())}, {"results", results}};
      std::printf("%s\n", out.dump().c_str());
    }
  });
}

}  // namespace kvscope::cli
