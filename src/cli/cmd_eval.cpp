// kvscope eval: greedy accuracy of a model on a benchmark task (tinygsm), overall and by steps.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "server/server.h"
#include "engine/context.h"
#include "model/fingerprint.h"
#include "reasoning/adaptive_generate.h"
#include "reasoning/dataset.h"
#include "reasoning/early_cut.h"
#include "signals/confidence_probe.h"
#include "training/difficulty_data.h"
#include "training/tinygsm_eval.h"
#include "tinygsm/tinygsm.h"
#include "util/error.h"

namespace kvscope::cli {

void add_eval_command(CLI::App& app);

namespace {

using training::Tally;

// One question answered through the server's pipeline (the request `serve` gets for it): a chat
// turn at an effort of the model's format, or for the embedded model's mode lines a bare question
// and a mode (auto: the difficulty estimate picks).
struct Answered : training::EvalAnswer {
  std::string reasoning_text;  // the reasoning part
  int reasoning_tokens = 0;
};

struct Asker {
  server::Server& srv;
  reasoning::FormatKind kind;
  int max_tokens;
  bool mode_lines() const { return reasoning::format_of(kind).mode_line(); }

  Answered ask(const std::vector<tok::ChatMessage>& messages, const std::string& question, serving::ReasoningMode mode,
               std::optional<Effort> effort = std::nullopt) const {
    server::GenRequest g;
    if (mode_lines()) {
      g.endpoint = server::Endpoint::Completions;
      g.prompt = question;
      g.reasoning = mode;
    } else {
      g.endpoint = server::Endpoint::Chat;
      g.messages = messages;
      const auto fixed = serving::fixed_mode(mode);
      g.effort = effort ? *effort : fixed ? reasoning::effort_for_mode(kind, *fixed) : Effort::Auto;
    }
    g.sampling = greedy_sampling();
    g.max_tokens = max_tokens;
    g.fit_context = true;
    const auto r = srv.run(std::move(g));
    Answered a;
    const nlohmann::json& b = r.body;
    const nlohmann::json ext = b.value("kvscope", nlohmann::json::object());
    a.text = r.text;
    a.stop = r.stop_reason;
    a.reasoning = ext.value("reasoning", nlohmann::json::object());
    if (mode_lines()) {
      reasoning::Splitter split(reasoning::FormatKind::Kvscope, true);
      auto d = split.push(a.text);
      const auto f = split.flush();
      a.content = d.content + f.content, a.reasoning_text = d.reasoning + f.reasoning;
    } else {
      const auto& m = b["choices"][0]["message"];
      a.content = m["content"].is_string() ? m["content"].get<std::string>() : "";
      a.reasoning_text = m.contains("reasoning_content") && m["reasoning_content"].is_string() ? m["reasoning_content"].get<std::string>() : "";
    }
    const auto& usage = b["usage"];
    a.prompt_tokens = usage.value("prompt_tokens", 0);
    // EOS counted, as the adaptive driver's generated_total counts it.
    a.tokens = a.reasoning.contains("generated_total") ? a.reasoning["generated_total"].get<long>()
                                                       : usage.value("completion_tokens", 0L) + (a.stop == StopReason::Eos);
    a.reasoning_tokens = usage.contains("completion_tokens_details") ? usage["completion_tokens_details"].value("reasoning_tokens", 0)
                                                                     : a.reasoning.value("reasoning_tokens", 0);
    if (const auto s = ext.find("signals"); s != ext.end()) {
      a.max_prob = s->value("max_prob", -1.0);
      a.kv_probe = s->value("kv_probe", -1.0);
    }
    return a;
  }
};

// The in-process server of eval: greedy answers with kvscope.signals (the answer confidences).
std::unique_ptr<server::Server> eval_server(const std::string& path, const ModelOpts& mo, const ReasoningOpts& ro, bool recheck,
                                            const std::string& probe) {
  server::ServerOptions so = local_server_options(path, mo, ro);
  so.signals = true;
  so.confidence_path = probe;  // empty: the model's sibling probe
  if (!recheck) so.analysis_interval_ms = 0;
  auto srv = std::make_unique<server::Server>(so);
  srv->load();
  return srv;
}

// eval --data FILE.jsonl: each item at each effort on the model's reasoning format, greedy; the
// answer part of the response (the splitter's content) is checked against the item's answer.
void eval_data(const std::string& model_path, const std::string& data, const std::string& efforts, int n, int max_tokens,
               const ModelOpts& mo, const ReasoningOpts& ro, const std::string& probe, const std::string& details_path, bool json,
               bool quiet) {
  const auto items = reasoning::load_dataset(data);
  auto srv = eval_server(model_path, mo, ro, true, probe);
  const reasoning::FormatKind kind = srv->reasoning_format();
  std::vector<reasoning::ReasoningPlan> plans;
  std::vector<std::string> names;
  for (size_t b = 0; b <= efforts.size();) {
    const size_t e = std::min(efforts.find(',', b), efforts.size());
    const std::string name = efforts.substr(b, e - b);
    b = e + 1;
    const auto eff = parse_effort(name);
    if (!eff || *eff == Effort::Auto)
      throw InputError("--reasoning-effort: unknown effort '" + name + "' (none, minimal, low, medium, high; comma-separated)");
    plans.push_back(reasoning::plan(kind, {*eff, {}, {}}, ro.budgets));
    names.push_back(name);
  }
  const Asker asker{*srv, kind, max_tokens};
  std::ofstream details;
  open_details(details, details_path);
  const size_t count = std::min(items.size(), static_cast<size_t>(n));
  std::vector<Tally> tallies(plans.size());
  std::vector<long> reasoning_tokens(plans.size(), 0);
  std::vector<double> seconds(plans.size(), 0);
  Progress bar(!quiet, static_cast<int>(count), "eval " + data, false);
  for (size_t i = 0; i < count; ++i) {
    const auto& it = items[i];
    std::string question;  // the embedded model reads the last user message bare, as it was trained
    for (const auto& m : it.messages)
      if (m.role == "user") question = m.content;
    for (size_t k = 0; k < plans.size(); ++k) {
      const auto& p = plans[k];
      const auto t0 = std::chrono::steady_clock::now();
      Answered r;
      try {
        r = asker.ask(it.messages, question, serving::reasoning_mode_of(p.mode), p.effort);
      } catch (const LimitError& e) {
        throw LimitError(data + ":" + std::to_string(it.line) + ": " + e.what());
      }
      seconds[k] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const bool ok = reasoning::check_answer(it, r.content);
      tallies[k].n += 1;
      tallies[k].correct += ok;
      tallies[k].tokens += r.tokens;
      reasoning_tokens[k] += r.reasoning_tokens;
      if (details) {
        nlohmann::json d = {{"line", it.line},         {"effort", names[k]},     {"correct", ok},
                            {"tokens", r.tokens},      {"reasoning_tokens", r.reasoning_tokens},
                            {"content", r.content},    {"reasoning_content", r.reasoning_text},
                            {"expected", it.regex.empty() ? it.answer : "/" + it.regex + "/"},
                            {"stop", stop_reason_name(r.stop)}};
        details << d.dump() << "\n";
      }
    }
    bar.step(static_cast<int>(i + 1));
  }
  bar.finish();
  nlohmann::json out = {{"data", data}, {"n", count}, {"format", std::string(reasoning::format_name(kind))}};
  for (size_t k = 0; k < plans.size(); ++k) {
    nlohmann::json t = tallies[k].json();
    t["mean_reasoning_tokens"] = tallies[k].n ? double(reasoning_tokens[k]) / tallies[k].n : 0.0;
    t["seconds"] = seconds[k];
    t["level"] = plans[k].level_name();
    out["efforts"][names[k]] = t;
  }
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  std::printf("%s: %zu items, reasoning format %s\n", data.c_str(), count, std::string(reasoning::format_name(kind)).c_str());
  std::printf("%-8s %9s %12s %16s %9s\n", "effort", "accuracy", "mean tokens", "reasoning tokens", "seconds");
  for (size_t k = 0; k < plans.size(); ++k) {
    const auto& t = out["efforts"][names[k]];
    std::printf("%-8s %8.1f%% %12.1f %16.1f %9.1f\n", names[k].c_str(), 100 * t["accuracy"].get<double>(),
                t["mean_tokens"].get<double>(), t["mean_reasoning_tokens"].get<double>(), t["seconds"].get<double>());
  }
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "Measure a model's greedy accuracy on a benchmark task");
  struct Opts {
    ModelOpts model;
    std::string task = "tinygsm", split = "test", mode = "slow", details, probe, style, file;
    bool early_cut = false;
    double cut_below = 0;
    int cut_min_tokens = 5;
    int n = 1000, max_tokens = 256;
    uint64_t seed = tinygsm::kDefaultSeed;
    bool json = false, quiet = false, no_recheck = false;
    ReasoningOpts reasoning;
    std::string data, efforts = "high";
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  cmd->add_option("--task", o->task, "Benchmark task (tinygsm)")->capture_default_str();
  cmd->add_option("--split", o->split, "test | heldout | validation | train")->capture_default_str();
  cmd->add_option("--file", o->file,
                  "Questions from a JSON-lines file instead of the generator (\"question\" as typed, \"answer\", "
                  "optional \"steps\"), e.g. the held-out natural set data/natural/heldout.jsonl; every mode and auto "
                  "run on it as on a split");
  cmd->add_option("--mode", o->mode, "Answer style: fast | mixed | slow | all (the three) | auto (the three and adaptive)")
      ->capture_default_str();
  cmd->add_option("--n", o->n, "Number of problems")->check(CLI::Range(1, 1 << 24))->capture_default_str();
  cmd->add_option("--seed", o->seed, "Generator seed of the problems")->capture_default_str();
  cmd->add_option("--style", o->style,
                  "tinygsm phrasing: broad | classic (default: classic for a model with the first reasoner's "
                  "private format, else broad)");
  cmd->add_option("--max-tokens", o->max_tokens, "Generation cap per problem")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--details", o->details, "Write every problem's output to this JSON-lines file");
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress bar on stderr");
  cmd->add_flag("--no-recheck", o->no_recheck, "auto: decide once from the question (no re-estimates while generating)");
  add_reasoning_options(cmd, o->reasoning);
  cmd->add_option("--data", o->data,
                  "A JSON-lines dataset for any model: \"messages\" or \"question\", and \"answer\" (or \"answer_regex\"); "
                  "run at each --reasoning-effort");
  cmd->add_option("--reasoning-effort", o->efforts, "With --data: efforts to measure, comma-separated (none,low,medium,high)")
      ->capture_default_str();
  cmd->add_flag("--early-cut", o->early_cut,
                "auto: cut fast/mixed answers the confidence probe predicts wrong and retry them slower");
  cmd->add_option("--probe", o->probe,
                  "Confidence-probe file for the answers' P(correct) (kv_probe, its ECE) and --early-cut (default: "
                  "<model>.confidence.bin beside the model)");
  cmd->add_option("--early-cut-below", o->cut_below, "Cut below this P(correct) (default: the probe file's threshold)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--early-cut-min-tokens", o->cut_min_tokens, "Tokens an attempt generates before it may be cut")
      ->check(CLI::Range(1, 1 << 20))->capture_default_str();
  cmd->callback([o] {
    if (!o->data.empty()) {
      eval_data(resolve_model(o->model.path), o->data, o->efforts, o->n, o->max_tokens, o->model, o->reasoning, o->probe, o->details,
                o->json, o->quiet);
      return;
    }
    if (o->task != "tinygsm") throw InputError("unknown task '" + o->task + "' (tinygsm)");
    auto split = tinygsm::parse_split(o->split);
    if (!split && o->file.empty()) throw InputError("unknown split '" + o->split + "' (test, heldout, validation, train)");
    std::vector<tinygsm::Item> file_items;
    if (!o->file.empty()) {
      file_items = tinygsm::load_items(o->file);
      if (static_cast<size_t>(o->n) < file_items.size()) file_items.resize(static_cast<size_t>(o->n));
      o->n = static_cast<int>(file_items.size());
      o->split = o->file;
    }
    std::vector<tinygsm::Mode> modes;
    const bool with_auto = o->mode == "auto";
    if (o->mode == "all" || with_auto) {
      modes = {tinygsm::Mode::Fast, tinygsm::Mode::Mixed, tinygsm::Mode::Slow};
    } else {
      auto m = tinygsm::parse_mode(o->mode);
      if (!m) throw InputError("unknown mode '" + o->mode + "' (fast, mixed, slow, all, auto)");
      modes = {*m};
    }
    const std::string path = resolve_model(o->model.path);
    std::string difficulty_path;
    if (with_auto) {
      difficulty_path = difficulty_path_for(path, o->reasoning.difficulty);
      if (difficulty_path.empty())
        throw InputError("--mode auto needs a difficulty estimator: pass --difficulty FILE (kvscope train-difficulty)");
    }
    if (o->early_cut && !with_auto) throw InputError("--early-cut applies to --mode auto");
    // Every answer comes from the server's pipeline, as `serve` would give it (kvscope.signals
    // included, for the answer confidences' calibration).
    auto srv = eval_server(path, o->model, o->reasoning, !o->no_recheck, o->probe);
    const Model& model = *srv->model();
    const reasoning::ControllerConfig controller = o->reasoning.controller();
    std::ofstream details;
    open_details(details, o->details);
    // The first reasoner's private format reads the bare question and its mode line; any other
    // format gets the question as a chat turn at each mode's effort, as the server renders it.
    const reasoning::FormatKind kind = srv->reasoning_format();
    const bool kv_format = reasoning::format_of(kind).mode_line();
    if (!reasoning::format_of(kind).reasons())
      throw InputError("the model has no reasoning format for tinygsm's modes (give --reasoning-format, or eval --data)");
    const auto style = o->style.empty() ? (kv_format ? tinygsm::Style::Classic : tinygsm::Style::Broad)
                                        : tinygsm::parse_style(o->style).value_or(tinygsm::Style::Classic);
    if (!o->style.empty() && !tinygsm::parse_style(o->style)) throw InputError("unknown style '" + o->style + "' (broad, classic)");
    const auto items = o->file.empty() ? tinygsm::generate(*split, static_cast<size_t>(o->n), o->seed, 0, style) : file_items;
    auto messages_of = [](const tinygsm::Item& it) {
      return std::vector<tok::ChatMessage>{{"user", tinygsm::user_message(it)}};
    };
    const Asker asker{*srv, kind, o->max_tokens};

    // --early-cut: the probe's monitor is not part of the server's pipeline; auto runs on one Context
    // with reasoning::generate_adaptive instead (its AttemptMonitor restarts an attempt there).
    std::unique_ptr<Context> cut_ctx;
    reasoning::DifficultyFile difficulty;
    reasoning::AdaptiveOptions ao;
    std::unique_ptr<signals::ProbeFile> probe;
    std::unique_ptr<reasoning::ProbeEarlyCut> cutter;
    if (o->early_cut) {
      difficulty = reasoning::load_difficulty(difficulty_path, model_fingerprint(model));
      const std::string pp = o->probe.empty() ? signals::sibling_probe_path(path) : o->probe;
      if (pp.empty()) throw InputError("--early-cut needs a confidence probe: pass --probe FILE (kvscope train-confidence)");
      probe = std::make_unique<signals::ProbeFile>(signals::load_probe(pp, model_fingerprint(model)));
      cutter = std::make_unique<reasoning::ProbeEarlyCut>(model, *probe, o->cut_below, o->cut_min_tokens);
      cut_ctx = std::make_unique<Context>(model, o->model.context_params());
      ao.controller = controller;
      ao.max_tokens = o->max_tokens;
      ao.runtime_checks = !o->no_recheck;
      ao.monitor = cutter.get();
    }
    auto ask_early_cut = [&](const tinygsm::Item& it) {
      if (!kv_format) {
        ao.kind = kind;
        ao.budgets = o->reasoning.budgets;
        ao.question_tokens = encode_chat(model, messages_of(it), nullptr);
        ao.render = [&](Mode m) {
          const auto p = reasoning::plan_for_effort(kind, reasoning::effort_for_mode(kind, m), o->reasoning.budgets);
          return encode_chat(model, messages_of(it), &p);
        };
      }
      const auto r = reasoning::generate_adaptive(*cut_ctx, reasoning::tinygsm_question(it), greedy_sampling(), difficulty.features,
                                                  &difficulty.mlp, ao);
      training::EvalAnswer a;
      a.text = r.text, a.content = r.content, a.tokens = r.generated_total, a.stop = r.stop_reason;
      a.reasoning = r.report;
      a.reasoning["estimate_ms"] = r.estimate_ms;
      a.reasoning["initial_mode"] = std::string(reasoning::mode_name(r.initial.mode));
      a.reasoning["final_mode"] = std::string(reasoning::mode_name(r.final_mode));
      a.reasoning["confidence"] = r.initial.confidence;
      return a;
    };
    const auto ask = [&](const tinygsm::Item& it, std::optional<Mode> m) -> training::EvalAnswer {
      if (!m && cutter) return ask_early_cut(it);
      return asker.ask(messages_of(it), reasoning::tinygsm_question(it),
                       m ? serving::reasoning_mode_of(*m) : serving::ReasoningMode::Auto);
    };
    training::TinygsmEvalOptions eo;
    eo.modes = modes;
    eo.with_auto = with_auto;
    eo.answer_in_text = kv_format;  // the embedded model's cue; other formats answer after the think block
    eo.min_confidence = controller.min_confidence;
    if (details) eo.details = &details;
    Progress bar(!o->quiet, o->n, "eval " + o->split + "/" + o->mode);
    const auto t0 = std::chrono::steady_clock::now();
    eo.on_problem = [&](int done, int correct) {
      bar.update(done, correct, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    };
    nlohmann::json per_mode = training::evaluate_tinygsm(items, ask, eo);
    if (with_auto) {
      per_mode["auto"]["difficulty_file"] = difficulty_path;
      if (cutter) per_mode["auto"]["early_cut_below"] = cutter->threshold();
    }

    if (o->json) {
      nlohmann::json out = {{"task", o->task}, {"split", o->split}, {"n", o->n}, {"seed", o->seed}, {"model", path}};
      if (per_mode.size() == 1) {
        for (auto& [k, v] : per_mode.begin().value().items()) out[k] = v;
      } else {
        out["modes"] = per_mode;
      }
      std::printf("%s\n", out.dump().c_str());
      return;
    }
    std::printf("tinygsm %s, n=%d, greedy (%s)\n", o->split.c_str(), o->n, path.c_str());
    std::printf("%-6s %7s", "mode", "all");
    for (int k = tinygsm::kMinSteps; k <= tinygsm::kMaxSteps; ++k) std::printf(" %6d", k);
    std::printf(" %8s %8s %8s\n", "tokens", "wall_s", "speedup");
    for (const char* name : {"fast", "mixed", "slow", "auto"}) {
      if (!per_mode.contains(name)) continue;
      const std::string mname = name;
      const auto& j = per_mode[mname];
      std::printf("%-6s %6.1f%%", mname.c_str(), j["accuracy"].get<double>() * 100);
      for (int k = tinygsm::kMinSteps; k <= tinygsm::kMaxSteps; ++k) {
        const auto key = std::to_string(k);
        if (j["by_steps"].contains(key))
          std::printf(" %5.1f%%", j["by_steps"][key]["accuracy"].get<double>() * 100);
        else
          std::printf(" %6s", "-");
      }
      std::printf(" %8.1f %8.1f", j["mean_tokens"].get<double>(), j["wall_s"].get<double>());
      if (j.contains("speedup_vs_slow"))
        std::printf(" %7.2fx", j["speedup_vs_slow"].get<double>());
      else
        std::printf(" %8s", "-");
      if (j.contains("ece_max_prob"))
        std::printf("  confidence %.3f, ECE %.3f", j["mean_max_prob"].get<double>(), j["ece_max_prob"].get<double>());
      if (j.contains("ece_kv_probe"))
        std::printf("; probe %.3f, ECE %.3f", j["mean_kv_probe"].get<double>(), j["ece_kv_probe"].get<double>());
      std::printf("\n");
    }
    std::printf("wall_s: each mode's own time; the modes run interleaved, problem by problem\n");
    if (per_mode.contains("auto")) {
      const auto& a = per_mode["auto"];
      std::printf("auto: initial modes %s, final %s; %d early answers, %d upgrades, %d retries, %d low-confidence "
                  "fallbacks; estimate %.2f ms/problem\n",
                  a["initial_modes"].dump().c_str(), a["final_modes"].dump().c_str(), a["early_answers"].get<int>(),
                  a["upgrades"].get<int>(), a["retries"].get<int>(), a["low_confidence_fallbacks"].get<int>(),
                  a["mean_estimate_ms"].get<double>());
      if (a.contains("blind_mix_accuracy"))
        std::printf("auto: the best blind mix of fixed modes with auto's mean tokens scores %.1f%%\n",
                    100 * a["blind_mix_accuracy"].get<double>());
      if (a.contains("early_cut_below"))
        std::printf("auto: %d early cuts (probe P(correct) < %.4f)\n", a["early_cuts"].get<int>(),
                    a["early_cut_below"].get<double>());
    }
  });
}

}  // namespace kvscope::cli
