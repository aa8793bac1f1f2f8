// kvscope run: generate a continuation of a prompt (or a chat reply with --chat).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "engine/engine.h"
#include "reasoning/format.h"
#include "server/server.h"
#include "serving/job.h"
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


// The reasoning of a completion's text (a completion is not split by the API): the embedded
// model's mode line and cue, or a think block the plan opened.
reasoning::Splitter::Delta split_text(reasoning::FormatKind kind, bool open, const std::string& text) {
  reasoning::Splitter split(kind, open);
  auto d = split.push(text);
  const auto f = split.flush();
  return {d.reasoning + f.reasoning, d.content + f.content};
}

std::string effort_of_mode(reasoning::FormatKind kind, const nlohmann::json& mode) {
  const auto m = mode.is_string() ? parse_mode(mode.get<std::string>()) : std::nullopt;
  return m ? std::string(effort_name(reasoning::effort_for_mode(kind, *m))) : "?";
}

// Everything but --session-file runs the server's pipeline in-process (server::Server::run): the
// request `serve` gets for the same prompt and flags, so the text, the reasoning trace and the
// signals are the server's.
void run_local(const Opts& o) {
  server::ServerOptions so = local_server_options(resolve_model(o.model.path), o.model, o.ro);
  so.signals = o.json && !o.no_signals;
  so.signal_layers = o.signal_layers;
  so.signal_pre_rope = o.pre_rope;
  so.signal_trace = o.signal_trace;
  server::Server srv(so);
  srv.load();
  const Model& model = *srv.model();
  const reasoning::FormatKind kind = srv.reasoning_format();
  const reasoning::Format& fm = reasoning::format_of(kind);
  // kvscope's modes as mode lines (the embedded model, or a model without a reasoning format).
  const bool mode_lines = fm.mode_line() || !fm.reasons();

  std::optional<Effort> effort;
  if (!o.effort.empty()) effort = parse_effort(o.effort);
  std::optional<serving::ReasoningMode> mode;
  if (!o.reasoning.empty()) mode = serving::parse_reasoning_mode(o.reasoning);
  const bool reasons = mode || effort || o.budget_set;
  const bool wants_auto = (mode && *mode == serving::ReasoningMode::Auto) || effort == Effort::Auto;
  if (wants_auto && difficulty_path_for(so.model_path, o.ro.difficulty).empty()) {
    if (mode) throw InputError("--reasoning auto needs a difficulty estimator: pass --difficulty FILE (kvscope train-difficulty)");
    throw InputError("--reasoning-effort auto needs a difficulty estimator for this model (reasoning format '" +
                     std::string(fm.name()) + "'): pass --difficulty FILE (kvscope train-difficulty --data FILE.jsonl)");
  }
  bool chat = o.chat;
  // The embedded model has no chat template: its chat is the bare question, as it was trained.
  if (reasons && fm.mode_line() && model.chat_template().empty()) chat = false;
  // A model trained with levels in the system message only knows its chat turns.
  if (reasons && fm.level_after_conversation() && !model.chat_template().empty()) chat = true;
  // Where a completion's text starts (a chat response is split by the server).
  bool open = false;
  if (reasons && !chat && fm.reasons() && !fm.mode_line() && !wants_auto) {
    reasoning::PlanRequest pr;
    pr.effort = effort;
    if (o.budget_set) pr.budget = o.budget;
    if (mode) pr.effort = serving::fixed_mode(*mode) ? fm.effort_for_mode(*serving::fixed_mode(*mode)) : Effort::Auto;
    open = reasoning::plan(kind, pr, o.ro.budgets).thinking;  // InputError names the format
  }

  server::GenRequest g;
  g.endpoint = chat ? server::Endpoint::Chat : server::Endpoint::Completions;
  if (chat) {
    if (!o.system.empty()) g.messages.push_back({"system", o.system});
    g.messages.push_back({"user", o.prompt});
  } else {
    g.prompt = o.prompt;
  }
  g.sampling = o.sampling.params();
  g.max_tokens = std::max(1, o.n_predict);
  g.fit_context = true;
  g.effort = effort;
  g.reasoning = mode;
  if (o.budget_set) g.thinking_budget = o.budget;

  // Text as it comes: the reasoning on stderr, the answer on stdout.
  std::optional<reasoning::Splitter> live;
  if (open || (reasons && !chat && fm.reasons() && !fm.mode_line())) live.emplace(kind, open);
  auto show = [&](const std::string& rs, const std::string& cs) {
    std::fwrite(rs.data(), 1, rs.size(), stderr);
    std::fwrite(cs.data(), 1, cs.size(), stdout);
    std::fflush(stdout);
  };
  auto on_event = [&](const serving::Event& ev) {
    if (o.json) return;
    if (const auto* r = std::get_if<serving::ReasoningDelta>(&ev)) {
      show(r->text, "");
    } else if (const auto* c = std::get_if<serving::ContentDelta>(&ev)) {
      if (!live) return show("", c->text);
      const auto d = live->push(c->text);
      show(d.reasoning, d.content);
    }
  };
  const auto r = srv.run(std::move(g), on_event);
  if (live && !o.json) {
    const auto d = live->flush();
    show(d.reasoning, d.content);
  }

  const nlohmann::json& body = r.body;
  const nlohmann::json& choice = body["choices"][0];
  const nlohmann::json ext = body.value("kvscope", nlohmann::json::object());
  const nlohmann::json rep = ext.value("reasoning", nlohmann::json::object());
  const nlohmann::json usage = body.value("usage", nlohmann::json::object());
  std::string text, reasoning_text, content_text;
  if (chat) {
    const nlohmann::json& m = choice["message"];
    reasoning_text = m.value("reasoning_content", nlohmann::json()).is_string() ? m["reasoning_content"].get<std::string>() : "";
    content_text = m.value("content", nlohmann::json()).is_string() ? m["content"].get<std::string>() : "";
    text = r.text;
  } else {
    text = choice.value("text", "");
    if (r.adaptive && mode_lines) {
      const auto d = split_text(reasoning::FormatKind::Kvscope, true, text);
      reasoning_text = d.reasoning, content_text = d.content;
    } else if (reasons && fm.reasons()) {
      const auto d = split_text(kind, open, text);
      reasoning_text = d.reasoning, content_text = d.content;
    } else {
      content_text = text;
    }
  }
  const int reasoning_tokens = usage.contains("completion_tokens_details")
                                   ? usage["completion_tokens_details"].value("reasoning_tokens", 0)
                                   : rep.value("reasoning_tokens", 0);
  const std::string stop = std::string(stop_reason_name(r.stop_reason));
  const double gen_ms = r.total_ms - r.first_output_ms;
  if (o.json) {
    nlohmann::json j = {{"text", text},
                        {"tokens", r.tokens},
                        {"prompt_tokens", r.prompt_tokens},
                        {"stop_reason", stop},
                        {"finish_reason", choice.value("finish_reason", nlohmann::json())},
                        {"prompt_ms", r.first_output_ms},
                        {"gen_ms", gen_ms},
                        {"kvscope", ext}};
    if (reasons) {
      j["reasoning_content"] = reasoning_text;
      j["content"] = content_text;
      j["reasoning_tokens"] = reasoning_tokens;
    }
    if (ext.contains("signals")) j["signals"] = ext["signals"];
    std::printf("%s\n", j.dump().c_str());
    return;
  }
  if (r.adaptive) {
    // Shown once the run ended: an upgrade or a retry discards what an attempt wrote.
    if (mode_lines && !chat) {
      std::printf("%s\n", text.c_str());
    } else {
      std::fwrite(reasoning_text.data(), 1, reasoning_text.size(), stderr);
      std::printf("%s\n", content_text.c_str());
    }
    std::fflush(stdout);  // the text's line is out before the statistics' line on stderr
    const nlohmann::json final_mode = rep.contains("final_mode") ? rep["final_mode"] : rep.value("mode", nlohmann::json());
    const int generated = rep.value("generated_total", 0);
    if (mode_lines) {
      std::fprintf(stderr, "[reasoning %s: %s -> %s (%s); %d tokens generated, stop: %s]\n", rep.value("requested", "?").c_str(),
                   rep.value("initial_mode", "?").c_str(), final_mode.is_string() ? final_mode.get<std::string>().c_str() : "?",
                   rep.value("reason", "").c_str(), generated, stop.c_str());
    } else {
      std::fprintf(stderr, "[reasoning auto on %s: %s -> %s (%s); %d tokens generated, stop: %s]\n", std::string(fm.name()).c_str(),
                   effort_of_mode(kind, rep.value("initial_mode", nlohmann::json())).c_str(),
                   effort_of_mode(kind, final_mode).c_str(), rep.value("reason", "").c_str(), generated, stop.c_str());
    }
    return;
  }
  // The statistics go on their own line of stderr: stdout's newline is flushed first (a pipe
  // buffers it, and the two streams would interleave as "Answer: 86[41 prompt tokens ...").
  std::printf("\n");
  std::fflush(stdout);
  if (reasons && rep.contains("format")) {
    std::fprintf(stderr, "[reasoning %s on %s: %d reasoning tokens%s, %zu generated, stop: %s]\n",
                 rep.value("effort", "?").c_str(), rep.value("format", "?").c_str(), reasoning_tokens,
                 rep.value("budget_cut", false) ? " (budget cut)" : "", r.tokens.size(), stop.c_str());
  } else {
    std::fprintf(stderr, "[%d prompt tokens in %.1f ms, %zu generated in %.1f ms: %.1f tok/s, stop: %s]\n", r.prompt_tokens,
                 r.first_output_ms, r.tokens.size(), gen_ms, gen_ms > 0 ? r.tokens.size() * 1000.0 / gen_ms : 0.0, stop.c_str());
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
    if (!o->reasoning.empty() && (!o->effort.empty() || o->budget_set))
      throw InputError("give one of --reasoning and --reasoning-effort");
    if (!o->reasoning.empty() && o->chat) throw InputError("--reasoning takes a plain question, not --chat");
    if (!o->prompt_file.empty()) {
      std::ifstream f(o->prompt_file, std::ios::binary);
      if (!f) throw InputError("cannot read the prompt file " + o->prompt_file);
      o->prompt.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    if (o->prompt.empty()) throw InputError("empty prompt (give -p TEXT)");
    if (!tok::is_valid_utf8(o->prompt)) throw InputError("prompt is not valid UTF-8");
    const bool reasons = !o->reasoning.empty() || !o->effort.empty() || o->budget_set;
    if (!o->session_file.empty()) {
      if (reasons) throw InputError("--session-file runs a plain prompt: drop --reasoning, --reasoning-effort and --reasoning-budget");
      const std::string path = resolve_model(o->model.path);
      auto model = Model::load(path, o->model.threads);
      std::vector<int32_t> ids;
      if (o->chat) {
        std::vector<tok::ChatMessage> msgs;
        if (!o->system.empty()) msgs.push_back({"system", o->system});
        msgs.push_back({"user", o->prompt});
        ids = encode_chat(*model, msgs);
      } else {
        ids = model->tokenizer().encode(o->prompt, true, false);
      }
      run_with_session(*model, *o, ids, o->sampling.params());
      return;
    }
    run_local(*o);
  });
}

}  // namespace kvscope::cli
