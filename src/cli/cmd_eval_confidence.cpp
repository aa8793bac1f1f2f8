// kvscope eval-confidence: how well each confidence score tells the model's correct tinygsm
// answers from its wrong ones (AUROC, FPR95, AUPR), all scores from the same greedy answers, plus
// the layer ablation of KV-CoE (all layers, middle third, each single layer).
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
#include "signals/confidence_metrics.h"
#include "signals/scored_generation.h"
#include "tinygsm/tinygsm.h"
#include "training/prompt_format.h"
#include "util/error.h"
#include "util/rng.h"

namespace kvscope::cli {

namespace {

struct Metrics {
  double auroc = 0, auroc_best = 0, fpr95 = 0, aupr = 0;
  bool flipped = false;
  nlohmann::json json(int orientation) const {
    return {{"auroc", auroc}, {"auroc_best", auroc_best}, {"flipped", flipped},
            {"fpr95", fpr95}, {"aupr", aupr},             {"higher_is_confident", orientation > 0}};
  }
};

// Orients the raw values (higher = confident), then measures; auroc_best is the better of the
// two orientations so a sign that points the wrong way is visible as flipped.
Metrics measure(const std::vector<double>& raw, const std::vector<bool>& ok, int orientation) {
  std::vector<double> s(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) s[i] = orientation * raw[i];
  Metrics m;
  m.auroc = signals::auroc(s, ok);
  m.auroc_best = std::isnan(m.auroc) ? m.auroc : std::max(m.auroc, 1.0 - m.auroc);
  m.flipped = m.auroc < 0.5;
  m.fpr95 = signals::fpr_at_tpr(s, ok, 0.95);
  m.aupr = signals::aupr(s, ok);
  return m;
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
    if (!o->no_ablation) {
      // Both K stages on the same answers, so the better default can be read off one run.
      const bool post = false, pre = true;
      so.extra.push_back({"all", signals::parse_layers("all", L), post});
      so.extra.push_back({"mid", signals::parse_layers("mid", L), post});
      so.extra.push_back({"all_pre_rope", signals::parse_layers("all", L), pre});
      so.extra.push_back({"mid_pre_rope", signals::parse_layers("mid", L), pre});
      for (int l = 0; l < L; ++l) so.extra.push_back({"layer_" + std::to_string(l), {l}, o->pre_rope});
    }
    Context ctx(*model, o->model.context_params());
    const SamplingParams sp = greedy_sampling();
    std::ofstream details;
    open_details(details, o->details);
    // The first reasoner reads "Question: ...\nMode: m"; a chat model the question as a user turn at
    // the mode's effort, rendered by its template (training/prompt_format.h).
    const training::PromptFormat fmt(*model, format_named(*model, o->format));
    const auto plan = fmt.plan(*mode);
    const auto items = tinygsm::generate(*split, static_cast<size_t>(o->n), o->seed, 0, fmt.question_style());

    std::vector<bool> ok;
    std::vector<std::string> names;
    std::map<std::string, std::vector<double>> values;  // score name -> per item
    std::map<std::string, std::vector<double>> ablation_c, ablation_r, ablation_cn;
    std::map<std::string, std::vector<double>> early;  // probe score after a share of the tokens
    size_t probe_bytes = 0;
    long tokens = 0;
    size_t kv_bytes = 0, tap_bytes = 0, hidden_bytes = 0, hidden_full_bytes = 0;
    int correct = 0;
    Progress bar(!o->quiet, o->n, "eval-confidence " + o->split + "/" + o->mode);
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < items.size(); ++i) {
      const auto& it = items[i];
      const auto ids = fmt.encode(fmt.chat() ? fmt.render("Question: " + tinygsm::numbered_question(it), *mode)
                                             : tinygsm::format_prompt(it, *mode));
      if (static_cast<int>(ids.size()) >= ctx.n_ctx())
        throw LimitError("prompt of " + std::to_string(ids.size()) + " tokens does not fit the context");
      const int room = std::min(o->max_tokens, ctx.n_ctx() - static_cast<int>(ids.size()));
      const auto r = signals::generate_scored(ctx, ids, sp, room, so);
      const auto got = tinygsm::parse_answer(training::answer_text(plan, r.gen.text));
      const bool good = got && *got == it.answer;
      ok.push_back(good);
      correct += good;
      tokens += static_cast<long>(r.gen.tokens.size());
      const auto named = r.signals.named();
      if (names.empty())
        for (auto& [k, v] : named) names.push_back(k);
      for (auto& [k, v] : named) values[k].push_back(v);
      for (auto& [name, c] : r.signals.extra) {
        ablation_c[name].push_back(c.coe_c);
        ablation_r[name].push_back(c.coe_r);
        ablation_cn[name].push_back(c.coe_c_norm);
      }
      if (r.signals.has_probe) {
        early["25%"].push_back(r.signals.probe_at(0.25));
        early["50%"].push_back(r.signals.probe_at(0.50));
        early["75%"].push_back(r.signals.probe_at(0.75));
        probe_bytes += r.signals.probe_bytes;
      }
      kv_bytes += r.signals.kv_bytes;
      tap_bytes += r.signals.tap_bytes;
      hidden_bytes += r.signals.hidden_bytes;
      hidden_full_bytes += r.signals.hidden_full_bytes;
      if (details) {
        nlohmann::json d = {{"index", it.index}, {"steps", it.steps}, {"answer", it.answer}, {"correct", good},
                            {"tokens", r.gen.tokens.size()}, {"output", r.gen.text}, {"signals", r.signals.to_json()}};
        details << d.dump() << '\n';
      }
      bar.update(static_cast<int>(i + 1), correct,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double n = static_cast<double>(items.size());

    nlohmann::json scores = nlohmann::json::object();
    for (const auto& k : names) scores[k] = measure(values[k], ok, signals::score_orientation(k)).json(signals::score_orientation(k));
    // The probe's own cost per token, measured alone (robust on a shared machine): its tap fed
    // random K/V rows of its layers, then the features and the MLP, as a stream scoring every token
    // would; against this run's time per generated token (prompt, decode and every score included).
    double probe_us = 0, prior_us = 0;
    size_t prior_peak = 0;
    constexpr int kPriorPrompt = 80;
    if (probe) {
      const HParams& hp = model->hparams();
      // The prompt prior is paid once per request, at prefill: its prompt rows pooled and one
      // estimate, timed apart (a kPriorPrompt-token prompt); the per-token loop then finds it done.
      const int p0 = probe->spec.prior ? kPriorPrompt : 0;
      signals::ProbeFeatures pt(hp, probe->spec, p0);
      signals::LogitStats ls;
      std::vector<float> k(hp.n_kv_dim()), v(hp.n_kv_dim()), lg(hp.n_vocab, 0.0f);
      util::SplitMix64 rr{3};
      for (auto& x : k) x = static_cast<float>(rr.normal());
      for (auto& x : v) x = static_cast<float>(rr.normal());
      if (p0 > 0) {
        std::vector<float> pk(static_cast<size_t>(p0) * hp.n_kv_dim()), pv(pk.size());
        for (auto& x : pk) x = static_cast<float>(rr.normal());
        for (auto& x : pv) x = static_cast<float>(rr.normal());
        const auto tq = std::chrono::steady_clock::now();
        for (int l = 0; l < hp.n_layer; ++l) pt.on_kv(l, 0, p0, pk.data(), pv.data());
        prior_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - tq).count();
        prior_peak = probe->spec.prior->layers.size() * 2 * hp.n_kv_dim() * sizeof(double);
      }
      const int reps = 2000;
      double sink = 0;
      const auto tp = std::chrono::steady_clock::now();
      for (int t = p0; t < p0 + reps; ++t) {
        k[t % k.size()] += 0.01f;
        for (int l : probe->spec.layers) pt.on_kv(l, t, 1, k.data(), v.data());
        if (pt.wants_tokens()) pt.on_token(ls, model->tokenizer().token_to_piece(t % hp.n_vocab));
        sink += probe->mlp.score(pt.features(ls));
      }
      probe_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - tp).count() / reps;
      if (sink < 0) std::fprintf(stderr, "%f\n", sink);  // keeps the loop
    }
    const double step_us = tokens > 0 ? wall * 1e6 / static_cast<double>(tokens) : 0.0;
    nlohmann::json early_j = nlohmann::json::object();
    for (auto& [k, v] : early) early_j[k] = measure(v, ok, 1).json(1);
    nlohmann::json abl = nlohmann::json::object();
    for (auto& [name, v] : ablation_c) {
      abl[name] = {{"kv_coe_c", measure(v, ok, 1).json(1)},
                   {"kv_coe_r", measure(ablation_r[name], ok, 1).json(1)},
                   {"kv_coe_c_norm", measure(ablation_cn[name], ok, 1).json(1)}};
    }
    nlohmann::json out = {{"task", o->task}, {"split", o->split}, {"mode", o->mode}, {"n", o->n}, {"seed", o->seed},
                          {"format", reasoning::format_name(fmt.kind())},
                          {"model", path}, {"layers", signals::parse_layers(o->layers, L)}, {"pre_rope", o->pre_rope},
                          {"correct", correct}, {"accuracy", correct / n}, {"mean_tokens", tokens / n}, {"wall_s", wall},
                          {"scores", scores}, {"ablation", abl}, {"kv_probe_early", early_j},
                          {"probe_cost", {{"probe_us_per_token", probe_us}, {"run_us_per_generated_token", step_us},
                                          {"share", step_us > 0 ? probe_us / step_us : 0.0},
                                          {"prior_us_per_request", prior_us},
                                          {"prior_prompt_tokens", prior_us > 0 ? kPriorPrompt : 0},
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
    std::printf("tinygsm %s/%s, n=%d, accuracy %.1f%% (%s)\n", o->split.c_str(), o->mode.c_str(), o->n, 100.0 * correct / n,
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
                    prior_us, kPriorPrompt, wall > 0 ? 100.0 * prior_us * 1e-6 / (wall / n) : 0.0, prior_peak);
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
