// kvscope train-difficulty / analyze-difficulty: the KV-based difficulty estimator of adaptive
// reasoning, trained on the model's own results in each mode, and a probe study of where in the
// KV cache (which layers, how much of the prompt) the difficulty signal lives.
#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "model/fingerprint.h"
#include "training/difficulty_data.h"
#include "training/difficulty_train.h"
#include "training/linear_probe.h"
#include "signals/confidence_metrics.h"
#include "signals/kv_tap.h"
#include "tinygsm/tinygsm.h"
#include "util/error.h"

namespace kvscope::cli {

void add_train_difficulty_command(CLI::App& app);
void add_analyze_difficulty_command(CLI::App& app);

namespace {

using reasoning::ProblemRecord;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::vector<ProblemRecord> collect(Context& ctx, const std::string& split_name, int n, uint64_t seed,
                                   reasoning::CollectOptions co, bool quiet) {
  auto split = tinygsm::parse_split(split_name);
  if (!split) throw InputError("unknown split '" + split_name + "' (train, validation, test, heldout)");
  const auto items = tinygsm::generate(*split, static_cast<size_t>(n), seed);
  Progress bar(!quiet, n, "run fast/mixed/slow");
  const auto t0 = std::chrono::steady_clock::now();
  // The bar's "acc" column shows how often fast mode fails (the hard share).
  co.progress = [&](int done, int fast_fail) { bar.update(done, fast_fail, seconds_since(t0)); };
  return reasoning::collect_tinygsm(ctx, items, co);
}

std::vector<float> slice_layers(const std::vector<float>& all, const std::vector<int>& layers, int per_layer) {
  std::vector<float> out;
  out.reserve(layers.size() * per_layer);
  for (int l : layers) out.insert(out.end(), all.begin() + static_cast<long>(l) * per_layer,
                                  all.begin() + static_cast<long>(l + 1) * per_layer);
  return out;
}

}  // namespace

void add_train_difficulty_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train-difficulty", "Train the KV-feature difficulty estimator for adaptive reasoning");
  struct Opts {
    ModelOpts model;
    std::string task = "tinygsm", split = "train", layers = "all", out, unsolved = "slow", data;
    ReasoningOpts reasoning;
    int n = 5000, hidden = 64, epochs = 300, patience = 25, max_tokens = 256;
    double fraction = 1.0, lr = 1e-3, val = 0.2;
    uint64_t seed = 7;
    bool pre_rope = false, no_checkpoints = false, quiet = false, json = false;
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  cmd->add_option("--task", o->task, "Task (tinygsm)")->capture_default_str();
  cmd->add_option("--split", o->split, "Problems to learn from")->capture_default_str();
  cmd->add_option("--n", o->n, "Number of problems")->check(CLI::Range(10, 1 << 22))->capture_default_str();
  cmd->add_option("--seed", o->seed, "Problem generator seed (not the one the model was trained on)")->capture_default_str();
  cmd->add_option("--layers", o->layers, "KV layers pooled: all | mid | a-b | a,b,c")->capture_default_str();
  cmd->add_option("--prompt-fraction", o->fraction, "Share of the prompt's positions pooled")
      ->check(CLI::Range(0.01, 1.0))->capture_default_str();
  cmd->add_flag("--pre-rope", o->pre_rope, "Pool K before RoPE");
  cmd->add_option("--hidden", o->hidden, "MLP hidden width")->check(CLI::Range(2, 1024))->capture_default_str();
  cmd->add_option("--epochs", o->epochs, "Maximum epochs")->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_option("--patience", o->patience, "Early-stopping patience (epochs)")->capture_default_str();
  cmd->add_option("--lr", o->lr, "Adam learning rate")->capture_default_str();
  cmd->add_option("--val", o->val, "Validation share")->check(CLI::Range(0.05, 0.5))->capture_default_str();
  cmd->add_option("--max-tokens", o->max_tokens, "Generation cap per run")->capture_default_str();
  cmd->add_option("--unsolved", o->unsolved,
                  "Label of problems no mode answers right: slow (reason anyway) or fast (spend no tokens)")
      ->check(CLI::IsMember({"slow", "fast"}))->capture_default_str();
  cmd->add_flag("--no-checkpoints", o->no_checkpoints, "Learn from the question only (no mid-answer samples)");
  cmd->add_option("-o,--output", o->out, "Difficulty file to write")->required();
  cmd->add_flag("--json", o->json, "Print the summary as JSON");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress output");
  cmd->add_option("--data", o->data,
                  "Learn from this JSON-lines dataset instead of --task (\"messages\" or \"question\", and \"answer\"), "
                  "on the model's reasoning format");
  cmd->add_option("--reasoning-format", o->reasoning.format,
                  "With --data: auto (detected) | none | think | qwen3 | deepseek-r1 | gpt-oss | kvscope")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "none", "think", "qwen3", "deepseek-r1", "deepseek", "gpt-oss", "kvscope"}));
  cmd->add_option("--think-budget-medium", o->reasoning.budgets.medium,
                  "With --data on a think format: the thinking budget of the middle effort (mixed)")
      ->capture_default_str()->check(CLI::Range(1, 1 << 24));
  cmd->callback([o] {
    if (o->data.empty() && o->task != "tinygsm") throw InputError("unknown task '" + o->task + "' (tinygsm, or --data FILE)");
    std::vector<reasoning::DataItem> data_items;
    if (!o->data.empty()) {
      data_items = reasoning::load_dataset(o->data);  // names the file and line of a bad item
      if (static_cast<int>(data_items.size()) > o->n) data_items.resize(static_cast<size_t>(o->n));
    }
    const std::string path = resolve_model(o->model.path);
    auto model = Model::load(path);
    const HParams& hp = model->hparams();
    Context ctx(*model, o->model.context_params());
    reasoning::CollectOptions co;
    co.spec.layers = signals::parse_layers(o->layers, hp.n_layer);
    co.spec.prompt_fraction = o->fraction;
    co.spec.pre_rope = o->pre_rope;
    co.checkpoints = !o->no_checkpoints;
    co.max_tokens = o->max_tokens;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<reasoning::ProblemRecord> recs;
    const bool kv_format = reasoning::format_of(o->reasoning.format_of(*model)).mode_line();
    if (o->data.empty() && !kv_format) {
      // The built-in task on any other format is one such dataset: tinygsm's broad phrasing as chat turns.
      auto split = tinygsm::parse_split(o->split);
      if (!split) throw InputError("unknown split '" + o->split + "'");
      int line = 0;
      for (const auto& it : tinygsm::generate(*split, static_cast<size_t>(o->n), o->seed, 0, tinygsm::Style::Broad)) {
        reasoning::DataItem d;
        d.line = ++line;
        d.messages = {{"user", "Question: " + tinygsm::numbered_question(it)}};
        d.answer = std::to_string(it.answer);
        d.number = it.answer;
        data_items.push_back(std::move(d));
      }
    }
    if (o->data.empty() && kv_format) {
      recs = collect(ctx, o->split, o->n, o->seed, co, o->quiet);
    } else {
      const reasoning::FormatKind kind = o->reasoning.format_of(*model);
      if (kind == reasoning::FormatKind::None)
        throw InputError("--data: the model has no reasoning format to choose efforts in (detected 'none'; set --reasoning-format)");
      Progress bar(!o->quiet, static_cast<int>(data_items.size()), "collect " + o->data + " (acc = fast fails)");
      co.progress = [&](int done, int fast_fail) { bar.update(done, fast_fail, seconds_since(t0)); };
      const Model& mr = *model;
      recs = reasoning::collect_data(
          ctx, data_items, kind,
          [&mr](const reasoning::DataItem& it, const reasoning::ReasoningPlan* p) { return encode_chat(mr, it.messages, p); },
          o->reasoning.budgets, co);
    }
    const double collect_s = seconds_since(t0);

    const auto unsolved_label = parse_mode(o->unsolved).value_or(reasoning::Mode::Slow);  // CLI11 allows fast | slow
    reasoning::TrainOptions to;
    to.max_epochs = o->epochs;
    to.patience = o->patience;
    to.lr = o->lr;
    to.val_fraction = o->val;
    to.seed = o->seed;
    const auto t1 = std::chrono::steady_clock::now();
    Progress bar(!o->quiet, o->epochs, "train MLP (acc = validation)");
    to.on_epoch = [&](int ep, double, double, double va) { bar.update(ep, static_cast<int>(va * ep + 0.5), seconds_since(t1)); };
    auto fit = reasoning::fit_difficulty(recs, o->hidden, unsolved_label, to);
    if (!o->quiet) std::fprintf(stderr, "\n");
    const double train_s = seconds_since(t1);

    nlohmann::json info = {{"task", o->data.empty() ? o->task : "data:" + o->data},
                           {"split", o->split},
                           {"n_problems", recs.size()},
                           {"seed", o->seed},
                           {"unsolved_label", o->unsolved},
                           {"features", co.spec.describe()},
                           {"collect_s", collect_s},
                           {"train_s", train_s}};
    info.update(fit.info);
    const auto& rep = fit.info;
    const auto labels = [](const nlohmann::json& l) { return std::array<int, 3>{l["fast"].get<int>(), l["mixed"].get<int>(), l["slow"].get<int>()}; };
    const auto counts = labels(rep["labels_question"]), cp_counts = labels(rep["labels_checkpoints"]);
    const int unsolved = rep["unsolved"].get<int>();
    const size_t n_rows = rep["rows"].get<size_t>();
    auto mlp = std::move(fit.mlp);
    reasoning::DifficultyFile f;
    f.model_fingerprint = model_fingerprint(*model);
    f.features = co.spec;
    f.mlp = std::move(mlp);
    f.info = info.dump();
    save_difficulty(o->out, f);
    if (o->json) {
      std::printf("%s\n", info.dump().c_str());
      return;
    }
    std::printf("difficulty estimator -> %s\n", o->out.c_str());
    std::printf("  features: %s (%d floats), MLP %d-%d-%d-%d, %zu parameters\n", co.spec.describe().c_str(),
                f.mlp.input_dim(), f.mlp.input_dim(), f.mlp.hidden(), f.mlp.hidden(), reasoning::kClasses, f.mlp.n_params());
    std::printf("  %d problems: cheapest right mode fast %d / mixed %d / slow %d (unsolved, labelled %s: %d)\n", static_cast<int>(recs.size()),
                counts[0], counts[1], counts[2], o->unsolved.c_str(), unsolved);
    std::printf("  %zu check-point rows: fast %d / mixed %d / slow %d\n", n_rows - recs.size(), cp_counts[0], cp_counts[1],
                cp_counts[2]);
    std::printf("  %d epochs (best %d): validation loss %.4f, accuracy %.1f%% (train %.1f%%)\n", rep["epochs"].get<int>(),
                rep["best_epoch"].get<int>(), rep["val_loss"].get<double>(), rep["val_accuracy"].get<double>() * 100,
                rep["train_accuracy"].get<double>() * 100);
    std::printf("  collecting %.0f s, training %.0f s\n", collect_s, train_s);
  });
}

void add_analyze_difficulty_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("analyze-difficulty",
                                 "Probe where the difficulty signal lives: per layer and per share of the prompt");
  struct Opts {
    ModelOpts model;
    std::string task = "tinygsm", split = "train";
    int n = 2000, max_tokens = 256;
    double train_share = 0.7;
    uint64_t seed = 11;
    bool json = false, quiet = false;
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  cmd->add_option("--task", o->task, "Task (tinygsm)")->capture_default_str();
  cmd->add_option("--split", o->split, "Problems")->capture_default_str();
  cmd->add_option("--n", o->n, "Number of problems")->check(CLI::Range(20, 1 << 22))->capture_default_str();
  cmd->add_option("--seed", o->seed, "Problem generator seed")->capture_default_str();
  cmd->add_option("--train-share", o->train_share, "Share of problems the probes are fitted on (rest: scored)")
      ->check(CLI::Range(0.1, 0.9))->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress output");
  cmd->callback([o] {
    if (o->task != "tinygsm") throw InputError("unknown task '" + o->task + "' (tinygsm)");
    const std::string path = resolve_model(o->model.path);
    auto model = Model::load(path);
    const HParams& hp = model->hparams();
    Context ctx(*model, o->model.context_params());
    const std::vector<double> fractions = {0.1, 0.2, 0.5, 1.0};
    reasoning::CollectOptions co;
    co.checkpoints = false;
    co.max_tokens = o->max_tokens;
    for (bool pre : {false, true})
      for (double f : fractions) {
        reasoning::FeatureSpec s;
        s.prompt_fraction = f;
        s.pre_rope = pre;
        co.variants.push_back(s);  // every layer; layer subsets are sliced out below
      }
    const auto recs = collect(ctx, o->split, o->n, o->seed, co, o->quiet);
    const size_t n_fit = static_cast<size_t>(o->train_share * recs.size());
    const int per_layer = 2 * hp.n_kv_dim();

    // Probe targets: "fast mode fails" and "mixed mode fails" (so slow is needed).
    auto probe_auroc = [&](int variant, const std::vector<int>& layers, int target) {
      std::vector<std::vector<float>> Xf;
      std::vector<bool> yf;
      std::vector<double> s;
      std::vector<bool> ys;
      for (size_t i = 0; i < recs.size(); ++i) {
        auto x = slice_layers(recs[i].variants[variant], layers, per_layer);
        const bool fail = !recs[i].correct[target];
        if (i < n_fit) {
          Xf.push_back(std::move(x));
          yf.push_back(fail);
        } else {
          s.push_back(0);
          ys.push_back(fail);
          Xf.push_back(std::move(x));  // scored after fitting
        }
      }
      std::vector<std::vector<float>> fit(Xf.begin(), Xf.begin() + static_cast<long>(n_fit));
      reasoning::LinearProbe p;
      p.fit(fit, yf);
      for (size_t i = n_fit; i < Xf.size(); ++i) s[i - n_fit] = p.predict(Xf[i]);
      return signals::auroc(s, ys);
    };
    struct Row {
      std::string name;
      std::vector<int> layers;
    };
    std::vector<Row> rows;
    for (int l = 0; l < hp.n_layer; ++l) rows.push_back({"layer " + std::to_string(l), {l}});
    rows.push_back({"mid (" + std::to_string(signals::parse_layers("mid", hp.n_layer).front()) + "-" +
                        std::to_string(signals::parse_layers("mid", hp.n_layer).back()) + ")",
                    signals::parse_layers("mid", hp.n_layer)});
    rows.push_back({"all", signals::parse_layers("all", hp.n_layer)});
    const int full = static_cast<int>(fractions.size()) - 1;  // post-RoPE, 100%

    nlohmann::json out = {{"model", path}, {"n", o->n}, {"split", o->split}, {"seed", o->seed},
                          {"n_fit", n_fit}, {"n_scored", recs.size() - n_fit}};
    int fast_fail = 0, mixed_fail = 0;
    for (const auto& r : recs) {
      fast_fail += !r.correct[0];
      mixed_fail += !r.correct[1];
    }
    out["fast_fail_rate"] = double(fast_fail) / recs.size();
    out["mixed_fail_rate"] = double(mixed_fail) / recs.size();
    // Baseline: the prompt's length alone (a difficulty signal any engine has for free).
    {
      std::vector<double> s;
      std::vector<bool> y0, y1;
      const auto items = tinygsm::generate(*tinygsm::parse_split(o->split), recs.size(), o->seed);
      for (size_t i = n_fit; i < recs.size(); ++i) {
        s.push_back(static_cast<double>(model->tokenizer().encode(reasoning::tinygsm_question(items[i]), true, false).size()));
        y0.push_back(!recs[i].correct[0]);
        y1.push_back(!recs[i].correct[1]);
      }
      out["prompt_length"] = {{"fast_fail_auroc", signals::auroc(s, y0)}, {"mixed_fail_auroc", signals::auroc(s, y1)}};
    }
    nlohmann::json by_layer = nlohmann::json::array();
    for (const auto& r : rows)
      by_layer.push_back({{"layers", r.name},
                          {"fast_fail_auroc", probe_auroc(full, r.layers, 0)},
                          {"mixed_fail_auroc", probe_auroc(full, r.layers, 1)}});
    out["by_layer"] = by_layer;
    nlohmann::json by_fraction = nlohmann::json::array();
    const auto all_layers = rows.back().layers;
    for (size_t v = 0; v < co.variants.size(); ++v)
      by_fraction.push_back({{"fraction", co.variants[v].prompt_fraction},
                             {"pre_rope", co.variants[v].pre_rope},
                             {"fast_fail_auroc", probe_auroc(static_cast<int>(v), all_layers, 0)},
                             {"mixed_fail_auroc", probe_auroc(static_cast<int>(v), all_layers, 1)}});
    out["by_fraction"] = by_fraction;
    if (o->json) {
      std::printf("%s\n", out.dump().c_str());
      return;
    }
    std::printf("difficulty probes on %s %s (n=%d: fit %zu, scored %zu); fast fails %.1f%%, mixed fails %.1f%%\n",
                o->task.c_str(), o->split.c_str(), o->n, n_fit, recs.size() - n_fit, 100.0 * fast_fail / recs.size(),
                100.0 * mixed_fail / recs.size());
    std::printf("logistic probe on mean-pooled K|V, AUROC on the scored problems\n\n");
    std::printf("%-14s %16s %17s\n", "layers", "fast-fail AUROC", "mixed-fail AUROC");
    std::printf("%-14s %16.3f %17.3f\n", "prompt length", out["prompt_length"]["fast_fail_auroc"].get<double>(),
                out["prompt_length"]["mixed_fail_auroc"].get<double>());
    for (const auto& r : by_layer)
      std::printf("%-14s %16.3f %17.3f\n", r["layers"].get<std::string>().c_str(), r["fast_fail_auroc"].get<double>(),
                  r["mixed_fail_auroc"].get<double>());
    std::printf("\n%-22s %16s %17s %14s\n", "prompt share (all)", "fast-fail AUROC", "mixed-fail AUROC",
                "of 100% signal");
    for (bool pre : {false, true}) {
      double ref = 0;
      for (const auto& r : by_fraction)
        if (r["pre_rope"].get<bool>() == pre && r["fraction"].get<double>() == 1.0) ref = r["fast_fail_auroc"].get<double>();
      for (const auto& r : by_fraction) {
        if (r["pre_rope"].get<bool>() != pre) continue;
        const double a = r["fast_fail_auroc"].get<double>();
        char name[64];
        std::snprintf(name, sizeof name, "first %3.0f%%, K %s", r["fraction"].get<double>() * 100, pre ? "pre-RoPE" : "post-RoPE");
        std::printf("%-22s %16.3f %17.3f %13.0f%%\n", name, a, r["mixed_fail_auroc"].get<double>(),
                    ref > 0.5 ? 100.0 * (a - 0.5) / (ref - 0.5) : 0.0);
      }
    }
  });
}

}  // namespace kvscope::cli
