// kvscope kv-calibrate: per-layer KV types for an average bit budget (KVTuner-style), written in the
// --kv-layer-types syntax. kvscope kv-eval: per KV setting, bytes per token, perplexity and KL
// divergence against an F16 cache on held-out text, decode tokens/s and the longest context that
// fits a KV memory budget.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/options.h"
#include "training/kv_calibrate.h"
#include "kvcache/paged_kv_cache.h"
#include "util/error.h"

namespace kvscope::cli {

void add_kv_calibrate_command(CLI::App& app);
void add_kv_eval_command(CLI::App& app);

namespace {

// Calibration text and held-out text come from different seeds (or different halves of a file).
constexpr uint64_t kCalibSeed = 101, kHeldOutSeed = 202;

// kv_calibrate's progress callback as one bar per phase (sensitivities, then the search).
struct PhaseBars {
  bool on;
  std::string prefix, phase;
  std::unique_ptr<Progress> bar;
  void operator()(const char* ph, int i, int n) {
    if (!on) return;
    if (ph != phase) {
      if (bar) bar->finish();
      phase = ph;
      bar = std::make_unique<Progress>(true, n, prefix + (phase == "search" ? "measuring whole maps" : "measuring layer sensitivities"), false);
    }
    bar->step(i);
  }
  void finish() {
    if (bar) bar->finish();
  }
};

struct TextOpts {
  std::string file;
  int chunks = 8, len = 0;
};

void add_text_options(CLI::App* cmd, TextOpts& t) {
  cmd->add_option("--text", t.file, "Text file (default: text sampled from the model itself)");
  cmd->add_option("--chunks", t.chunks, "Sampled chunks of text")->check(CLI::Range(1, 4096))->capture_default_str();
  cmd->add_option("--chunk-len", t.len, "Tokens per chunk (0: the model's context, at most 256)")->check(CLI::Range(0, 1 << 16));
}

// held_out: the second half of a file's chunks, or text of another seed.
TextChunks load_text(const Model& model, const TextOpts& t, bool held_out, int threads) {
  const int len = t.len > 0 ? t.len : std::min(256, model.hparams().n_ctx_train);
  if (t.file.empty()) return sample_text_chunks(model, t.chunks, len, held_out ? kHeldOutSeed : kCalibSeed, threads);
  std::ifstream f(t.file);
  if (!f) throw InputError("cannot read text file " + t.file);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  TextChunks all = text_chunks(model, text, len);
  if (all.size() < 2) return all;
  const size_t half = all.size() / 2;
  return held_out ? TextChunks(all.begin() + half, all.end()) : TextChunks(all.begin(), all.begin() + half);
}

std::string map_file_text(const KVCalibration& c, double bits) {
  char line[256];
  std::snprintf(line, sizeof line,
                "# kvscope kv-calibrate: budget %.3f bits, chosen %.3f bits per element (scales included); summed single-item KL %.3g",
                bits, c.bits, c.predicted_kl);
  std::string s = line;
  if (c.measured_kl >= 0) {
    // The knapsack's map goes in as a string: a many-layer map is longer than any fixed buffer.
    std::snprintf(line, sizeof line, ", measured KL %.3g (%d maps measured; the knapsack's map, %.3g: ", c.measured_kl,
                  c.searched_maps, c.knapsack_kl);
    s += line + format_kv_layer_types(c.knapsack_types) + ")";
  }
  s += "\n";
  return s + format_kv_layer_types(c.types) + "\n";
}

struct Setting {
  std::string name;
  KVCacheTypes types;
};

// "f16", "int8/int4" (K/V), "@map.txt" or a literal map "0-2:int8,3-4:int4".
Setting parse_setting(const std::string& s) {
  ModelOpts o;
  if (s.find(':') != std::string::npos || s[0] == '@') {
    o.cache_type_k = o.cache_type_v = "f16";
    o.kv_layer_types = s;
  } else {
    const size_t slash = s.find('/');
    o.cache_type_k = s.substr(0, slash);
    o.cache_type_v = slash == std::string::npos ? s : s.substr(slash + 1);
  }
  return {s, o.kv_types()};
}

double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Greedy decode after a 16-token prompt; the median of `reps` runs (the first one warms up). With
// one thread the work runs on this thread and its CPU time is used, so a busy machine (other jobs
// taking the cores) does not show up as a slower cache type.
double decode_tok_s(const Model& model, const KVCacheTypes& t, int threads, int n, int reps) {
  Context ctx(model, {n + 17, threads, 512, t});
  std::vector<int32_t> prompt(16);
  for (int i = 0; i < 16; ++i) prompt[i] = (i * 37 + 5) % model.hparams().n_vocab;
  const int nv = model.hparams().n_vocab;
  std::vector<double> rates;
  for (int r = -1; r < reps; ++r) {
    ctx.reset();
    const auto* l = &ctx.eval(prompt);
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_s();
    for (int i = 0; i < n; ++i) {
      const int tok = static_cast<int>(std::max_element(l->begin(), l->begin() + nv) - l->begin());
      l = &ctx.eval({tok});
    }
    const double s = ctx.pool().size() == 1 ? thread_cpu_s() - c0
                                            : std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r >= 0) rates.push_back(n / s);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

void add_kv_calibrate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("kv-calibrate", "Choose per-layer KV cache types for an average bit budget");
  struct Opts {
    ModelOpts model;
    TextOpts text;
    double bits = 4.0;
    int search_passes = 4;
    std::string out, candidates;
    bool quiet = false;
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  add_text_options(cmd, o->text);
  cmd->add_option("--bits", o->bits, "Average stored bits per K/V element, scales included")
      ->check(CLI::Range(1.0, 32.0))
      ->capture_default_str();
  cmd->add_option("--candidates", o->candidates, "Comma-separated candidate types (default f16,fp8_e4m3c,int8,fp8_e4m3,int4,int4c,int4ch,int2,int2c,int2ch)");
  cmd->add_option("--search-passes", o->search_passes,
                  "Passes of the joint search over whole maps after the knapsack (0: knapsack only)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_option("-o,--output", o->out, "Write the map here (default: stdout)");
  cmd->add_flag("-q,--quiet", o->quiet, "No sensitivity table on stderr");
  cmd->callback([o] {
    auto model = Model::load(resolve_model(o->model.path), o->model.threads);
    std::vector<KVType> cands;
    if (!o->candidates.empty()) {
      std::string s = o->candidates + ",";
      for (size_t i = 0, j; (j = s.find(',', i)) != std::string::npos; i = j + 1)
        if (j > i) cands.push_back(kv_type_from_name(s.substr(i, j - i)));
    }
    const TextChunks text = load_text(*model, o->text, false, o->model.threads);
    KVCalibrateOptions co;
    co.candidates = cands;
    co.search_passes = o->search_passes;
    PhaseBars bars{!o->quiet, "", "", nullptr};
    co.progress = [&](const char* phase, int i, int n) { bars(phase, i, n); };
    const KVCalibration c = kv_calibrate(*model, text, o->bits, o->model.threads, co);
    bars.finish();
    if (!o->quiet) {
      std::fprintf(stderr, "mean KL vs F16 when only this layer's K or V has the type:\nlayer     ");
      for (KVType t : c.candidates) std::fprintf(stderr, " %10s", kv_type_name(t));
      std::fprintf(stderr, "\n");
      const size_t C = c.candidates.size();
      for (int l = 0; l < model->hparams().n_layer; ++l)
        for (int kv = 0; kv < 2; ++kv) {
          std::fprintf(stderr, "%5d %s  ", l, kv == 0 ? "K" : "V");
          for (size_t i = 0; i < C; ++i) std::fprintf(stderr, " %10.3g", c.kl[(l * 2 + kv) * C + i]);
          std::fprintf(stderr, "\n");
        }
      if (c.measured_kl >= 0)
        std::fprintf(stderr, "knapsack: %s (measured KL %.3g); after %d whole maps measured: ",
                     format_kv_layer_types(c.knapsack_types).c_str(), c.knapsack_kl, c.searched_maps);
      std::fprintf(stderr, "chosen: %s (%.3f bits per element", format_kv_layer_types(c.types).c_str(), c.bits);
      if (c.measured_kl >= 0) std::fprintf(stderr, ", measured KL %.3g", c.measured_kl);
      std::fprintf(stderr, ")\n");
    }
    const std::string text_out = map_file_text(c, o->bits);
    if (o->out.empty()) {
      std::fputs(text_out.c_str(), stdout);
    } else {
      std::ofstream f(o->out);
      if (!(f << text_out)) throw InputError("cannot write " + o->out);
    }
  });
}

void add_kv_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("kv-eval", "Quality, size and speed of KV cache types against F16");
  struct Opts {
    ModelOpts model;
    TextOpts text;
    std::vector<std::string> settings;
    std::vector<double> calibrate;
    int decode = 64, reps = 3, budget_mib = 64;
    std::string dump_tokens;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  add_text_options(cmd, o->text);
  cmd->add_option("--setting", o->settings,
                  "A KV setting: a type (f16), K/V types (int8/int4), a map (0-2:int8,3:int4) or @map.txt; repeatable "
                  "(default: f16 fp8_e4m3 int8 int4)");
  cmd->add_option("--calibrate", o->calibrate, "Also calibrate mixed maps at these bit budgets (e.g. 4 3) and evaluate them");
  cmd->add_option("--decode", o->decode, "Decode tokens timed per setting (0: skip)")->check(CLI::Range(0, 1 << 16));
  cmd->add_option("--reps", o->reps, "Decode timing repetitions (median)")->check(CLI::Range(1, 100));
  cmd->add_option("--dump-tokens", o->dump_tokens, "Write the held-out token chunks as JSON (for tools/oracle/llama_kv_ppl.mjs)");
  cmd->add_option("--budget-mib", o->budget_mib, "KV memory budget for the longest-context column")->check(CLI::Range(1, 1 << 20));
  cmd->add_flag("--json", o->json, "Print JSON lines");
  cmd->callback([o] {
    auto model = Model::load(resolve_model(o->model.path), o->model.threads);
    const HParams& hp = model->hparams();
    std::vector<Setting> settings;
    if (o->settings.empty() && o->calibrate.empty()) o->settings = {"f16", "fp8_e4m3", "int8", "int4"};
    for (const auto& s : o->settings) settings.push_back(parse_setting(s));
    if (!o->calibrate.empty()) {
      const TextChunks calib = load_text(*model, o->text, false, o->model.threads);
      std::vector<double> sensitivity;
      for (double b : o->calibrate) {
        KVCalibrateOptions co;
        co.known_kl = sensitivity;
        char label[48];
        std::snprintf(label, sizeof label, "calibrate %.1f bits: ", b);
        PhaseBars bars{static_cast<bool>(isatty(2)), label, "", nullptr};  // terminals only, like the settings' bar
        co.progress = [&](const char* phase, int i, int n) { bars(phase, i, n); };
        const KVCalibration c = kv_calibrate(*model, calib, b, o->model.threads, co);
        bars.finish();
        sensitivity = c.kl;
        KVCacheTypes t;
        t.layers = parse_kv_layer_types(format_kv_layer_types(c.types));
        char name[64];
        std::snprintf(name, sizeof name, "mixed@%.1f", b);
        settings.push_back({name, t});
        std::fprintf(stderr, "%s: %s (%.3f bits; calibration KL %.3g, the knapsack's %s %.3g)\n", name,
                     format_kv_layer_types(c.types).c_str(), c.bits, c.measured_kl,
                     format_kv_layer_types(c.knapsack_types).c_str(), c.knapsack_kl);
      }
    }
    const TextChunks text = load_text(*model, o->text, true, o->model.threads);
    if (!o->dump_tokens.empty()) {
      std::ofstream f(o->dump_tokens);
      if (!(f << nlohmann::json{{"chunks", text}}.dump() << "\n")) throw InputError("cannot write " + o->dump_tokens);
    }
    const LogProbs ref = teacher_forced(*model, KVCacheTypes(KVType::F16, KVType::F16), text, o->model.threads);
    const KVScore ref_score = score(ref, ref);
    const size_t f16_bpt = PagedKVCache::bytes_per_token(hp.n_kv_dim(), KVCacheTypes(KVType::F16, KVType::F16).resolve(hp.n_layer));
    size_t n_pos = ref.targets.size();
    if (!o->json)
      std::printf("%-22s %10s %9s %10s %8s %10s %10s %12s\n", "setting", "B/token", "vs f16", "ppl", "dppl%", "mean KL",
                  "decode t/s", "ctx@budget");
    Progress bar(isatty(2), static_cast<int>(settings.size()), "kv-eval settings", false);  // terminals only
    bar.step(0);
    int n_done = 0;
    for (const Setting& s : settings) {
      const auto layers = s.types.resolve(hp.n_layer);
      const size_t bpt = PagedKVCache::bytes_per_token(hp.n_kv_dim(), layers);
      const KVScore sc = score(ref, teacher_forced(*model, s.types, text, o->model.threads));
      const double tps = o->decode > 0 ? decode_tok_s(*model, s.types, o->model.threads, std::min(o->decode, hp.n_ctx_train - 17), o->reps) : 0;
      const size_t ctx_fit = (static_cast<size_t>(o->budget_mib) << 20) / bpt;
      const double red = 100.0 * (1.0 - double(bpt) / double(f16_bpt));
      const double dppl = 100.0 * (sc.ppl / ref_score.ppl - 1.0);
      bar.clear();
      if (o->json) {
        nlohmann::json j = {{"setting", s.name}, {"types", format_kv_layer_types(layers)}, {"bytes_per_token", bpt},
                            {"reduction_vs_f16_pct", red}, {"ppl", sc.ppl}, {"ppl_f16", ref_score.ppl},
                            {"dppl_pct", dppl}, {"mean_kl", sc.mean_kl}, {"max_kl", sc.max_kl}, {"decode_tok_s", tps},
                            {"ctx_at_budget", ctx_fit}, {"budget_mib", o->budget_mib}, {"positions", n_pos}};
        std::printf("%s\n", j.dump().c_str());
      } else {
        std::printf("%-22s %10zu %8.1f%% %10.4f %+7.2f%% %10.2e %10.1f %12zu\n", s.name.c_str(), bpt, red, sc.ppl, dppl,
                    sc.mean_kl, tps, ctx_fit);
      }
      std::fflush(stdout);
      bar.step(++n_done);
    }
    if (!o->json)
      std::printf("(%zu held-out positions; KL and ppl deltas against an F16 cache; ctx@budget = %d MiB / bytes per token;"
                  " decode t/s from %s)\n",
                  n_pos, o->budget_mib, o->model.threads == 1 ? "thread CPU time" : "wall time");
  });
}

}  // namespace kvscope::cli
