// kvscope train-confidence: the learned KV confidence probe (signals/confidence_probe.h), trained on
// the model's own answers to labelled prompts: each prompt is answered greedily, the answer is
// checked against the expected number, and the probe's features at 25/50/75% of the answer and at
// its end become rows labelled correct or wrong.
#include <algorithm>
#include <chrono>
#include <map>
#include <cmath>
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
#include "reasoning/dataset.h"
#include "reasoning/difficulty_mlp.h"
#include "reasoning/prompt_prior.h"
#include "signals/confidence_metrics.h"
#include "signals/confidence_probe.h"
#include "signals/kv_tap.h"
#include "signals/scored_generation.h"
#include "tinygsm/tinygsm.h"
#include "training/confidence_train.h"
#include "training/prompt_format.h"
#include "util/error.h"

namespace kvscope::cli {

void add_train_confidence_command(CLI::App& app);

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct Row {
  int group = 0;       // which answer
  std::string mode;    // the prompt variant ("" for a plain prompt)
  double share = 1;    // share of the answer's tokens seen
  int ok = 0;
  std::vector<float> x;  // features of every layer + logits + count (the collection spec)
  std::vector<float> prior;  // the prompt prior's features (rows collected with an estimator)
  uint64_t prior_id = 0;     // PromptPrior::id() of that estimator
};

struct Labelled {
  std::vector<std::pair<std::string, std::string>> prompts;  // (mode, prompt text)
  int answer = 0;
};

// JSON lines with an integer "answer" and prompts (what `kvscope tinygsm --jsonl` writes; other
// fields are ignored), put to the model as it is prompted (fmt):
//   "messages": a conversation, rendered by the chat template at each mode's effort;
//   "chat_prompt": complete prompts of the levels convention (special tokens parsed);
//   "prompt": the first reasoner's prompts as they are; on a chat model a user turn rendered at
//     its mode's effort (at each mode for a plain string).
// A field's value is a string or an object of prompts per mode (the modes asked for). field
// "auto": chat models read messages, then chat_prompt; the first reasoner prompt.
std::vector<Labelled> read_labelled(const std::string& path, const std::vector<std::string>& modes,
                                    const std::string& field, const training::PromptFormat& fmt) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot open data file '" + path + "'");
  const std::vector<std::string> order = field != "auto" ? std::vector<std::string>{field}
                                         : fmt.chat()    ? std::vector<std::string>{"messages", "chat_prompt", "prompt"}
                                                         : std::vector<std::string>{"prompt"};
  std::vector<Mode> mode_list;
  for (const auto& m : modes) {
    const auto pm = parse_mode(m);
    if (!pm) throw InputError("unknown mode '" + m + "' in --modes (fast, mixed, slow)");
    mode_list.push_back(*pm);
  }
  std::vector<Labelled> out;
  std::string line;
  int ln = 0;
  while (std::getline(in, line)) {
    ++ln;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    const std::string where = path + ":" + std::to_string(ln);
    if (j.is_discarded() || !j.is_object()) throw InputError(where + ": not a JSON object");
    if (!j.contains("answer") || !j["answer"].is_number_integer()) throw InputError(where + ": needs an integer \"answer\"");
    Labelled l;
    l.answer = j["answer"].get<int>();
    std::string used;
    for (const auto& k : order)
      if (j.contains(k)) {
        used = k;
        break;
      }
    const auto& p = used.empty() ? nlohmann::json() : j[used];
    const bool complete = used == "chat_prompt" || !fmt.chat();
    if (used == "messages") {
      const auto msgs = reasoning::parse_chat_messages(p, where + ": ");
      for (size_t k = 0; k < modes.size(); ++k) l.prompts.push_back({modes[k], fmt.render_messages(msgs, mode_list[k])});
    } else if (p.is_string()) {
      if (complete) l.prompts.push_back({"", p.get<std::string>()});
      else
        for (size_t k = 0; k < modes.size(); ++k) l.prompts.push_back({modes[k], fmt.render(p.get<std::string>(), mode_list[k])});
    } else if (p.is_object()) {
      for (size_t k = 0; k < modes.size(); ++k)
        if (p.contains(modes[k]) && p[modes[k]].is_string()) {
          const std::string t = p[modes[k]].get<std::string>();
          l.prompts.push_back({modes[k], complete ? t : fmt.render(t, mode_list[k])});
        }
      if (l.prompts.empty()) throw InputError(where + ": \"" + used + "\" has none of the modes asked for");
    } else {
      std::string names;
      for (const auto& k : order) names += (names.empty() ? "\"" : "\" or \"") + k;
      throw InputError(where + ": needs a " + names + "\" (a string, or an object of prompts per mode; messages: a list of {role, content})");
    }
    out.push_back(std::move(l));
  }
  if (out.empty()) throw InputError("data file '" + path + "' holds no prompts");
  return out;
}

// The features of `spec` out of a row collected with every layer, the logits and the count (and
// the prompt prior, kept apart in the row so rows of older builds keep their layout).
std::vector<float> slice(const std::vector<float>& all, const signals::ProbeSpec& spec, int head_dim,
                         const std::vector<float>& prior = {}) {
  // Collected with the prompt and last parts: [pooled 2hd][4 stats][prompt 2hd][last 2hd] per
  // layer, then the logits, the number statistics (rows of older builds have none) and the count.
  const int e = 2 * head_dim, per = 3 * e + 4, resp = e + 4;
  const size_t base = signals::kProbeLogitFeatures + 1;
  const bool has_numbers = all.size() >= base + signals::kProbeNumberFeatures &&
                           (all.size() - base) % per != 0 && (all.size() - base - signals::kProbeNumberFeatures) % per == 0;
  const size_t nnum = has_numbers ? signals::kProbeNumberFeatures : 0;
  if (all.size() < base || (all.size() - base - nnum) % per != 0) throw InputError("feature row of an unexpected length");
  if (spec.numbers && !has_numbers)
    throw InputError("the feature rows hold no number statistics (collected by an older build); collect them again");
  const size_t nl_all = (all.size() - base - nnum) / per;
  std::vector<float> out;
  if (spec.kv)
    for (int l : spec.layers) {
      if (l < 0 || static_cast<size_t>(l) >= nl_all) throw InputError("layer " + std::to_string(l) + " not in the collected features");
      const auto b = all.begin() + static_cast<long>(l) * per;
      out.insert(out.end(), b, b + resp);
      if (spec.prompt) out.insert(out.end(), b + resp, b + resp + e);
      if (spec.last) out.insert(out.end(), b + resp + e, b + resp + 2 * e);
    }
  const auto tail = all.end() - static_cast<long>(base + nnum);
  if (spec.logits) out.insert(out.end(), tail, tail + signals::kProbeLogitFeatures);
  if (spec.numbers) out.insert(out.end(), tail + signals::kProbeLogitFeatures, all.end() - 1);
  if (spec.prior) {
    if (prior.size() != static_cast<size_t>(signals::kProbePriorFeatures))
      throw InputError("the feature rows hold no prompt prior (collected without a difficulty estimator); collect them "
                       "again with --difficulty FILE, or add it with --add-prior");
    out.insert(out.end(), prior.begin(), prior.end());
  }
  out.push_back(all.back());
  return out;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string it;
  while (std::getline(ss, it, ','))
    if (!it.empty()) out.push_back(it);
  return out;
}

}  // namespace

void add_train_confidence_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train-confidence", "Train the learned KV confidence probe on the model's own answers");
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
  cmd->callback([o] {
    if (!o->add_prior.empty()) {
      if (o->data.empty() || o->features_out.empty() || !o->features_in.empty())
        throw InputError("--add-prior FILE needs --data (the lines its rows were collected from) and --features-out");
    } else {
      if (o->data.empty() == o->features_in.empty()) throw InputError("give --data FILE.jsonl or --features-in FILE (one of them)");
      if (o->out.empty()) throw InputError("--output is required");
    }
    const std::string path = resolve_model(o->model.path);
    auto model = Model::load(path);
    const HParams& hp = model->hparams();
    const uint64_t fp0 = model_fingerprint(*model);
    // The prompt prior's estimator: the one named, else the model's own when one is beside it (its
    // prior then goes into collected rows; needed for --prompt-prior and --add-prior).
    std::shared_ptr<const signals::PromptPrior> prior;
    {
      const bool need = o->prompt_prior || !o->add_prior.empty() || !o->difficulty.empty();
      const std::string dp = o->difficulty.empty() ? reasoning::sibling_difficulty_path(path) : o->difficulty;
      if (dp.empty() && need)
        throw InputError("the prompt prior needs the model's difficulty estimator: none beside the model; pass --difficulty FILE "
                         "(kvscope train-difficulty)");
      if (!dp.empty() && (need || !o->data.empty())) {
        try {
          prior = reasoning::prompt_prior(reasoning::load_difficulty(dp, fp0), hp.n_layer, dp);
          prior->validate(hp.n_layer, hp.n_kv_dim());
        } catch (const InputError& e) {
          if (need) throw;
          prior.reset();  // the default estimator is optional for plain collection: rows without the prior
          if (!o->quiet) std::fprintf(stderr, "note: rows without the prompt prior: %s\n", e.what());
        }
      }
    }
    signals::ProbeSpec spec;
    spec.kv = !o->no_kv;
    spec.logits = !o->no_logits;
    if (!spec.kv && !spec.logits && !o->numbers && !o->prompt_prior)
      throw InputError("--no-kv and --no-logits leave the probe nothing to read");
    if (spec.kv) spec.layers = signals::parse_layers(o->layers, hp.n_layer);
    spec.prompt = spec.kv && o->prompt;
    spec.last = spec.kv && o->last;
    spec.numbers = o->numbers;
    if (o->prompt_prior) spec.prior = prior;
    const uint64_t fp = fp0;

    std::vector<Row> rows;
    double collect_s = 0;
    int answers = 0, right = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const auto modes_wanted = split_list(o->modes);
    auto read_rows = [&](const std::string& file, int group_offset = 0) {
      std::vector<Row> out;
      std::ifstream in(file);
      if (!in) throw InputError("cannot open feature file '" + file + "'");
      std::string line;
      while (std::getline(in, line)) {
        const auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("x")) throw InputError("'" + file + "' is not a feature file");
        if (j.value("fingerprint", std::string()) != std::to_string(fp))
          throw InputError("feature file '" + file + "' was collected with another model");
        const std::string mode = j["mode"].get<std::string>();
        if (!mode.empty() && std::find(modes_wanted.begin(), modes_wanted.end(), mode) == modes_wanted.end()) continue;
        Row r{j["g"].get<int>() + group_offset, mode, j["share"].get<double>(), j["ok"].get<int>(), j["x"].get<std::vector<float>>(), {}, 0};
        if (j.contains("prior")) {
          r.prior = j["prior"].get<std::vector<float>>();
          r.prior_id = std::stoull(j.value("prior_id", std::string("0")));
        }
        if (spec.prior && r.prior_id != spec.prior->id())
          throw InputError("feature file '" + file + "' " +
                           (r.prior.empty() ? std::string("holds no prompt prior (collected without a difficulty estimator); "
                                                          "add it with --add-prior or collect again")
                                            : std::string("was collected with another difficulty estimator than the prompt "
                                                          "prior's; add the prior again with --add-prior")));
        out.push_back(std::move(r));
      }
      if (out.empty()) throw InputError("feature file '" + file + "' holds no rows of the modes asked for");
      return out;
    };
    if (!o->add_prior.empty()) {
      // Prefill only: the prior depends on the prompt alone, so rows collected before gain it
      // without answering again.
      signals::ProbeSpec ps;
      ps.kv = false;
      ps.logits = false;
      ps.prior = prior;
      const training::PromptFormat fmt(*model, format_named(*model, o->format));
      const auto data = read_labelled(o->data, split_list(o->modes), o->prompt_field, fmt);
      Context ctx(*model, o->model.context_params());
      std::map<std::pair<int, std::string>, std::vector<float>> priors;
      Progress bar(!o->quiet, static_cast<int>(data.size()), "prompt prior");
      KVTap* prev = ctx.tap();
      for (size_t i = 0; i < data.size(); ++i) {
        for (const auto& [mode, text] : data[i].prompts) {
          const auto ids = fmt.encode(text);
          if (static_cast<int>(ids.size()) >= ctx.n_ctx()) continue;
          signals::ProbeFeatures pf(hp, ps, static_cast<int>(ids.size()));
          ctx.set_tap(&pf);
          ctx.reset();
          ctx.eval(ids);
          priors[{static_cast<int>(i), mode}] = pf.prior_features();
        }
        bar.update(static_cast<int>(i + 1), static_cast<int>(i + 1), seconds_since(t0));
      }
      ctx.set_tap(prev);
      if (!o->quiet) std::fprintf(stderr, "\n");
      std::ifstream in(o->add_prior);
      if (!in) throw InputError("cannot open feature file '" + o->add_prior + "'");
      std::ofstream fo(o->features_out);
      if (!fo) throw InputError("cannot write '" + o->features_out + "'");
      std::string line;
      size_t n = 0;
      while (std::getline(in, line)) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("x")) throw InputError("'" + o->add_prior + "' is not a feature file");
        if (j.value("fingerprint", std::string()) != std::to_string(fp))
          throw InputError("feature file '" + o->add_prior + "' was collected with another model");
        const auto it = priors.find({j["g"].get<int>(), j["mode"].get<std::string>()});
        if (it == priors.end())
          throw InputError("feature file '" + o->add_prior + "': a row of line " + std::to_string(j["g"].get<int>() + 1) +
                           " mode '" + j["mode"].get<std::string>() + "' has no prompt in --data (not the file it was collected from?)");
        j["prior"] = it->second;
        j["prior_id"] = std::to_string(prior->id());
        fo << j.dump() << '\n';
        ++n;
      }
      std::printf("%zu rows with the prompt prior -> %s\n", n, o->features_out.c_str());
      return;
    }
    if (!o->features_in.empty()) {
      // Several files (comma-separated): each one's problems stay separate groups.
      const auto files = split_list(o->features_in);
      for (size_t i = 0; i < files.size(); ++i) {
        auto part = read_rows(files[i], static_cast<int>(i) * 10000000);
        rows.insert(rows.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
      }
      for (const auto& r : rows)
        if (r.share == 1) ++answers, right += r.ok;
    } else {
      const auto modes = split_list(o->modes);
      const training::PromptFormat fmt(*model, format_named(*model, o->format));
      const auto data = read_labelled(o->data, modes, o->prompt_field, fmt);
      Context ctx(*model, o->model.context_params());
      signals::SignalOptions so;
      so.hidden = false;
      so.probe_features_trace = true;
      so.probe_spec.layers = signals::parse_layers("all", hp.n_layer);
      so.probe_spec.prompt = true;
      so.probe_spec.last = true;
      so.probe_spec.numbers = true;
      so.probe_spec.prior = prior;  // when the model has an estimator: kept apart in the rows
      int total = 0;
      for (const auto& d : data) total += static_cast<int>(d.prompts.size());
      Progress bar(!o->quiet, total, "answer and label");
      std::ofstream fo;
      if (!o->features_out.empty()) {
        fo.open(o->features_out);
        if (!fo) throw InputError("cannot write '" + o->features_out + "'");
      }
      for (size_t i = 0; i < data.size(); ++i) {
        for (const auto& [mode, text] : data[i].prompts) {
          const auto ids = fmt.encode(text);
          if (static_cast<int>(ids.size()) >= ctx.n_ctx()) continue;
          const int room = std::min(o->max_tokens, ctx.n_ctx() - static_cast<int>(ids.size()));
          const auto r = signals::generate_scored(ctx, ids, greedy_sampling(), room, so);
          const auto got =
              tinygsm::parse_answer(training::answer_text(fmt.plan(parse_mode(mode).value_or(Mode::Slow)), r.gen.text));
          const int ok = got && *got == data[i].answer;
          ++answers;
          right += ok;
          const auto& pf = r.signals.probe_features;  // per sampled token, then the final vector
          const size_t n = pf.size() - 1;
          std::vector<std::pair<double, const std::vector<float>*>> pick;
          for (double s : {0.25, 0.5, 0.75})
            if (n > 0) pick.push_back({s, &pf[std::clamp<size_t>(static_cast<size_t>(std::ceil(s * n)), 1, n) - 1]});
          pick.push_back({1.0, &pf.back()});
          for (auto& [s, xp] : pick) {
            Row row{static_cast<int>(i), mode, s, ok, *xp, {}, 0};
            if (prior) {  // the prior's values sit before the count: kept apart
              const auto b = row.x.end() - 1 - signals::kProbePriorFeatures;
              row.prior.assign(b, row.x.end() - 1);
              row.x.erase(b, row.x.end() - 1);
              row.prior_id = prior->id();
            }
            if (fo) {
              nlohmann::json j = {{"g", i}, {"mode", mode}, {"share", s}, {"ok", ok}, {"x", row.x}, {"fingerprint", std::to_string(fp)}};
              if (prior) j["prior"] = row.prior, j["prior_id"] = std::to_string(row.prior_id);
              fo << j.dump() << '\n';
            }
            rows.push_back(std::move(row));
          }
          bar.update(answers, right, seconds_since(t0));
        }
      }
      if (!o->quiet) std::fprintf(stderr, "\n");
    }
    collect_s = seconds_since(t0);

    std::vector<std::vector<float>> X;
    std::vector<int> y, g;
    for (const auto& r : rows) {
      if (o->final_only && r.share < 1) continue;
      X.push_back(slice(r.x, spec, hp.head_dim, r.prior));
      y.push_back(r.ok);
      // One group per problem: its answers in every mode stay on one side of the split.
      g.push_back(r.group);
    }
    int pos = 0;
    for (int v : y) pos += v;
    if (pos == 0 || pos == static_cast<int>(y.size()))
      throw InputError("the answers are all right or all wrong: nothing to learn a confidence from");
    signals::ProbeMLP mlp(static_cast<int>(X[0].size()), o->hidden, o->seed);
    training::ProbeTrainOptions to;
    to.max_epochs = o->epochs;
    to.patience = o->patience;
    to.lr = o->lr;
    to.weight_decay = o->wd;
    to.val_fraction = o->val;
    to.seed = o->seed;
    const auto t1 = std::chrono::steady_clock::now();
    Progress tbar(!o->quiet, o->epochs, "train probe (acc = val AUROC)");
    to.on_epoch = [&](int ep, double, double, double va) { tbar.update(ep, static_cast<int>(va * ep + 0.5), seconds_since(t1)); };
    const auto rep = training::train_probe(mlp, X, y, g, to);
    if (!o->quiet) std::fprintf(stderr, "\n");

    // Early-cut threshold: at most cut_fpr of the right answers' partial (25-75%) scores fall below.
    std::vector<double> right_partial;
    for (size_t i = 0, k = 0; i < rows.size(); ++i) {
      if (o->final_only && rows[i].share < 1) continue;
      if (rows[i].share < 1 && rows[i].ok) right_partial.push_back(mlp.score(X[k]));
      ++k;
    }
    double cut = 0;
    if (!right_partial.empty() && o->cut_fpr > 0) {
      std::sort(right_partial.begin(), right_partial.end());
      cut = right_partial[std::min(right_partial.size() - 1, static_cast<size_t>(o->cut_fpr * right_partial.size()))];
    }
    nlohmann::json info = {{"data", o->data.empty() ? o->features_in : o->data},
                           {"format", reasoning::format_name(format_named(*model, o->format))},
                           {"modes", o->modes},
                           {"answers", answers},
                           {"right", right},
                           {"rows", X.size()},
                           {"layers", spec.layers},
                           {"kv", spec.kv},
                           {"logits", spec.logits},
                           {"prompt", spec.prompt},
                           {"last", spec.last},
                           {"numbers", spec.numbers},
                           {"prompt_prior", spec.prior != nullptr},
                           {"inputs", mlp.input_dim()},
                           {"hidden", mlp.hidden()},
                           {"params", mlp.n_params()},
                           {"epochs", rep.epochs},
                           {"best_epoch", rep.best_epoch},
                           {"val_loss", rep.best_val_loss},
                           {"val_auroc", rep.val_auroc},
                           {"n_train", rep.n_train},
                           {"n_val", rep.n_val},
                           {"cut_below", cut},
                           {"cut_fpr", o->cut_fpr},
                           {"collect_s", collect_s},
                           {"train_s", seconds_since(t1)}};
    signals::ProbeFile f;
    f.model_fingerprint = fp;
    f.spec = spec;
    f.mlp = std::move(mlp);
    f.cut_below = cut;
    f.info = info.dump();
    signals::save_probe(o->out, f);
    if (!o->test_features.empty()) {
      // AUROC on other problems: the probe at each share and MaxProb (mean max-probability, the
      // first logit feature) at the end, per mode.
      const auto test = read_rows(o->test_features);
      const int per = 6 * hp.head_dim + 4;
      nlohmann::json t = nlohmann::json::object();
      for (const auto& m : modes_wanted) {
        std::map<double, std::pair<std::vector<double>, std::vector<bool>>> by_share;
        std::vector<double> mp;
        std::vector<bool> mp_ok;
        for (const auto& r : test) {
          if (r.mode != m) continue;
          auto& [s, k] = by_share[r.share];
          s.push_back(f.mlp.score(slice(r.x, spec, hp.head_dim, r.prior)));
          k.push_back(r.ok);
          if (r.share == 1) {
            const size_t nl = (r.x.size() - signals::kProbeLogitFeatures - 1) / per;
            mp.push_back(r.x[nl * per]);
            mp_ok.push_back(r.ok);
          }
        }
        if (mp.empty()) continue;
        nlohmann::json e = {{"max_prob", signals::auroc(mp, mp_ok)}, {"n", mp.size()}};
        for (auto& [sh, v] : by_share) e["probe_" + std::to_string(static_cast<int>(sh * 100))] = signals::auroc(v.first, v.second);
        t[m] = e;
        if (!o->json)
          std::fprintf(stderr, "test %-6s n=%zu  MaxProb %.2f  probe %.2f (25%% %.2f, 50%% %.2f, 75%% %.2f)\n", m.c_str(),
                       mp.size(), 100 * e["max_prob"].get<double>(), 100 * e.value("probe_100", 0.0),
                       100 * e.value("probe_25", 0.0), 100 * e.value("probe_50", 0.0), 100 * e.value("probe_75", 0.0));
      }
      info["test"] = t;
    }
    if (o->json) {
      std::printf("%s\n", info.dump().c_str());
      return;
    }
    std::printf("confidence probe -> %s\n", o->out.c_str());
    std::printf("  %d answers (%d right), %zu rows; features %d, MLP %d-%d-%d-1, %zu parameters\n", answers, right, X.size(),
                f.mlp.input_dim(), f.mlp.input_dim(), f.mlp.hidden(), f.mlp.hidden(), f.mlp.n_params());
    std::printf("  %d epochs (best %d): validation loss %.4f, AUROC %.2f (rows of every share)\n", rep.epochs, rep.best_epoch,
                rep.best_val_loss, rep.val_auroc * 100);
    std::printf("  early-cut threshold P(correct) < %.4f\n", cut);
  });
}

}  // namespace kvscope::cli
