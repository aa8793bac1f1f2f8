#include "cli/options.h"

#include "reasoning/difficulty_mlp.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <string>

#include "util/error.h"

namespace kvscope::cli {

void add_model_options(CLI::App* cmd, ModelOpts& o) {
  cmd->add_option("-m,--model", o.path, "GGUF model file (default: the embedded model)");
  cmd->add_option("-t,--threads", o.threads, "Threads (0: all cores)")->check(CLI::Range(0, 1024));
  cmd->add_option("-c,--ctx-size", o.ctx, "Context size (0: the model's)")->check(CLI::Range(0, 1 << 20));
  cmd->add_option("-b,--batch-size", o.batch, "Prompt tokens per forward pass")->check(CLI::Range(1, 4096));
  cmd->add_flag("--swa-full", o.swa_full,
                "Keep every position of sliding-window layers (gemma) instead of releasing blocks that left the window");
  const std::string types = std::string("KV cache element type: ") + kv_type_names();
  cmd->add_option("--kv-type", o.kv_type, "KV cache element type for K and V alike (" + std::string(kv_type_names()) + ")");
  cmd->add_option("--cache-type-k", o.cache_type_k, types + " (K)")->capture_default_str();
  cmd->add_option("--cache-type-v", o.cache_type_v, types + " (V)")->capture_default_str();
  cmd->add_option("--kv-layer-types", o.kv_layer_types,
                  "Per-layer KV types overriding the above, e.g. \"0-3:f16,4-11:int4\" or \"2:int8/int4\" (K/V), "
                  "or @FILE (a kv-calibrate map)");
}

KVCacheTypes ModelOpts::kv_types() const {
  KVCacheTypes t(kv_type_from_name(kv_type.empty() ? cache_type_k : kv_type),
                 kv_type_from_name(kv_type.empty() ? cache_type_v : kv_type));
  if (!kv_layer_types.empty()) {
    std::string spec = kv_layer_types;
    if (spec[0] == '@') {
      std::ifstream f(spec.substr(1));
      if (!f) throw InputError("--kv-layer-types: cannot read " + spec.substr(1));
      std::string line;
      spec.clear();
      while (std::getline(f, line))
        if (!line.empty() && line[0] != '#') spec += (spec.empty() ? "" : ",") + line;
    }
    t.layers = parse_kv_layer_types(spec);
  }
  return t;
}

void add_sampling_options(CLI::App* cmd, SamplingOpts& o) {
  cmd->add_option("--temp", o.temp, "Temperature (0: greedy)");
  cmd->add_option("--top-k", o.top_k, "Top-k (0: off)");
  cmd->add_option("--top-p", o.top_p, "Top-p (1: off)");
  cmd->add_option("--min-p", o.min_p, "Min-p (0: off)");
  cmd->add_option("--repeat-penalty", o.repeat_penalty, "Repetition penalty (1: off)");
  cmd->add_option("--repeat-last-n", o.repeat_last_n, "Penalty window (-1: all)");
  cmd->add_option("--presence-penalty", o.presence, "Presence penalty");
  cmd->add_option("--frequency-penalty", o.frequency, "Frequency penalty");
  cmd->add_option("-s,--seed", o.seed, "Random seed");
  cmd->add_option("-l,--logit-bias", o.logit_bias,
                  "Add BIAS to a token's logit, as TOKEN_ID(+/-)BIAS (e.g. 15043+1, 15043-inf bans it); repeatable");
}

namespace {

// "15043+1.5", "15043-1", "15043-inf": the id, then the signed bias.
std::pair<int32_t, float> parse_logit_bias(const std::string& s) {
  const size_t at = s.find_first_of("+-", 1);
  auto bad = [&]() { return InputError("--logit-bias '" + s + "': expected TOKEN_ID(+/-)BIAS, e.g. 15043+1 or 15043-inf"); };
  if (at == std::string::npos || at == 0) throw bad();
  const std::string id = s.substr(0, at), b = s.substr(at + 1);
  if (id.find_first_not_of("0123456789") != std::string::npos || id.size() > 9 || b.empty()) throw bad();
  float v;
  if (b == "inf") {
    v = std::numeric_limits<float>::infinity();
  } else {
    size_t used = 0;
    try {
      v = std::stof(b, &used);
    } catch (const std::exception&) {
      throw bad();
    }
    if (used != b.size() || !std::isfinite(v)) throw bad();
  }
  return {static_cast<int32_t>(std::stol(id)), s[at] == '-' ? -v : v};
}

}  // namespace

SamplingParams SamplingOpts::params() const {
  SamplingParams p;
  p.temperature = temp;
  p.top_k = top_k;
  p.top_p = top_p;
  p.min_p = min_p;
  p.repeat_penalty = repeat_penalty;
  p.penalty_last_n = repeat_last_n;
  p.presence_penalty = presence;
  p.frequency_penalty = frequency;
  p.seed = seed;
  for (const auto& b : logit_bias) p.logit_bias.push_back(parse_logit_bias(b));
  p.validate();
  return p;
}

reasoning::ControllerConfig ReasoningOpts::controller() const {
  reasoning::ControllerConfig c = cfg;
  c.early_answer = (cfg.early_answer || early_answer) && !no_early_answer;
  c.upgrade = cfg.upgrade && !no_upgrade;
  c.validate();
  return c;
}

void add_reasoning_options(CLI::App* cmd, ReasoningOpts& o) {
  const char* g = "Adaptive reasoning";
  cmd->add_option("--difficulty", o.difficulty, "Difficulty estimator file (default: <model>.difficulty.bin)")->group(g);
  cmd->add_option("--fast-threshold", o.cfg.fast_at_most, "d at or below this answers directly")->capture_default_str()->group(g);
  cmd->add_option("--slow-threshold", o.cfg.slow_above, "d above this reasons in full")->capture_default_str()->group(g);
  cmd->add_option("--min-confidence", o.cfg.min_confidence, "Below this estimator confidence, use slow")
      ->capture_default_str()->group(g);
  cmd->add_option("--recheck-every", o.cfg.check_every, "Re-estimate d every N generated tokens")->capture_default_str()->group(g);
  cmd->add_option("--early-drop", o.cfg.drop, "Answer early when d falls by this fraction")->capture_default_str()->group(g);
  cmd->add_option("--upgrade-jump", o.cfg.jump, "Restart slower when d rises by this fraction")->capture_default_str()->group(g);
  cmd->add_option("--cap-fast", o.cfg.cap_fast, "Token cap in fast mode")->capture_default_str()->group(g);
  cmd->add_option("--cap-mixed", o.cfg.cap_mixed, "Token cap in mixed mode")->capture_default_str()->group(g);
  cmd->add_option("--cap-slow", o.cfg.cap_slow, "Token cap in slow mode")->capture_default_str()->group(g);
  cmd->add_flag("--early-answer", o.early_answer, "Cut reasoning short (force the answer) when d falls into the fast band")->group(g);
  cmd->add_flag("--no-early-answer", o.no_early_answer, "Never cut reasoning short (the default)")->group(g);
  cmd->add_flag("--no-upgrade", o.no_upgrade, "Never restart in a slower mode")->group(g);
  add_reasoning_format_option(cmd, o.format)->group(g);
  cmd->add_option("--think-budget-low", o.budgets.low, "Thinking tokens of reasoning effort low (think formats)")
      ->capture_default_str()->group(g)->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--think-budget-medium", o.budgets.medium, "Thinking tokens of reasoning effort medium (think formats)")
      ->capture_default_str()->group(g)->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--retry-below", o.cfg.retry_below,
                  "Retry a fast or mixed answer in the next slower mode when its mean token probability is below "
                  "this (0: never)")
      ->capture_default_str()->group(g);
}

CLI::Option* add_reasoning_format_option(CLI::App* cmd, std::string& format) {
  return cmd
      ->add_option("--reasoning-format", format,
                   "How the model reasons: auto (detected from its chat template and vocabulary) | none | think | qwen3 | "
                   "deepseek-r1 | gpt-oss | levels | kvscope")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "none", "think", "qwen3", "deepseek-r1", "deepseek", "gpt-oss", "levels", "kvscope"}));
}

reasoning::FormatKind format_named(const Model& m, const std::string& name) {
  if (name == "auto") return reasoning::detect_format(m);
  const auto k = reasoning::parse_format(name);
  if (!k) throw InputError("unknown reasoning format '" + name + "'");
  return *k;
}

reasoning::FormatKind ReasoningOpts::format_of(const Model& m) const { return format_named(m, format); }

std::string difficulty_path_for(const std::string& model_path, const std::string& given) {
  return given.empty() ? reasoning::sibling_difficulty_path(model_path) : given;
}

SamplingParams greedy_sampling() {
  SamplingParams sp;
  sp.temperature = 0.0f;
  sp.top_k = 0;
  sp.top_p = 1.0f;
  sp.min_p = 0.0f;
  return sp;
}

void open_details(std::ofstream& f, const std::string& path) {
  if (path.empty()) return;
  f.open(path, std::ios::binary);
  if (!f) throw InputError("cannot write " + path);
}

std::vector<int32_t> encode_chat(const Model& model, const std::vector<tok::ChatMessage>& msgs,
                                 const reasoning::ReasoningPlan* plan) {
  return reasoning::encode_rendered(model, reasoning::render_chat(model, msgs, plan));
}

}  // namespace kvscope::cli

namespace kvscope::cli {

server::ServerOptions local_server_options(const std::string& model_path, const ModelOpts& mo, const ReasoningOpts& ro) {
  server::ServerOptions so;
  so.model_path = model_path;
  so.engine.n_threads = mo.threads;
  so.engine.n_ctx = mo.ctx;
  so.engine.kv_type = mo.kv_types();  // InputError names a bad type or map before loading
  so.engine.max_batch_tokens = std::max(1, mo.batch);
  so.engine.max_seqs = 1;
  so.engine.swa_full = mo.swa_full;
  so.kv_for_context = true;
  so.webui = false;
  so.signals = false;
  so.difficulty_path = ro.difficulty;
  if (ro.format != "auto") so.reasoning_format_name = ro.format;
  so.effort_budgets = ro.budgets;
  so.controller = ro.controller();
  return so;
}

}  // namespace kvscope::cli
