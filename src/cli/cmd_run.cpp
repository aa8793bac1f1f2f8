// kvscope run: generate a continuation of a prompt (or a chat reply with --chat).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "engine/context.h"
#include "engine/engine.h"
#include "model/fingerprint.h"
#include "reasoning/adaptive_generate.h"
#include "reasoning/planned_generate.h"
#include "serving/job.h"
#include "signals/scored_generation.h"
#include "tokenizer/chat_template.h"
#include "util/error.h"

namespace kvscope::cli {

namespace {

struct Opts {
  ModelOpts model;
  SamplingOpts sampling;
  std::string prompt, system, prompt_file, session_file;
  int n_predict = 128;
  bool chat = false, json = false, no_signals = false, signal_trace = false, pre_rope = signals::kDefaultPreRope;
  std::string signal_layers = "mid";
  std::string reasoning;
  std::string effort;      // --reasoning-effort
  int budget = -1;         // --reasoning-budget (given: budget_set)
  bool budget_set = false;
  ReasoningOpts ro;
};

// --session-file: the engine's sessions. A prompt that begins with the saved history computes only
// its new tokens; the history (prompt + generated) is saved for the next run. A damaged file or
// one of another model or KV types is an error naming the problem (nothing is overwritten then).
void run_with_session(const Model& model, const Opts& o, const std::vector<int32_t>& ids, const SamplingParams& sp) {
  EngineParams ep;
  ep.n_threads = o.model.threads;
  ep.n_ctx = o.model.ctx;
  ep.kv_type = o.model.kv_types();
  ep.max_seqs = 1;
  ep.swa_full = true;  // a session file holds every position of every layer
  Engine eng(model, ep);
  const std::string sid = "run";
  if (std::filesystem::exists(o.session_file)) {
    try {
      eng.restore_session(sid, o.session_file);
    } catch (const InputError& e) {
      throw InputError("--session-file " + o.session_file + ": " + e.what());
    }
  }
  if (static_cast<int>(ids.size()) >= eng.max_seq_tokens())
    throw LimitError("prompt too long: " + std::to_string(ids.size()) + " tokens exceed the context of " +
                     std::to_string(eng.max_seq_tokens()));
  Request r;
  r.prompt = ids;
  r.sampling = sp;
  r.max_tokens = std::max(1, std::min(o.n_predict, eng.max_seq_tokens() - static_cast<int>(ids.size())));
  r.session_id = sid;
  tok::StreamDecoder dec(model.tokenizer());
  std::string text;
  r.on_token = [&](const TokenEvent& e) {
    std::string piece = e.finished ? dec.flush() : e.token >= 0 ? dec.push(e.token) : std::string();
    text += piece;
    if (!o.json && !piece.empty()) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  const RequestId id = eng.submit(std::move(r));
  while (eng.step()) {
  }
  const Completion c = eng.wait(id);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const std::string tmp = o.session_file + ".tmp";
  eng.save_session(sid, tmp);
  std::filesystem::rename(tmp, o.session_file);
  if (o.json) {
    nlohmann::json j = {{"text", text},          {"tokens", c.tokens}, {"prompt_tokens", c.n_prompt},
                        {"prompt_tokens_cached", c.n_cached}, {"stop_reason", stop_reason_name(c.stop_reason)},
                        {"ms", ms}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("\n");
    std::fprintf(stderr, "[%d prompt tokens (%d from %s), %zu generated in %.1f ms, stop: %s]\n", c.n_prompt, c.n_cached,
                 o.session_file.c_str(), c.tokens.size(), ms, std::string(stop_reason_name(c.stop_reason)).c_str());
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt");
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  add_sampling_options(cmd, o->sampling);
  cmd->add_option("-p,--prompt", o->prompt, "Prompt text");
  cmd->add_option("-f,--file", o->prompt_file, "Read the prompt from this file (as llama.cpp's -f)")->excludes("--prompt");
  cmd->add_option("--session-file", o->session_file,
                  "Load the KV of the prompt's earlier part from this file when it exists, save it after (as "
                  "llama.cpp's --prompt-cache)");
  cmd->add_option("-n,--n-predict", o->n_predict, "Tokens to generate")->check(CLI::Range(0, 1 << 20));
  cmd->add_flag("--chat", o->chat, "Wrap the prompt in the model's chat template as a user message");
  cmd->add_option("--system", o->system, "System message (with --chat)");
  cmd->add_flag("--json", o->json, "Print one JSON object instead of streaming text (with a \"signals\" object)");
  cmd->add_flag("--no-signals", o->no_signals, "Leave the confidence signals out of --json");
  cmd->add_option("--signal-layers", o->signal_layers, "Layers of the KV signals: mid | all | a-b | a,b,c")
      ->capture_default_str();
  cmd->add_flag("--pre-rope,!--post-rope", o->pre_rope, "KV signals from K before RoPE");
  cmd->add_flag("--signal-trace", o->signal_trace, "Add each token's dr and dtheta to the signals");
  cmd->add_option("--reasoning", o->reasoning,
                  "auto | fast | mixed | slow: the prompt is a question; the mode line is added (auto: chosen from the "
                  "question's KV by the difficulty estimator)")
      ->check(CLI::IsMember({"auto", "fast", "mixed", "slow"}));
  cmd->add_option("--reasoning-effort", o->effort,
                  "none | minimal | low | medium | high | auto, on the model's reasoning format (think formats: "
                  "none = no thinking, low/medium = thinking under a token budget, high = unbounded)")
      ->check(CLI::IsMember({"none", "minimal", "low", "medium", "high", "auto"}));
  auto* bopt = cmd->add_option("--reasoning-budget", o->budget,
                               "Thinking tokens before the engine writes </think> itself (-1: unbounded, 0: no thinking)");
  add_reasoning_options(cmd, o->ro);
  cmd->callback([o, bopt] {
    o->budget_set = bopt->count() > 0;
    if (o->budget_set && o->budget < -1)
      throw InputError("--reasoning-budget must be -1 (unbounded), 0 (no thinking) or a positive number of tokens (got " +
                       std::to_string(o->budget) + ")");
    // The flags' spellings (checked by CLI11) become enums here, once.
    // adaptive: an adaptive run in `mode` (--reasoning, or an effort on the embedded model).
    bool adaptive = !o->reasoning.empty();
    serving::ReasoningMode mode = serving::ReasoningMode::Auto;
    std::optional<Effort> effort;
    if (adaptive) mode = serving::parse_reasoning_mode(o->reasoning).value_or(serving::ReasoningMode::Auto);
    if (!o->effort.empty()) effort = parse_effort(o->effort);
    const std::string path = resolve_model(o->model.path);
    auto model = Model::load(path, o->model.threads);
    SamplingParams sp = o->sampling.params();
    // --reasoning's modes on a format with efforts are its efforts for them (effort_for_mode; levels:
    // low, medium, high); a model without a format gets the mode lines, as the first reasoner did.
    if (const auto kind = o->ro.format_of(*model);
        adaptive && reasoning::format_of(kind).reasons() && !reasoning::format_of(kind).mode_line()) {
      if (effort) throw InputError("give one of --reasoning and --reasoning-effort");
      const auto fixed = serving::fixed_mode(mode);
      effort = fixed ? reasoning::effort_for_mode(kind, *fixed) : Effort::Auto;
      adaptive = false;
    }
    if (!o->prompt_file.empty()) {
      std::ifstream f(o->prompt_file, std::ios::binary);
      if (!f) throw InputError("cannot read the prompt file " + o->prompt_file);
      o->prompt.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    if (o->prompt.empty()) throw InputError("empty prompt (give -p TEXT)");
    if (!tok::is_valid_utf8(o->prompt)) throw InputError("prompt is not valid UTF-8");
    if (effort || o->budget_set) {
      if (adaptive) throw InputError("give one of --reasoning and --reasoning-effort");
      const reasoning::FormatKind kind = o->ro.format_of(*model);
      reasoning::PlanRequest pr;
      pr.effort = effort;
      if (o->budget_set) pr.budget = o->budget;
      const reasoning::ReasoningPlan plan = reasoning::plan(kind, pr, o->ro.budgets);  // InputError names the format
      const reasoning::Format& fm = plan.fmt();
      // The embedded model has no chat template: its chat is the bare question, as it was trained.
      if (fm.mode_line() && o->chat && model->chat_template().empty()) o->chat = false;
      // A model trained with levels in the system message only knows its chat turns.
      if (fm.level_after_conversation() && !model->chat_template().empty()) o->chat = true;
      if (fm.mode_line() && !o->chat) {
        // The embedded model's levels are its mode lines: the adaptive run below carries them.
        mode = pr.effort == Effort::Auto ? serving::ReasoningMode::Auto : serving::reasoning_mode_of(plan.mode);
        adaptive = true;
      } else {
        std::vector<tok::ChatMessage> msgs;
        if (!o->system.empty()) msgs.push_back({"system", o->system});
        msgs.push_back({"user", o->prompt});
        // A prompt with the think block (or level) of a plan, as the server renders it.
        auto render = [&](const reasoning::ReasoningPlan* p) {
          if (o->chat) return encode_chat(*model, msgs, p);
          auto ids = model->tokenizer().encode(o->prompt, true, false);
          if (p) {
            const auto sfx = model->tokenizer().encode(p->prompt_suffix(), false, true);
            ids.insert(ids.end(), sfx.begin(), sfx.end());
          }
          return ids;
        };
        if (pr.effort == Effort::Auto) {
          // The adaptive run on this format: the estimator picks an effort from the prompt's KV.
          const std::string dpath = difficulty_path_for(path, o->ro.difficulty);
          if (dpath.empty())
            throw InputError("--reasoning-effort auto needs a difficulty estimator for this model (reasoning format '" +
                             std::string(reasoning::format_name(kind)) +
                             "'): pass --difficulty FILE (kvscope train-difficulty --data FILE.jsonl)");
          const auto diff = reasoning::load_difficulty(dpath, model_fingerprint(*model));
          reasoning::AdaptiveOptions ao;
          ao.controller = o->ro.controller();
          ao.max_tokens = std::max(1, o->n_predict);
          ao.kind = kind;
          ao.budgets = o->ro.budgets;
          ao.question_tokens = render(nullptr);
          ao.render = [&](reasoning::Mode m) {
            const auto p = reasoning::plan_for_effort(kind, reasoning::effort_for_mode(kind, m), o->ro.budgets);
            return render(&p);
          };
          Context ctx(*model, o->model.context_params());
          const auto r = reasoning::generate_adaptive(ctx, o->prompt, sp, diff.features, &diff.mlp, ao);
          if (o->json) {
            nlohmann::json rep = r.report;
            rep["effort"] = std::string(effort_name(reasoning::effort_for_mode(kind, r.final_mode)));
            rep["reasoning_tokens"] = r.reasoning_tokens;
            nlohmann::json j = {{"text", r.text},          {"reasoning_content", r.reasoning}, {"content", r.content},
                                {"tokens", r.tokens},      {"reasoning_tokens", r.reasoning_tokens},
                                {"stop_reason", stop_reason_name(r.stop_reason)}, {"kvscope", {{"reasoning", rep}}}};
            std::printf("%s\n", j.dump().c_str());
          } else {
            std::fwrite(r.reasoning.data(), 1, r.reasoning.size(), stderr);
            std::printf("%s\n", r.content.c_str());
            std::fflush(stdout);
            std::fprintf(stderr, "[reasoning auto on %s: %s -> %s (%s); %d tokens generated, stop: %s]\n",
                         std::string(reasoning::format_name(kind)).c_str(),
                         std::string(effort_name(reasoning::effort_for_mode(kind, r.initial.mode))).c_str(),
                         std::string(effort_name(reasoning::effort_for_mode(kind, r.final_mode))).c_str(),
                         r.initial.reason.c_str(), r.generated_total, std::string(stop_reason_name(r.stop_reason)).c_str());
          }
          return;
        }
        std::vector<int32_t> ids;
        ids = render(&plan);
        Context ctx(*model, o->model.context_params());
        const auto r = reasoning::generate_planned(ctx, ids, plan, sp, std::max(1, o->n_predict),
                                                   [&](const std::string& rs, const std::string& cs) {
                                                     if (o->json) return;
                                                     // The reasoning on stderr, the answer on stdout.
                                                     std::fwrite(rs.data(), 1, rs.size(), stderr);
                                                     std::fwrite(cs.data(), 1, cs.size(), stdout);
                                                     std::fflush(stdout);
                                                   });
        if (o->json) {
          nlohmann::json rep = {{"format", std::string(reasoning::format_name(kind))},
                                {"effort", std::string(effort_name(plan.effort))},
                                {"level", plan.level_name()},
                                {"thinking", plan.thinking},
                                {"budget", plan.budget},
                                {"budget_cut", r.budget_cut},
                                {"reasoning_tokens", r.reasoning_tokens}};
          nlohmann::json j = {{"text", r.text},           {"reasoning_content", r.reasoning},
                              {"content", r.content},     {"tokens", r.tokens},
                              {"prompt_tokens", ids.size()}, {"reasoning_tokens", r.reasoning_tokens},
                              {"stop_reason", stop_reason_name(r.stop_reason)}, {"kvscope", {{"reasoning", rep}}}};
          std::printf("%s\n", j.dump().c_str());
        } else {
          std::printf("\n");
          std::fflush(stdout);
          std::fprintf(stderr, "[reasoning %s on %s: %d reasoning tokens%s, %zu generated, stop: %s]\n",
                       std::string(effort_name(plan.effort)).c_str(), std::string(reasoning::format_name(kind)).c_str(),
                       r.reasoning_tokens, r.budget_cut ? " (budget cut)" : "", r.tokens.size(),
                       std::string(stop_reason_name(r.stop_reason)).c_str());
        }
        return;
      }
    }
    if (adaptive) {
      const serving::ReasoningMode asked = mode;
      if (o->chat) throw InputError("--reasoning takes a plain question, not --chat");
      reasoning::AdaptiveOptions ao;
      ao.controller = o->ro.controller();
      ao.max_tokens = std::max(1, o->n_predict);
      reasoning::DifficultyFile diff;
      const reasoning::DifficultyMLP* mlp = nullptr;
      if (asked == serving::ReasoningMode::Auto) {
        const std::string dpath = difficulty_path_for(path, o->ro.difficulty);
        if (dpath.empty())
          throw InputError("--reasoning auto needs a difficulty estimator: pass --difficulty FILE (kvscope train-difficulty)");
        diff = reasoning::load_difficulty(dpath, model_fingerprint(*model));
        mlp = &diff.mlp;
      } else {
        ao.forced = serving::fixed_mode(asked);
      }
      Context ctx(*model, o->model.context_params());
      const auto r = reasoning::generate_adaptive(ctx, o->prompt, sp, diff.features, mlp, ao);
      if (o->json) {
        nlohmann::json j = {{"text", r.text}, {"tokens", r.tokens}, {"stop_reason", stop_reason_name(r.stop_reason)},
                            {"kvscope", {{"reasoning", r.report}}}};
        // The mode line and the reasoning apart from the answer, as the server's chat shows them.
        reasoning::Splitter split(reasoning::FormatKind::Kvscope, true);
        auto d = split.push(r.text);
        const auto f = split.flush();
        j["reasoning_content"] = d.reasoning + f.reasoning;
        j["content"] = d.content + f.content;
        std::printf("%s\n", j.dump().c_str());
      } else {
        std::printf("%s\n", r.text.c_str());
        std::fflush(stdout);  // the text's line is out before the statistics' line on stderr
        std::fprintf(stderr, "[reasoning %s: %s -> %s (%s); %d tokens generated, stop: %s]\n",
                     std::string(serving::reasoning_mode_name(asked)).c_str(),
                     std::string(reasoning::mode_name(r.initial.mode)).c_str(),
                     std::string(reasoning::mode_name(r.final_mode)).c_str(), r.initial.reason.c_str(),
                     r.generated_total, std::string(stop_reason_name(r.stop_reason)).c_str());
      }
      return;
    }
    std::vector<int32_t> ids;
    if (o->chat) {
      std::vector<tok::ChatMessage> msgs;
      if (!o->system.empty()) msgs.push_back({"system", o->system});
      msgs.push_back({"user", o->prompt});
      ids = encode_chat(*model, msgs);
    } else {
      ids = model->tokenizer().encode(o->prompt, true, false);
    }
    if (!o->session_file.empty()) {
      run_with_session(*model, *o, ids, sp);
      return;
    }
    Context ctx(*model, o->model.context_params());
    if (static_cast<int>(ids.size()) > ctx.n_ctx())
      throw LimitError("prompt too long: " + std::to_string(ids.size()) + " tokens exceed the context of " +
                       std::to_string(ctx.n_ctx()));
    auto stream = [&](int32_t, const std::string& piece) {
      if (!o->json) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
      }
      return true;
    };
    const bool with_signals = o->json && !o->no_signals;
    signals::ScoredResult scored;
    if (with_signals) {
      signals::SignalOptions so;
      so.layers = o->signal_layers;
      so.pre_rope = o->pre_rope;
      so.trace = o->signal_trace;
      scored = signals::generate_scored(ctx, ids, sp, o->n_predict, so, stream);
    } else {
      scored.gen = generate(ctx, ids, sp, o->n_predict, stream);
    }
    const GenerateResult& r = scored.gen;
    if (o->json) {
      nlohmann::json j = {{"text", r.text}, {"tokens", r.tokens}, {"prompt_tokens", r.n_prompt},
                          {"stop_reason", stop_reason_name(r.stop_reason)}, {"prompt_ms", r.prompt_ms}, {"gen_ms", r.gen_ms}};
      if (with_signals) j["signals"] = scored.signals.to_json();
      std::printf("%s\n", j.dump().c_str());
    } else {
      // The statistics go on their own line of stderr: stdout's newline is flushed first (a pipe
      // buffers it, and the two streams would interleave as "Answer: 86[41 prompt tokens ...").
      std::printf("\n");
      std::fflush(stdout);
      std::fprintf(stderr, "[%d prompt tokens in %.1f ms, %zu generated in %.1f ms: %.1f tok/s, stop: %s]\n", r.n_prompt,
                   r.prompt_ms, r.tokens.size(), r.gen_ms, r.gen_ms > 0 ? r.tokens.size() * 1000.0 / r.gen_ms : 0.0,
                   std::string(stop_reason_name(r.stop_reason)).c_str());
    }
  });
}

}  // namespace kvscope::cli
