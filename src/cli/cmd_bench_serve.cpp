// kvscope bench-serve: drives the continuous-batching Engine in-process with N concurrent requests
// (distinct random prompts, so the prefix cache does not help) and reports aggregate generation
// throughput, time to first token and KV memory waste per concurrency level. With
// --prompt-len-max / --gen-len-max the lengths are drawn per request (a mixed-length workload);
// with --session-history it measures the time to first token of a session's second turn against
// recomputing the whole history.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/options.h"
#include "engine/engine.h"
#include "util/error.h"

namespace kvscope::cli {
namespace {

using clock_type = std::chrono::steady_clock;

struct Opts {
  ModelOpts model;
  std::string concurrency = "1,4,16,64";
  int prompt_len = 128, gen_len = 64, prompt_len_max = 0, gen_len_max = 0, budget = 512, kv_mem_mib = 0;
  int reps = 1, session_history = 0;
  uint64_t seed = 1;
  bool json = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<int32_t> random_prompt(std::mt19937_64& rng, int n, int n_vocab) {
  std::vector<int32_t> p(n);
  // Ids from 3 up: avoids BOS/EOS-like control tokens at the start of the vocabulary.
  std::uniform_int_distribution<int32_t> d(3, n_vocab - 1);
  for (auto& t : p) t = d(rng);
  return p;
}

KVCacheTypes kv_types(const Opts& o) { return o.model.kv_types(); }

EngineParams engine_params(const Opts& o, int max_seqs, size_t kv_bytes) {
  EngineParams ep;
  ep.n_threads = o.model.threads;
  ep.n_ctx = o.model.ctx;
  ep.kv_type = kv_types(o);
  ep.max_batch_tokens = o.budget;
  ep.max_seqs = std::max(max_seqs, 1);
  ep.kv_mem_bytes = kv_bytes;
  ep.swa_full = o.model.swa_full;
  return ep;
}

// One concurrency level: c requests submitted at once, all generating until their length.
nlohmann::json run_level(const Model& model, const Opts& o, int c, uint64_t seed) {
  const HParams& hp = model.hparams();
  std::mt19937_64 rng(seed);
  std::vector<int> plen(c), glen(c);
  size_t total_tokens = 0;
  for (int i = 0; i < c; ++i) {
    plen[i] = o.prompt_len_max > o.prompt_len ? std::uniform_int_distribution<int>(o.prompt_len, o.prompt_len_max)(rng) : o.prompt_len;
    glen[i] = o.gen_len_max > o.gen_len ? std::uniform_int_distribution<int>(o.gen_len, o.gen_len_max)(rng) : o.gen_len;
    total_tokens += plen[i] + glen[i] + 16;
  }
  const size_t per_tok = PagedKVCache::bytes_per_token(hp.n_kv_dim(), kv_types(o).resolve(hp.n_layer), 16);
  Engine eng(model, engine_params(o, c, o.kv_mem_mib > 0 ? size_t(o.kv_mem_mib) << 20 : per_tok * (total_tokens + 64)));
  std::mutex mu;
  std::vector<double> ttft(c, -1);
  auto t0 = clock_type::now();
  std::vector<RequestId> ids;
  for (int i = 0; i < c; ++i) {
    Request r;
    r.prompt = random_prompt(rng, plen[i], hp.n_vocab);
    r.sampling.temperature = 0;
    r.max_tokens = glen[i];
    r.ignore_eos = true;
    r.on_token = [&, i](const TokenEvent& e) {
      std::lock_guard lk(mu);
      if (!e.finished && ttft[i] < 0) ttft[i] = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
    };
    ids.push_back(eng.submit(std::move(r)));
  }
  eng.start();
  size_t generated = 0;
  for (RequestId id : ids) generated += eng.wait(id).tokens.size();
  const double wall = std::chrono::duration<double>(clock_type::now() - t0).count();
  eng.stop();
  const EngineStats st = eng.stats();
  double ttft_mean = 0;
  for (double t : ttft) ttft_mean += t / c;
  // Decode-phase rate: tokens after each request's first, over the time after the last first token.
  const double last_first = *std::max_element(ttft.begin(), ttft.end()) / 1e3;
  const double decode = wall > last_first ? (generated - static_cast<double>(c)) / (wall - last_first) : 0;
  return {{"concurrency", c},
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
}

// Time to first token of turn 2 of a session whose history is `history` tokens, with the session's
// pinned KV versus a fresh engine without prefix caching that recomputes everything.
nlohmann::json run_session(const Model& model, const Opts& o, uint64_t seed) {
  const HParams& hp = model.hparams();
  std::mt19937_64 rng(seed);
  const std::vector<int32_t> turn1 = random_prompt(rng, o.session_history, hp.n_vocab);
  const std::vector<int32_t> user2 = random_prompt(rng, 32, hp.n_vocab);
  const int gen = std::min(o.gen_len, 16);
  const size_t kv_bytes = PagedKVCache::bytes_per_token(hp.n_kv_dim(), kv_types(o).resolve(hp.n_layer), 16) *
                          size_t(2 * (o.session_history + 32 + 2 * gen + 64));
  auto ttft_of = [&](Engine& eng, std::vector<int32_t> prompt, const std::string& session, int* cached) {
    Request r;
    r.prompt = std::move(prompt);
    r.sampling.temperature = 0;
    r.max_tokens = gen;
    r.ignore_eos = true;
    r.session_id = session;
    double first = -1;
    auto t0 = clock_type::now();
    r.on_token = [&](const TokenEvent& e) {
      if (!e.finished && first < 0) first = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
    };
    Completion c = eng.wait(eng.submit(std::move(r)));
    if (cached) *cached = c.n_cached;
    return std::make_pair(first, c.tokens);
  };
  std::vector<double> reuse, recompute;
  int n_cached = 0;
  size_t turn2_len = 0;
  for (int rep = 0; rep < std::max(1, o.reps); ++rep) {
    Engine with(model, engine_params(o, 2, kv_bytes));
    auto [t1, out1] = ttft_of(with, turn1, "bench", nullptr);
    std::vector<int32_t> turn2 = turn1;
    turn2.insert(turn2.end(), out1.begin(), out1.end());
    turn2.insert(turn2.end(), user2.begin(), user2.end());
    turn2_len = turn2.size();
    reuse.push_back(ttft_of(with, turn2, "bench", &n_cached).first);
    EngineParams ep = engine_params(o, 2, kv_bytes);
    ep.prefix_caching = false;
    Engine without(model, ep);
    recompute.push_back(ttft_of(without, turn2, "", nullptr).first);
  }
  const double a = median(reuse), b = median(recompute);
  return {{"history_tokens", o.session_history}, {"turn2_prompt_tokens", turn2_len}, {"turn2_cached_tokens", n_cached},
          {"ttft_session_ms", a}, {"ttft_recompute_ms", b}, {"ratio", b > 0 ? a / b : 0}};
}

}  // namespace

void add_bench_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench-serve", "Aggregate generation tokens/s of concurrent requests (continuous batching)");
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  cmd->add_option("--concurrency", o->concurrency, "Comma-separated concurrency levels");
  cmd->add_option("--prompt-len", o->prompt_len, "Prompt tokens per request (the minimum with --prompt-len-max)")->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--gen-len", o->gen_len, "Generated tokens per request (the minimum with --gen-len-max)")->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--prompt-len-max", o->prompt_len_max, "Mixed lengths: prompt length uniform in [prompt-len, this]")->check(CLI::Range(0, 1 << 16));
  cmd->add_option("--gen-len-max", o->gen_len_max, "Mixed lengths: generation length uniform in [gen-len, this]")->check(CLI::Range(0, 1 << 16));
  cmd->add_option("--batch-tokens", o->budget, "Token budget per engine step")->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--kv-mem", o->kv_mem_mib, "KV pool size in MiB (0: enough for the largest level)")->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--reps", o->reps, "Repetitions per level; the median is reported")->check(CLI::Range(1, 100));
  cmd->add_option("--seed", o->seed, "Seed of the random prompts and lengths");
  cmd->add_option("--session-history", o->session_history,
                  "Instead: TTFT of turn 2 of a session with this many history tokens vs recomputing it")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] {
    auto model = Model::load(resolve_model(o->model.path), o->model.threads);
    const HParams& hp = model->hparams();
    const int n_ctx = o->model.ctx > 0 ? o->model.ctx : hp.n_ctx_train;
    kv_types(*o).resolve(hp.n_layer);  // validates the names before any work
    if (o->session_history > 0) {
      if (o->session_history + 32 + 2 * std::min(o->gen_len, 16) > n_ctx)
        throw LimitError("session history + turn 2 exceed the context of " + std::to_string(n_ctx));
      nlohmann::json j = run_session(*model, *o, o->seed);
      if (o->json) {
        j["model"] = model->path();
        std::printf("%s\n", j.dump().c_str());
      } else {
        std::printf("session turn 2 (%d history tokens): TTFT %.1f ms with the session, %.1f ms recomputed (%.1f%%)\n",
                    o->session_history, j["ttft_session_ms"].get<double>(), j["ttft_recompute_ms"].get<double>(),
                    100 * j["ratio"].get<double>());
      }
      return;
    }
    std::vector<int> levels;
    for (int32_t v : parse_token_list(o->concurrency)) {
      if (v < 1 || v > 4096) throw InputError("concurrency must be in [1, 4096]");
      levels.push_back(v);
    }
    const int per_seq = std::max(o->prompt_len, o->prompt_len_max) + std::max(o->gen_len, o->gen_len_max);
    if (per_seq > n_ctx) throw LimitError("prompt + generation exceed the context of " + std::to_string(n_ctx));
    // One untimed request first: the first level would otherwise also pay for faulting the mapped
    // weights in and for first-touch of the engine's buffers, understating the single stream.
    {
      Opts warm = *o;
      warm.gen_len = std::min(o->gen_len, 4);
      warm.gen_len_max = 0;
      run_level(*model, warm, 1, o->seed + 999983);
    }
    nlohmann::json results = nlohmann::json::array();
    Progress bar(isatty(2), static_cast<int>(levels.size()) * o->reps, "bench-serve runs", false);  // terminals only
    bar.step(0);
    int runs = 0;
    for (int c : levels) {
      std::vector<nlohmann::json> reps;
      for (int r = 0; r < o->reps; ++r) {
        reps.push_back(run_level(*model, *o, c, o->seed + 1000 * r));
        bar.step(++runs);
      }
      bar.clear();
      // The median repetition by aggregate throughput, reported whole so its fields agree.
      std::sort(reps.begin(), reps.end(), [](const auto& a, const auto& b) { return a["gen_tok_s"].template get<double>() < b["gen_tok_s"].template get<double>(); });
      nlohmann::json j = reps[reps.size() / 2];
      results.push_back(j);
      if (!o->json)
        std::printf("concurrency %3d: %8.1f gen tok/s (decode phase %.1f), ttft %.0f ms (max %.0f), %llu steps, %llu preemptions, KV waste %.1f%%\n",
                    c, j["gen_tok_s"].get<double>(), j["decode_tok_s"].get<double>(), j["ttft_ms_mean"].get<double>(),
                    j["ttft_ms_max"].get<double>(), (unsigned long long)j["steps"].get<uint64_t>(),
                    (unsigned long long)j["preemptions"].get<uint64_t>(), 100 * j["kv_waste"].get<double>());
    }
    if (o->json) {
      nlohmann::json out = {{"model", model->path()}, {"prompt_len", o->prompt_len}, {"gen_len", o->gen_len},
                            {"prompt_len_max", o->prompt_len_max}, {"gen_len_max", o->gen_len_max},
                            {"kv_type", kv_types(*o).describe()}, {"isa", kernels::isa_name(kernels::active_isa())}, {"results", results}};
      std::printf("%s\n", out.dump().c_str());
    }
  });
}

}  // namespace kvscope::cli
