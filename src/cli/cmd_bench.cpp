// kvscope bench: prompt-processing and generation throughput, measured as llama-bench does
// (pp: one batch of P tokens on an empty cache; tg: N single-token steps from an empty cache).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/options.h"
#include "engine/context.h"
#include "signals/kv_tap.h"

namespace kvscope::cli {

namespace {
// Streams a buffer far larger than the caches with every thread; the best of several passes is
// the read bandwidth the decode path can hope for.
double measure_read_bandwidth_gbs(kernels::ThreadPool& pool) {
  const size_t n = size_t{256} << 20;  // 1 GiB of floats
  std::vector<float> buf(n, 1.0f);
  double best = 0;
  std::vector<double> sink(pool.size());
  for (int pass = 0; pass < 5; ++pass) {
    auto t0 = std::chrono::steady_clock::now();
    pool.run([&](int ith, int nth) {
      size_t chunk = (n + nth - 1) / nth, b = ith * chunk, e = std::min(n, b + chunk);
      if (b < e) sink[ith] += kernels::dot_f32(buf.data() + b, buf.data() + b, static_cast<int64_t>(e - b));
    });
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, n * sizeof(float) / s / 1e9);
  }
  return best;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "Measure prompt and generation tokens/s");
  struct Opts {
    ModelOpts model;
    int pp = 256, tg = 64, reps = 5;
    bool json = false, membw = false, tap = false, tap_hidden = false, tap_pre_rope = signals::kDefaultPreRope;
    std::string tap_layers = "mid";
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  cmd->add_option("-p,--n-prompt", o->pp, "Prompt tokens (0: skip)")->check(CLI::Range(0, 1 << 16));
  cmd->add_option("-n,--n-gen", o->tg, "Generated tokens (0: skip)")->check(CLI::Range(0, 1 << 16));
  cmd->add_option("-r,--repetitions", o->reps, "Repetitions (median reported)")->check(CLI::Range(1, 1000));
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_flag("--membw", o->membw, "Also measure memory read bandwidth and the decode rate's share of it");
  cmd->add_flag("--tap", o->tap, "Also time generation with the signals tap on (interleaved with off) and report its memory");
  cmd->add_option("--tap-layers", o->tap_layers, "Layers the tap reads: mid | all | a-b | a,b,c")->capture_default_str();
  cmd->add_flag("--tap-hidden", o->tap_hidden, "The tap also accumulates hidden states (hidden-state CoE)");
  cmd->add_flag("--tap-pre-rope", o->tap_pre_rope, "The tap reads K before RoPE");
  cmd->callback([o] {
    auto model = Model::load(resolve_model(o->model.path), o->model.threads);
    ContextParams cp = o->model.context_params();
    cp.n_ctx = std::max({cp.n_ctx, o->pp + 1, o->tg + 1});
    cp.n_batch = std::max(cp.n_batch, o->pp);
    Context ctx(*model, cp);
    const int nv = model->hparams().n_vocab;
    using clock = std::chrono::steady_clock;
    std::vector<int32_t> prompt(o->pp);
    for (int i = 0; i < o->pp; ++i) prompt[i] = static_cast<int32_t>((i * 7919 + 13) % nv);
    std::vector<double> pp_rates, tg_rates, tap_rates;
    signals::TapOptions to;
    to.layers = signals::parse_layers(o->tap_layers, model->hparams().n_layer);
    to.hidden = o->tap_hidden;
    to.pre_rope = o->tap_pre_rope;
    signals::FeatureTap tap(model->hparams(), to);
    size_t tap_bytes = 0, seq_kv_bytes = 0;
    // On a terminal only: scripts that read stderr get no bar.
    Progress bar(isatty(2), o->reps + 1, "bench (1 warm-up + " + std::to_string(o->reps) + ")", false);
    bar.step(0);
    // One untimed warm-up of each phase pages the weights in and settles the thread pool.
    for (int rep = -1; rep < o->reps; ++rep) {
      if (o->pp > 0) {
        ctx.reset();
        auto t0 = clock::now();
        ctx.eval(prompt);
        double s = std::chrono::duration<double>(clock::now() - t0).count();
        if (rep >= 0) pp_rates.push_back(o->pp / s);
      }
      // With --tap, each repetition times the same generation without and then with the tap.
      for (int with_tap = 0; o->tg > 0 && with_tap <= (o->tap ? 1 : 0); ++with_tap) {
        ctx.reset();
        tap.reset();
        ctx.set_tap(with_tap ? &tap : nullptr);
        int32_t tok = 1 % nv;
        auto t0 = clock::now();
        for (int i = 0; i < o->tg; ++i) {
          const auto& l = ctx.eval({tok});
          tok = argmax(l.data(), nv);
        }
        double s = std::chrono::duration<double>(clock::now() - t0).count();
        ctx.set_tap(nullptr);
        if (rep >= 0) (with_tap ? tap_rates : tg_rates).push_back(o->tg / s);
        if (with_tap) {
          tap_bytes = tap.state_bytes();
          seq_kv_bytes = ctx.kv().bytes_per_token() * static_cast<size_t>(ctx.n_past());
          if (const PagedKVCache* swa = ctx.swa_kv())  // sliding layers: only the blocks still held
            seq_kv_bytes += swa->bytes_per_token() * static_cast<size_t>(swa->pool().n_blocks() - swa->pool().n_free()) *
                            static_cast<size_t>(swa->block_size());
        }
      }
      bar.step(rep + 2);
    }
    const double pp = pp_rates.empty() ? 0 : median(pp_rates);
    const double tg = tg_rates.empty() ? 0 : median(tg_rates);
    const double tg_tap = tap_rates.empty() ? 0 : median(tap_rates);
    // The tap's own cost per decoded token, timed alone on synthetic rows: on a shared machine the
    // on/off rates differ by more noise than the tap costs, this number does not.
    double tap_us = 0;
    if (o->tap) {
      const HParams& hp = model->hparams();
      std::vector<float> k(hp.n_kv_dim()), v(hp.n_kv_dim()), x(hp.n_embd);
      for (size_t i = 0; i < k.size(); ++i) k[i] = std::sin(0.1f * i), v[i] = std::cos(0.3f * i);
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * i);
      signals::FeatureTap t(hp, to);
      const int reps = 2000;
      auto t0 = clock::now();
      for (int i = 0; i < reps; ++i) {
        k[i % k.size()] += 0.01f;  // a trajectory that moves
        if (t.hidden) t.on_hidden(-1, i, 1, x.data());
        for (int l = 0; l < hp.n_layer; ++l) {
          t.on_kv(l, i, 1, k.data(), v.data());
          if (t.hidden) t.on_hidden(l, i, 1, x.data());
        }
      }
      tap_us = std::chrono::duration<double, std::micro>(clock::now() - t0).count() / reps;
    }
    // Overhead from the per-repetition pairs, so slow drift of a shared machine cancels out.
    std::vector<double> slowdowns;
    for (size_t i = 0; i < tap_rates.size(); ++i) slowdowns.push_back(1.0 - tap_rates[i] / tg_rates[i]);
    const double tap_overhead = slowdowns.empty() ? 0 : median(slowdowns);
    const double gb_per_tok = model->weight_bytes() / 1e9;
    // Resident memory after the runs (weights touched by decode, packed copies, KV, scratch) next to
    // the file size and the KV cache, so a packed layout that duplicates weights would show.
    auto status_mb = [](const char* key) {
      std::FILE* f = std::fopen("/proc/self/status", "r");
      double kb = 0;
      if (!f) return 0.0;
      char line[256];
      const size_t n = std::strlen(key);
      while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, key, n) == 0) kb = std::atof(line + n + 1);
      std::fclose(f);
      return kb / 1024.0;
    };
    const double rss_mb = status_mb("VmRSS"), peak_rss_mb = status_mb("VmHWM");
    std::error_code fec;
    const double file_mb = static_cast<double>(std::filesystem::file_size(model->path(), fec)) / (1024.0 * 1024.0);
    const double kv_mb = static_cast<double>(ctx.kv().bytes()) / (1024.0 * 1024.0);
    const double bw = o->membw ? measure_read_bandwidth_gbs(ctx.pool()) : 0;
    if (o->json) {
      nlohmann::json j = {{"model", model->path()}, {"threads", ctx.pool().size()}, {"n_prompt", o->pp},
                          {"n_gen", o->tg}, {"pp_tok_s", pp}, {"tg_tok_s", tg}, {"weight_gb_per_token", gb_per_tok},
                          {"isa", kernels::isa_name(kernels::active_isa())}, {"rss_mb", rss_mb},
                          {"peak_rss_mb", peak_rss_mb}, {"file_mb", file_mb}, {"kv_mb", kv_mb},
                          {"packed_mb", static_cast<double>(model->packed_bytes()) / (1024.0 * 1024.0)},
                          {"kv_bytes", ctx.kv_bytes()}, {"n_ctx", ctx.n_ctx()}};
      if (o->tap) {
        j["tg_tok_s_tap"] = tg_tap;
        j["tap_slowdown"] = tap_overhead;
        j["tap_us_per_token"] = tap_us;
        j["tap_cost_fraction"] = tg > 0 ? tap_us * 1e-6 * tg : 0.0;
        j["tap_layers"] = to.layers;
        j["tap_hidden"] = o->tap_hidden;
        j["tap_bytes"] = tap_bytes;
        j["seq_kv_bytes"] = seq_kv_bytes;
        j["tap_bytes_fraction_of_kv"] = seq_kv_bytes ? double(tap_bytes) / double(seq_kv_bytes) : 0.0;
      }
      if (o->membw) {
        j["mem_read_gb_s"] = bw;
        j["tg_bandwidth_fraction"] = tg * gb_per_tok / bw;
      }
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("model %s, %d threads, %s\n", model->path().c_str(), ctx.pool().size(),
                  kernels::isa_name(kernels::active_isa()));
      std::printf("KV cache: %zu bytes for a context of %d%s\n", ctx.kv_bytes(), ctx.n_ctx(),
                  ctx.swa_kv() ? " (sliding-window layers in their own cache, released as they leave the window)" : "");
      if (o->pp) std::printf("pp%d: %.1f tok/s\n", o->pp, pp);
      if (o->tg) std::printf("tg%d: %.1f tok/s (%.1f GB/s of weights)\n", o->tg, tg, tg * gb_per_tok);
      std::printf("resident %.0f MB (peak %.0f MB); file %.0f MB, KV cache %.0f MB, packed copies %.0f MB\n", rss_mb,
                  peak_rss_mb, file_mb, kv_mb, static_cast<double>(model->packed_bytes()) / (1024.0 * 1024.0));
      if (o->tap && o->tg)
        std::printf("tg%d with tap (layers %s%s): %.1f tok/s, %.2f%% slower (median of paired runs); the tap alone "
                    "takes %.2f us/token = %.3f%% of a decode step; tap state %zu bytes = %.3f%% of the sequence's %zu "
                    "KV bytes\n",
                    o->tg, o->tap_layers.c_str(), o->tap_hidden ? " + hidden" : "", tg_tap, 100.0 * tap_overhead,
                    tap_us, tg > 0 ? 100.0 * tap_us * 1e-6 * tg : 0.0, tap_bytes,
                    seq_kv_bytes ? 100.0 * tap_bytes / seq_kv_bytes : 0.0, seq_kv_bytes);
      if (o->membw)
        std::printf("memory read bandwidth %.1f GB/s; generation at %.0f%% of the bandwidth limit\n", bw,
                    100.0 * tg * gb_per_tok / bw);
    }
  });
}

}  // namespace kvscope::cli
