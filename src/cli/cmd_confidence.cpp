// kvscope train-confidence: the learned KV confidence probe (signals/confidence_probe.h), trained on
// the model's own answers to labelled prompts: each prompt is answered greedily, the answer is
// checked against the expected number, and the probe's features at 25/50/75% of the answer and at
// its end become rows labelled correct or wrong. The workflow's steps are library calls
// (training/confidence_rows.h); this file reads the flags, calls them and prints.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "model/fingerprint.h"
#include "reasoning/difficulty_mlp.h"
#include "reasoning/prompt_prior.h"
#include "signals/confidence_probe.h"
#include "signals/kv_tap.h"
#include "training/confidence_rows.h"
#include "training/prompt_format.h"
#include "util/error.h"

namespace kvscope::cli {

void add_train_confidence_command(CLI::App& app);

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string it;
  while (std::getline(ss, it, ','))
    if (!it.empty()) out.push_back(it);
  return out;
}

// The flags of train-confidence.
struct Opts {
  ModelOpts model;
  std::string data, out, layers = "2-3", modes = "fast,mixed,slow", features_out, features_in, test_features;
  std::string prompt_field = "auto", format = "auto", difficulty, add_prior;
  int hidden = 32, epochs = 200, patience = 20, max_tokens = 256;
  double lr = 1e-3, val = 0.2, wd = 1e-3, cut_fpr = 0.02;
  uint64_t seed = 1;
  bool no_kv = false, no_logits = false, prompt = false, last = false, numbers = false, prompt_prior = false,
       final_only = false, json = false, quiet = false;
};

// The prompt prior's estimator: the one named, else the model's own when one is beside it (its
// prior then goes into collected rows; needed for --prompt-prior and --add-prior).
std::shared_ptr<const signals::PromptPrior> load_prior(const Opts& o, const std::string& path, const Model& model,
                                                       uint64_t fp) {
  const HParams& hp = model.hparams();
  const bool need = o.prompt_prior || !o.add_prior.empty() || !o.difficulty.empty();
  const std::string dp = o.difficulty.empty() ? reasoning::sibling_difficulty_path(path) : o.difficulty;
  if (dp.empty() && need)
    throw InputError("the prompt prior needs the model's difficulty estimator: none beside the model; pass --difficulty FILE "
                     "(kvscope train-difficulty)");
  if (dp.empty() || (!need && o.data.empty())) return nullptr;
  try {
    auto prior = reasoning::prompt_prior(reasoning::load_difficulty(dp, fp), hp.n_layer, dp);
    prior->validate(hp.n_layer, hp.n_kv_dim());
    return prior;
  } catch (const InputError& e) {
    if (need) throw;
    // The default estimator is optional for plain collection: rows without the prior.
    if (!o.quiet) std::fprintf(stderr, "note: rows without the prompt prior: %s\n", e.what());
    return nullptr;
  }
}

signals::ProbeSpec probe_spec(const Opts& o, const HParams& hp, const std::shared_ptr<const signals::PromptPrior>& prior) {
  signals::ProbeSpec spec;
  spec.kv = !o.no_kv;
  spec.logits = !o.no_logits;
  if (!spec.kv && !spec.logits && !o.numbers && !o.prompt_prior)
    throw InputError("--no-kv and --no-logits leave the probe nothing to read");
  if (spec.kv) spec.layers = signals::parse_layers(o.layers, hp.n_layer);
  spec.prompt = spec.kv && o.prompt;
  spec.last = spec.kv && o.last;
  spec.numbers = o.numbers;
  if (o.prompt_prior) spec.prior = prior;
  return spec;
}

// --add-prior: the prior depends on the prompt alone, so rows collected before gain it from a
// prefill, without answering again.
void add_prior(const Opts& o, const Model& model, uint64_t fp, const std::shared_ptr<const signals::PromptPrior>& prior) {
  const training::PromptFormat fmt(model, format_named(model, o.format));
  const auto data = training::read_labelled(o.data, split_list(o.modes), o.prompt_field, fmt);
  const auto t0 = std::chrono::steady_clock::now();
  Progress bar(!o.quiet, static_cast<int>(data.size()), "prompt prior");
  const auto priors = training::prompt_priors(model, fmt, data, prior, o.model.context_params(),
                                              [&](int i) { bar.update(i + 1, i + 1, seconds_since(t0)); });
  if (!o.quiet) std::fprintf(stderr, "\n");
  std::ofstream fo(o.features_out);
  if (!fo) throw InputError("cannot write '" + o.features_out + "'");
  const size_t n = training::add_prior_to_rows(o.add_prior, fo, priors, fp, prior->id());
  std::printf("%zu rows with the prompt prior -> %s\n", n, o.features_out.c_str());
}

// The rows to train on: read from --features-in (several files: each one's problems stay separate
// groups), or collected from the model's answers to --data (and written to --features-out).
training::CollectedRows gather_rows(const Opts& o, const Model& model, uint64_t fp,
                                    const std::shared_ptr<const signals::PromptPrior>& prior, const signals::ProbeSpec& spec) {
  training::CollectedRows c;
  const auto modes = split_list(o.modes);
  if (!o.features_in.empty()) {
    const auto files = split_list(o.features_in);
    for (size_t i = 0; i < files.size(); ++i) {
      auto part = training::read_probe_rows(files[i], fp, modes, spec.prior.get(), static_cast<int>(i) * 10000000);
      c.rows.insert(c.rows.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
    for (const auto& r : c.rows)
      if (r.share == 1) ++c.answers, c.right += r.ok;
    return c;
  }
  const training::PromptFormat fmt(model, format_named(model, o.format));
  const auto data = training::read_labelled(o.data, modes, o.prompt_field, fmt);
  std::ofstream fo;
  if (!o.features_out.empty()) {
    fo.open(o.features_out);
    if (!fo) throw InputError("cannot write '" + o.features_out + "'");
  }
  int total = 0;
  for (const auto& d : data) total += static_cast<int>(d.prompts.size());
  const auto t0 = std::chrono::steady_clock::now();
  Progress bar(!o.quiet, total, "answer and label");
  training::CollectOptions co;
  co.context = o.model.context_params();
  co.max_tokens = o.max_tokens;
  co.prior = prior;
  co.on_answer = [&](int answers, int right) { bar.update(answers, right, seconds_since(t0)); };
  c = training::collect_probe_rows(model, fmt, data, co);
  if (!o.quiet) std::fprintf(stderr, "\n");
  if (fo)
    for (const auto& r : c.rows) training::write_probe_row(fo, r, fp);
  return c;
}

// --test-features: AUROC per mode and share on other problems' rows; printed unless --json.
nlohmann::json test_report(const Opts& o, const training::ProbeFit& fit, const signals::ProbeSpec& spec, const HParams& hp,
                           uint64_t fp) {
  const auto modes = split_list(o.modes);
  const auto test = training::read_probe_rows(o.test_features, fp, modes, spec.prior.get());
  nlohmann::json t = nlohmann::json::object();
  for (const auto& m : training::test_probe(fit.mlp, spec, hp.head_dim, test, modes)) {
    nlohmann::json e = {{"max_prob", m.max_prob}, {"n", m.n}, {"ece_max_prob", m.max_prob_ece}, {"ece_probe", m.probe_ece}};
    for (const auto& [pct, a] : m.probe_by_share) e["probe_" + std::to_string(pct)] = a;
    t[m.mode] = e;
    if (!o.json)
      std::fprintf(stderr, "test %-6s n=%zu  AUROC MaxProb %.2f  probe %.2f (25%% %.2f, 50%% %.2f, 75%% %.2f)  ECE MaxProb %.3f  probe %.3f\n",
                   m.mode.c_str(), m.n, 100 * m.max_prob, 100 * e.value("probe_100", 0.0), 100 * e.value("probe_25", 0.0),
                   100 * e.value("probe_50", 0.0), 100 * e.value("probe_75", 0.0), m.max_prob_ece, m.probe_ece);
  }
  return t;
}

void train_confidence(const Opts& o) {
  if (!o.add_prior.empty()) {
    if (o.data.empty() || o.features_out.empty() || !o.features_in.empty())
      throw InputError("--add-prior FILE needs --data (the lines its rows were collected from) and --features-out");
  } else {
    if (o.data.empty() == o.features_in.empty()) throw InputError("give --data FILE.jsonl or --features-in FILE (one of them)");
    if (o.out.empty()) throw InputError("--output is required");
  }
  const std::string path = resolve_model(o.model.path);
  auto model = Model::load(path);
  const HParams& hp = model->hparams();
  const uint64_t fp = model_fingerprint(*model);
  const auto prior = load_prior(o, path, *model, fp);
  const signals::ProbeSpec spec = probe_spec(o, hp, prior);
  if (!o.add_prior.empty()) return add_prior(o, *model, fp, prior);

  const auto t0 = std::chrono::steady_clock::now();
  const training::CollectedRows c = gather_rows(o, *model, fp, prior, spec);
  const double collect_s = seconds_since(t0);

  training::ProbeFitOptions fo;
  fo.hidden = o.hidden;
  fo.seed = o.seed;
  fo.final_only = o.final_only;
  fo.cut_fpr = o.cut_fpr;
  fo.train.max_epochs = o.epochs;
  fo.train.patience = o.patience;
  fo.train.lr = o.lr;
  fo.train.weight_decay = o.wd;
  fo.train.val_fraction = o.val;
  fo.train.seed = o.seed;
  const auto t1 = std::chrono::steady_clock::now();
  Progress tbar(!o.quiet, o.epochs, "train probe (acc = val AUROC)");
  fo.train.on_epoch = [&](int ep, double, double, double va) { tbar.update(ep, static_cast<int>(va * ep + 0.5), seconds_since(t1)); };
  training::ProbeFit fit = training::fit_probe(c.rows, spec, hp.head_dim, fo);
  if (!o.quiet) std::fprintf(stderr, "\n");
  const auto& rep = fit.report;
  nlohmann::json info = {{"data", o.data.empty() ? o.features_in : o.data},
                         {"format", reasoning::format_name(format_named(*model, o.format))},
                         {"modes", o.modes},
                         {"answers", c.answers},
                         {"right", c.right},
                         {"rows", fit.n_rows},
                         {"layers", spec.layers},
                         {"kv", spec.kv},
                         {"logits", spec.logits},
                         {"prompt", spec.prompt},
                         {"last", spec.last},
                         {"numbers", spec.numbers},
                         {"prompt_prior", spec.prior != nullptr},
                         {"inputs", fit.mlp.input_dim()},
                         {"hidden", fit.mlp.hidden()},
                         {"params", fit.mlp.n_params()},
                         {"epochs", rep.epochs},
                         {"best_epoch", rep.best_epoch},
                         {"val_loss", rep.best_val_loss},
                         {"val_auroc", rep.val_auroc},
                         {"n_train", rep.n_train},
                         {"n_val", rep.n_val},
                         {"cut_below", fit.cut_below},
                         {"cut_fpr", o.cut_fpr},
                         {"collect_s", collect_s},
                         {"train_s", seconds_since(t1)}};
  signals::ProbeFile f;
  f.model_fingerprint = fp;
  f.spec = spec;
  f.mlp = fit.mlp;
  f.cut_below = fit.cut_below;
  f.info = info.dump();
  signals::save_probe(o.out, f);
  if (!o.test_features.empty()) info["test"] = test_report(o, fit, spec, hp, fp);
  if (o.json) {
    std::printf("%s\n", info.dump().c_str());
    return;
  }
  std::printf("confidence probe -> %s\n", o.out.c_str());
  std::printf("  %d answers (%d right), %zu rows; features %d, MLP %d-%d-%d-1, %zu parameters\n", c.answers, c.right,
              fit.n_rows, f.mlp.input_dim(), f.mlp.input_dim(), f.mlp.hidden(), f.mlp.hidden(), f.mlp.n_params());
  std::printf("  %d epochs (best %d): validation loss %.4f, AUROC %.2f (rows of every share)\n", rep.epochs, rep.best_epoch,
              rep.best_val_loss, rep.val_auroc * 100);
  std::printf("  early-cut threshold P(correct) < %.4f\n", f.cut_below);
}

}  // namespace

void add_train_confidence_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train-confidence", "Train the learned KV confidence probe on the model's own answers");
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  cmd->add_option("--data", o->data, "Labelled prompts, JSON lines (kvscope tinygsm --jsonl)");
  cmd->add_option("--prompt-field", o->prompt_field,
                  "The field holding the prompts: auto (chat models: messages rendered by the chat template at each mode's "
                  "effort, else chat_prompt; the first reasoner: prompt) or one name")
      ->capture_default_str();
  add_reasoning_format_option(cmd, o->format);
  cmd->add_option("--modes", o->modes, "Prompt variants answered per line (keys of its \"prompt\" object)")->capture_default_str();
  cmd->add_option("--layers", o->layers, "KV layers the probe reads: mid | all | a-b | a,b,c")->capture_default_str();
  cmd->add_flag("--no-kv", o->no_kv, "Logit statistics only (ablation)");
  cmd->add_flag("--no-logits", o->no_logits, "KV features only (ablation)");
  cmd->add_flag("--prompt", o->prompt, "Also read the prompt's pooled KV per layer");
  cmd->add_flag("--last", o->last, "Also read the latest token's KV per layer");
  cmd->add_flag("--numbers", o->numbers,
                "Also read the logit statistics of the tokens that write numbers (results after '=', the final answer)");
  cmd->add_flag("--prompt-prior", o->prompt_prior,
                "Also read the difficulty estimator's class probabilities from the prompt's KV (once per request, at "
                "prefill); the estimator is copied into the confidence file");
  cmd->add_option("--difficulty", o->difficulty,
                  "The difficulty estimator of the prompt prior (default: <model>.difficulty.bin beside the model); "
                  "collected rows carry its prior when one is found");
  cmd->add_option("--add-prior", o->add_prior,
                  "Add the prompt prior to the feature rows of this file (collected from --data, same lines and modes) "
                  "by prefilling the prompts only, write them to --features-out, and stop");
  cmd->add_flag("--final-only", o->final_only, "Learn from finished answers only (no 25/50/75% rows)");
  cmd->add_option("--hidden", o->hidden, "MLP hidden width")->check(CLI::Range(2, 512))->capture_default_str();
  cmd->add_option("--epochs", o->epochs, "Maximum epochs")->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_option("--patience", o->patience, "Early-stopping patience (epochs)")->capture_default_str();
  cmd->add_option("--lr", o->lr, "Adam learning rate")->capture_default_str();
  cmd->add_option("--weight-decay", o->wd, "Decoupled weight decay")->capture_default_str();
  cmd->add_option("--val", o->val, "Validation share (by answer)")->check(CLI::Range(0.05, 0.5))->capture_default_str();
  cmd->add_option("--cut-fpr", o->cut_fpr, "Early-cut threshold: share of right answers' partial scores below it")
      ->check(CLI::Range(0.0, 0.5))->capture_default_str();
  cmd->add_option("--max-tokens", o->max_tokens, "Generation cap per answer")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  cmd->add_option("--seed", o->seed, "Training seed")->capture_default_str();
  cmd->add_option("--features-out", o->features_out, "Also write the collected feature rows here (JSON lines)");
  cmd->add_option("--features-in", o->features_in,
                  "Train from feature rows written by --features-out (no generation); several files: a,b");
  cmd->add_option("--test-features", o->test_features,
                  "After training, report AUROC per mode and share on these feature rows (other problems)");
  cmd->add_option("-o,--output", o->out, "Confidence file to write (not with --add-prior)");
  cmd->add_flag("--json", o->json, "Print the summary as JSON");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress output");
  cmd->callback([o] { train_confidence(*o); });
}

}  // namespace kvscope::cli
