// kvscope eval-confidence: how well each confidence score tells the model's correct tinygsm
// answers from its wrong ones (AUROC, FPR95, AUPR), all scores from the same greedy answers, plus
// the layer ablation of KV-CoE (all layers, middle third, each single layer). The run and the
// measures are library calls (training/confidence_eval.h); this file reads the flags and prints.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "model/fingerprint.h"
#include "signals/confidence_probe.h"
#include "signals/scored_generation.h"
#include "tinygsm/tinygsm.h"
#include "training/confidence_eval.h"
#include "training/prompt_format.h"
#include "util/error.h"

namespace kvscope::cli {

namespace {

nlohmann::json quality_json(const training::ScoreQuality& q, int orientation) {
  return {{"auroc", q.auroc}, {"auroc_best", q.auroc_best}, {"flipped", q.flipped},
          {"fpr95", q.fpr95}, {"aupr", q.aupr},             {"higher_is_confident", orientation > 0}};
}

nlohmann::json measure(const std::vector<double>& raw, const std::vector<bool>& ok, int orientation) {
  return quality_json(training::score_quality(raw, ok, orientation), orientation);
}

}  // namespace

void add_eval_confidence_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval-confidence", "Evaluate answer-confidence scores (KV-CoE and baselines) on tinygsm");
  struct Opts {
    ModelOpts model;
    std::string task = "tinygsm", split = "test", mode = "slow", layers = "mid", details, probe, format = "auto";
    int n = 2000, max_tokens = 256;
    uint64_t seed = tinygsm::kDefaultSeed;
    bool json = false, quiet = false, pre_rope = signals::kDefaultPreRope, no_hidden = false, no_ablation = false,
         no_probe = false;
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  cmd->add_option("--task", o->task, "Benchmark task (tinygsm)")->capture_default_str();
  cmd->add_option("--split", o->split, "test | heldout | validation | train")->capture_default_str();
  cmd->add_option("--mode", o->mode, "Answer style: fast | mixed | slow")->capture_default_str();
  cmd->add_option("--n", o->n, "Number of problems")->check(CLI::Range(1, 1 << 24))->capture_default_str();
  cmd->add_option("--seed", o->seed, "Generator seed of the problems")->capture_default_str();
  cmd->add_option("--max-tokens", o->max_tokens, "Generation cap per problem")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  cmd->add_option("--layers", o->layers, "Layers of the main KV-CoE: mid | all | a-b | a,b,c")->capture_default_str();
  cmd->add_flag("--pre-rope,!--post-rope", o->pre_rope, "KV features from K before RoPE");
  cmd->add_flag("--no-hidden", o->no_hidden, "Skip the hidden-state CoE");
  cmd->add_flag("--no-ablation", o->no_ablation, "Skip the per-layer ablation");
  cmd->add_option("--probe", o->probe, "Confidence-probe file (default: <model>.confidence.bin beside the model)");
  cmd->add_flag("--no-probe", o->no_probe, "Skip the learned confidence probe");
  add_reasoning_format_option(cmd, o->format);
  cmd->add_option("--details", o->details, "Write every problem's scores to this JSON-lines file");
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress bar on stderr");
  cmd->callback([o] {
    if (o->task != "tinygsm") throw InputError("unknown task '" + o->task + "' (tinygsm)");
    auto split = tinygsm::parse_split(o->split);
    if (!split) throw InputError("unknown split '" + o->split + "' (test, heldout, validation, train)");
    auto mode = tinygsm::parse_mode(o->mode);
    if (!mode) throw InputError("unknown mode '" + o->mode + "' (fast, mixed, slow)");
    const std::string path = resolve_model(o->model.path);
    auto model = Model::load(path);
    const int L = model->hparams().n_layer;
    signals::SignalOptions so;
    so.layers = o->layers;
    so.pre_rope = o->pre_rope;
    so.hidden = !o->no_hidden;
    signals::parse_layers(o->layers, L);  // bad selections fail before any work
    std::unique_ptr<signals::ProbeFile> probe;
    if (!o->no_probe) {
      const std::string pp = o->probe.empty() ? signals::sibling_probe_path(path) : o->probe;
      if (!pp.empty()) {
        probe = std::make_unique<signals::ProbeFile>(signals::load_probe(pp, model_fingerprint(*model)));
        so.probe = probe.get();
        so.probe_trace = true;
      }
    }
    if (!o->no_ablation) so.extra = training::ablation_selections(L, o->pre_rope);
    std::ofstream details;
    open_details(details, o->details);
    const training::PromptFormat fmt(*model, format_named(*model, o->format));
    const auto items = tinygsm::generate(*split, static_cast<size_t>(o->n), o->seed, 0, fmt.question_style());
    training::ConfidenceEvalOptions eo;
    eo.context = o->model.context_params();
    eo.max_tokens = o->max_tokens;
    eo.signals = so;
    Progress bar(!o->quiet, o->n, "eval-confidence " + o->split + "/" + o->mode);
    const auto t0 = std::chrono::steady_clock::now();
    int done = 0, correct = 0;
    eo.on_item = [&](const tinygsm::Item& it, bool good, const signals::ScoredResult& r) {
      correct += good;
      if (details) {
        nlohmann::json d = {{"index", it.index}, {"steps", it.steps}, {"answer", it.answer}, {"correct", good},
                            {"tokens", r.gen.tokens.size()}, {"output", r.gen.text}, {"signals", r.signals.to_json()}};
        details << d.dump() << '\n';
      }
      bar.update(++done, correct, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    };
    const training::ConfidenceEval e = training::eval_confidence(*model, fmt, items, *mode, eo);
    const auto& ok = e.ok;
    const auto& names = e.names;
    const double wall = e.wall_s;
    const long tokens = e.tokens;
    const double n = static_cast<double>(items.size());
    const size_t kv_bytes = e.kv_bytes, tap_bytes = e.tap_bytes, probe_bytes = e.probe_bytes, hidden_bytes = e.hidden_bytes,
                 hidden_full_bytes = e.hidden_full_bytes;

    nlohmann::json scores = nlohmann::json::object();
    for (const auto& k : names) scores[k] = measure(e.values.at(k), ok, signals::score_orientation(k));
    const training::ProbeCost cost = probe ? training::measure_probe_cost(*model, *probe) : training::ProbeCost{};
    const double probe_us = cost.us_per_token, prior_us = cost.prior_us_per_request;
    const size_t prior_peak = cost.prior_peak_bytes;
    const double step_us = tokens > 0 ? wall * 1e6 / static_cast<double>(tokens) : 0.0;
    nlohmann::json early_j = nlohmann::json::object();
    for (auto& [k, v] : e.early) early_j[k] = measure(v, ok, 1);
    nlohmann::json abl = nlohmann::json::object();
    for (auto& [name, v] : e.ablation_c) {
      abl[name] = {{"kv_coe_c", measure(v, ok, 1)},
                   {"kv_coe_r", measure(e.ablation_r.at(name), ok, 1)},
                   {"kv_coe_c_norm", measure(e.ablation_cn.at(name), ok, 1)}};
    }
    nlohmann::json out = {{"task", o->task}, {"split", o->split}, {"mode", o->mode}, {"n", o->n}, {"seed", o->seed},
                          {"format", reasoning::format_name(fmt.kind())},
                          {"model", path}, {"layers", signals::parse_layers(o->layers, L)}, {"pre_rope", o->pre_rope},
                          {"correct", e.correct}, {"accuracy", e.correct / n}, {"mean_tokens", tokens / n}, {"wall_s", wall},
                          {"scores", scores}, {"ablation", abl}, {"kv_probe_early", early_j},
                          {"probe_cost", {{"probe_us_per_token", probe_us}, {"run_us_per_generated_token", step_us},
                                          {"share", step_us > 0 ? probe_us / step_us : 0.0},
                                          {"prior_us_per_request", prior_us},
                                          {"prior_prompt_tokens", cost.prior_prompt_tokens},
                                          {"prior_share_of_request", wall > 0 ? prior_us * 1e-6 / (wall / n) : 0.0}}},
                          {"memory_per_sequence", {{"kv_bytes", kv_bytes / n}, {"kv_tap_bytes", tap_bytes / n},
                                                   {"kv_tap_fraction", kv_bytes ? double(tap_bytes) / kv_bytes : 0.0},
                                                   {"probe_bytes", probe_bytes / n},
                                                   {"probe_fraction", kv_bytes ? double(probe_bytes) / kv_bytes : 0.0},
                                                   {"probe_prior_prefill_bytes", prior_peak},
                                                   {"hidden_tap_bytes", hidden_bytes / n},
                                                   {"hidden_full_bytes", hidden_full_bytes / n},
                                                   {"hidden_full_fraction", kv_bytes ? double(hidden_full_bytes) / kv_bytes : 0.0}}}};
    if (abl.contains("all") && abl.contains("mid")) {
      const double a = abl["all"]["kv_coe_c"]["auroc_best"].get<double>(), m = abl["mid"]["kv_coe_c"]["auroc_best"].get<double>();
      out["mid_over_all_kv_coe_c"] = a > 0 ? m / a : 0.0;
    }
    if (o->json) {
      std::printf("%s\n", out.dump().c_str());
      return;
    }
    std::printf("tinygsm %s/%s, n=%d, accuracy %.1f%% (%s)\n", o->split.c_str(), o->mode.c_str(), o->n, 100.0 * e.correct / n,
                path.c_str());
    std::printf("%-15s %7s %7s %7s %7s  %s\n", "score", "AUROC", "best", "FPR95", "AUPR", "orientation");
    auto num = [](const nlohmann::json& v) { return v.is_number() ? v.get<double>() * 100 : NAN; };
    for (const auto& k : names) {
      const auto& m = scores[k];
      std::printf("%-15s %7.2f %7.2f %7.2f %7.2f  %s%s\n", k.c_str(), num(m["auroc"]), num(m["auroc_best"]), num(m["fpr95"]),
                  num(m["aupr"]), signals::score_orientation(k) > 0 ? "high=confident" : "low=confident",
                  m["flipped"].get<bool>() ? " (flipped)" : "");
    }
    if (!early_j.empty()) {
      std::printf("\nkv_probe early warning (AUROC of P(correct) after a share of the tokens)\n");
      for (auto& [k, m] : early_j.items()) std::printf("  after %-4s %7.2f\n", k.c_str(), num(m["auroc"]));
      std::printf("  probe state %.0f bytes per sequence, %.2f%% of its KV\n", probe_bytes / n,
                  kv_bytes ? 100.0 * probe_bytes / kv_bytes : 0.0);
      std::printf("  probe cost %.2f us per scored token, %.2f%% of this run's %.0f us per generated token\n", probe_us,
                  step_us > 0 ? 100.0 * probe_us / step_us : 0.0, step_us);
      if (prior_us > 0)
        std::printf("  prompt prior %.1f us once per request (%d-token prompt), %.3f%% of this run's time per request; "
                    "%zu bytes during the prefill only\n",
                    prior_us, cost.prior_prompt_tokens, wall > 0 ? 100.0 * prior_us * 1e-6 / (wall / n) : 0.0, prior_peak);
    }
    if (!abl.empty()) {
      std::printf("\nlayer ablation (AUROC, higher=confident / best orientation)\n%-10s %15s %15s %15s\n", "layers",
                  "kv_coe_c", "kv_coe_r", "kv_coe_c_norm");
      for (auto& [name, m] : abl.items())
        std::printf("%-10s %7.2f/%7.2f %7.2f/%7.2f %7.2f/%7.2f\n", name.c_str(), num(m["kv_coe_c"]["auroc"]),
                    num(m["kv_coe_c"]["auroc_best"]), num(m["kv_coe_r"]["auroc"]), num(m["kv_coe_r"]["auroc_best"]),
                    num(m["kv_coe_c_norm"]["auroc"]), num(m["kv_coe_c_norm"]["auroc_best"]));
    }
  });
}

}  // namespace kvscope::cli
