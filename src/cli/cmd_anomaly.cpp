// kvscope kv-profile / eval-anomaly: the KV anomaly detector (signals/kv_profile.h). kv-profile
// builds the reference profile of a model's normal traffic from prompts; eval-anomaly scores
// held-out normal prompts against the project's shifted sets (training/anomaly_sets.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "engine/prefill_tapped.h"
#include "training/prompt_lines.h"
#include "model/fingerprint.h"
#include "signals/confidence_metrics.h"
#include "signals/kv_profile.h"
#include "signals/kv_tap.h"
#include "reasoning/dataset.h"
#include "reasoning/format.h"
#include "training/anomaly_sets.h"
#include "util/error.h"
#include "util/rng.h"

namespace kvscope::cli {

namespace {

// One prompt's prefill (the context is reset first) seen by the profile's taps: its pooled vector
// under `spec` and, with a token model, its largest token distance; with keep_tokens, every token
// vector (to fit a token model).
struct PromptScan {
  std::vector<float> pooled;
  double token_max = 0, count_max = 0;
  int token_pos = -1;
  std::vector<float> token_rows;
  std::vector<int> counts;
  // The user-content part: its tokens, their largest distances (largest first), the farthest's
  // position, and (to fit) their vectors.
  int user_tokens = 0, user_pos = -1;
  std::vector<double> user_top;
  std::vector<float> user_rows;
};

// The taps' models: the all-token model (or, with keep_tokens, keep the token vectors) and the
// user-content model over `spans` (or, with keep_user, keep the user tokens' vectors).
PromptScan scan_prompt(Context& ctx, const signals::ProbeSpec& spec, std::vector<int32_t> ids, const signals::TokenModel* tm,
                       bool keep_tokens, const std::vector<std::pair<int, int>>& spans = {}, const signals::TokenModel* um = nullptr,
                       bool keep_user = false) {
  const auto& m = ctx.model();
  if (ids.size() > static_cast<size_t>(ctx.n_ctx())) ids.resize(ctx.n_ctx());  // long inputs: their head
  const int n = static_cast<int>(ids.size());
  signals::ProbeFeatures tap(m.hparams(), spec, 0, n);
  std::unique_ptr<signals::TokenTap> tok, usr;
  std::vector<KVTap*> taps{&tap};
  if ((tm && !tm->empty()) || keep_tokens) {
    tok = std::make_unique<signals::TokenTap>(m.hparams(), spec.layers, keep_tokens ? nullptr : tm, 0, n);
    taps.push_back(tok.get());
  }
  if ((um && !um->empty()) || keep_user) {
    usr = std::make_unique<signals::TokenTap>(m.hparams(), spec.layers, keep_user ? nullptr : um, spans);
    taps.push_back(usr.get());
  }
  std::unique_ptr<signals::TapFanout> fan;
  if (taps.size() > 1) fan = std::make_unique<signals::TapFanout>(taps, &m);
  prefill_tapped(ctx, ids, fan ? static_cast<KVTap*>(fan.get()) : &tap);
  PromptScan r;
  r.pooled = signals::prompt_vector(tap);
  if (tok) {
    r.token_max = tok->max_distance();
    r.token_pos = tok->argmax();
    r.token_rows = tok->rows();
    r.counts = tok->counts();
    r.count_max = tok->count_score();
  }
  if (usr) {
    r.user_tokens = usr->n_tokens();
    r.user_pos = usr->argmax();
    r.user_top = usr->top();
    r.user_rows = usr->rows();
  }
  return r;
}

// Every prompt of a JSON-lines file, one group per line, as the model is prompted (fmt):
//   "messages": a conversation, rendered by the chat template at each mode's effort;
//   "chat_prompt" (kvscope tinygsm --jsonl): complete prompts of the levels convention, special
//     tokens parsed;
//   "prompt" / "text": on the first reasoner its prompts as they are; on a chat model what a user
//     typed: a user turn rendered at each mode's effort.
// A value is a string or an object of strings (one prompt per mode); renderings that come out the
// same (a model without levels) count once. field "auto": chat models read messages, then
// chat_prompt, prompt, text; the first reasoner prompt, then text.
std::vector<std::vector<training::SetPrompt>> read_prompts(const std::string& path, const std::string& field,
                                                           const training::PromptFormat& fmt) {
  std::vector<std::vector<training::SetPrompt>> out;
  const std::vector<std::string> order =
      field != "auto" ? std::vector<std::string>{field}
      : fmt.chat()    ? std::vector<std::string>{"messages", "chat_prompt", "prompt", "text"}
                      : std::vector<std::string>{"prompt", "text"};
  training::for_each_prompt_line(path, [&](const nlohmann::json& j, const std::string& where) {
    std::vector<training::SetPrompt> g;
    // users: the user messages' contents the text renders (none known for complete prompts).
    auto add = [&](std::string text, const std::vector<std::string>& users) {
      for (const auto& x : g)
        if (x.text == text) return;
      auto ids = fmt.encode(text);
      auto spans = fmt.user_spans(ids, users);
      g.push_back({std::move(text), std::move(ids), std::move(spans)});
    };
    const std::string used = training::first_field(j, order);
    if (used == "messages") {
      const auto msgs = reasoning::parse_chat_messages(j["messages"], where + ": ");
      std::vector<std::string> users;
      for (const auto& x : msgs)
        if (x.role == "user") users.push_back(x.content);
      if (!fmt.chat() && !users.empty()) users.erase(users.begin(), users.end() - 1);  // the first reasoner: the last question
      for (Mode m : {Mode::Fast, Mode::Mixed, Mode::Slow}) add(fmt.render_messages(msgs, m), users);
    } else if (!used.empty()) {
      const bool complete = used == "chat_prompt" || !fmt.chat();
      auto one = [&](const std::string& t) {
        // A complete chat prompt's user turns are not known; the first reasoner's text is the user's.
        if (complete) add(t, fmt.chat() ? std::vector<std::string>{} : std::vector<std::string>{t});
        else
          for (Mode m : {Mode::Fast, Mode::Mixed, Mode::Slow}) add(fmt.render(t, m), {t});
      };
      const auto& p = j[used];
      if (p.is_string()) one(p.get<std::string>());
      else if (p.is_object())
        for (auto& [k, v] : p.items())
          if (v.is_string()) one(v.get<std::string>());
    }
    if (g.empty()) {
      std::string names;
      for (const auto& k : order) names += (names.empty() ? "\"" : ", \"") + k + "\"";
      throw InputError(where + ": needs one of " + names + " (a string or an object of strings; messages: a list of {role, content})");
    }
    out.push_back(std::move(g));
  });
  return out;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(pos);
  const double f = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v.back();
}

}  // namespace

void add_kv_profile_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("kv-profile", "Build the KV anomaly profile of a model's normal prompts");
  struct Opts {
    ModelOpts model;
    std::string data, out, layers = "all", format = "auto", field = "auto";
    double shrink = 0.005, calib = 0.25, q = 0.995, margin = 1.1, token_shrink = 0.005, count_floor = 0.01;
    // The per-token part is opt-in: on the chat reasoner it raised the control-marker AUROC (0.87 ->
    // 0.91) but its count part flagged 1.7% of held-out normal prompts (docs/results/2026-12-05-anomaly.md).
    int clusters = -1, token_sample = 40000, iterations = 8;
    // The user-content part is on by default: on the chat reasoner it lifted the control-marker AUROC
    // to >= 0.95 with no extra false positives (docs/results/2026-12-05-anomaly.md). Models without
    // user turns in the data (complete prompts) need --user-clusters -1.
    int user_clusters = 256, user_topk = 1;
    double marker_weight = 1;
    uint64_t seed = 1;
    bool json = false, quiet = false;
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  cmd->add_option("--data", o->data,
                  "Normal prompts, JSON lines: \"chat_prompt\" (kvscope tinygsm --jsonl, chat models), \"messages\", "
                  "\"prompt\" or \"text\" (a string or an object of strings)")
      ->required();
  cmd->add_option("--prompt-field", o->field,
                  "The field read: auto (chat models: messages, chat_prompt, prompt, text; the first reasoner: prompt, text) "
                  "or one name")
      ->capture_default_str();
  add_reasoning_format_option(cmd, o->format);
  cmd->add_option("--layers", o->layers, "KV layers pooled: all | mid | a-b | a,b,c")->capture_default_str();
  cmd->add_option("--shrink", o->shrink, "Covariance shrinkage toward its diagonal")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_option("--calibration", o->calib, "Share of the lines held out to set the threshold")
      ->check(CLI::Range(0.05, 0.5))->capture_default_str();
  cmd->add_option("--quantile", o->q, "Threshold: this quantile of the held-out scores ...")->check(CLI::Range(0.5, 1.0))->capture_default_str();
  cmd->add_option("--margin", o->margin, "... times this factor")->check(CLI::Range(1.0, 10.0))->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the calibration split")->capture_default_str();
  cmd->add_option("--token-clusters", o->clusters,
                  "Centroids of the per-token model, e.g. 256 (0: its distance is from the mean; -1: no per-token part)")
      ->check(CLI::Range(-1, 65536))->capture_default_str();
  cmd->add_option("--token-sample", o->token_sample, "Tokens of the fitting prompts the per-token model is fitted on (a random sample)")
      ->check(CLI::Range(100, 10000000))->capture_default_str();
  cmd->add_option("--token-iterations", o->iterations, "k-means steps of the per-token model")->check(CLI::Range(0, 1000))->capture_default_str();
  cmd->add_option("--count-floor", o->count_floor,
                  "Variance added to each centroid's count variance (one extra token in a centroid that always "
                  "holds the same count scores 1/sqrt(floor))")
      ->check(CLI::Range(1e-6, 100.0))->capture_default_str();
  cmd->add_option("--token-shrink", o->token_shrink, "Covariance shrinkage of the per-token models")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  auto* user_opt = cmd->add_option("--user-clusters", o->user_clusters,
                  "Centroids of the user-content model: the tokens of the users' own text (the user messages inside the "
                  "rendered prompt), fitted on those tokens alone (0: distance from their mean; -1: no user-content part)")
      ->check(CLI::Range(-1, 65536))->capture_default_str();
  cmd->add_option("--user-topk", o->user_topk, "The user-content part: mean of this many largest user-token distances")
      ->check(CLI::Range(1, signals::TokenTap::kTop))->capture_default_str();
  cmd->add_option("--user-marker-weight", o->marker_weight,
                  "With the user-content part: added to the score per special token (e.g. <|im_start|>, </think>) inside the "
                  "user's text (0: off)")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();
  cmd->add_option("-o,--output", o->out, "Profile file to write")->required();
  cmd->add_flag("--json", o->json, "Print the summary as JSON");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress output");
  cmd->callback([o, user_opt] {
    const std::string path = resolve_model(o->model.path);
    auto model = Model::load(path);
    signals::ProbeSpec spec;
    spec.layers = signals::parse_layers(o->layers, model->hparams().n_layer);
    spec.logits = false;
    const training::PromptFormat fmt(*model, format_named(*model, o->format));
    const auto groups = read_prompts(o->data, o->field, fmt);
    if (groups.size() < 8) throw InputError("kv-profile needs at least 8 lines of prompts");
    Context ctx(*model, o->model.context_params());
    // Calibration lines by a seeded shuffle.
    std::vector<size_t> idx(groups.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    util::SplitMix64 r{o->seed};
    for (size_t i = idx.size() - 1; i > 0; --i) std::swap(idx[i], idx[r.next() % (i + 1)]);
    const size_t n_cal = std::max<size_t>(1, static_cast<size_t>(o->calib * groups.size()));
    std::vector<std::vector<float>> fit, cal;
    const bool tokens = o->clusters >= 0;
    bool user = o->user_clusters >= 0;
    // With a per-token part: the first half of the fitting lines give the token samples, the token
    // models are fitted after them, the other half give the count statistics; the calibration lines
    // come last and are scored by every part.
    const size_t n_fit = idx.size() - n_cal, n_tok_lines = tokens || user ? std::max<size_t>(1, n_fit / 2) : n_fit;
    std::vector<float> tok_fit, user_fit;  // reservoir samples of the first fitting lines' (user) tokens
    std::vector<std::vector<int>> counts;
    std::vector<double> ts, cc, us;  // calibration prompts: largest token distance, count part, user part
    std::vector<int> ms;             // calibration prompts: special tokens in the user's text
    std::vector<std::vector<double>> us_k(signals::TokenTap::kTop);  // the user part for every top-k (info: choosing k)
    size_t tok_seen = 0, user_seen = 0;
    util::SplitMix64 rs{o->seed ^ 0x746f6b656e73ull}, ru{o->seed ^ 0x75736572ull};
    const size_t tdim = spec.layers.size() * static_cast<size_t>(model->hparams().head_dim);
    size_t total = 0;
    for (const auto& g : groups) total += g.size();
    Progress bar(!o->quiet, static_cast<int>(total), "kv-profile prompts");
    const auto t0 = std::chrono::steady_clock::now();
    int done = 0;
    signals::KVProfile prof;
    double token_secs = 0;
    auto reservoir = [&](const std::vector<float>& rows, std::vector<float>& sample, size_t& seen, util::SplitMix64& rng) {
      for (size_t t = 0; t * tdim < rows.size(); ++t, ++seen) {
        const float* y = rows.data() + t * tdim;
        const size_t cap = static_cast<size_t>(o->token_sample);
        if (seen < cap) sample.insert(sample.end(), y, y + tdim);
        else if (const size_t j = rng.next() % (seen + 1); j < cap) std::copy(y, y + tdim, sample.begin() + j * tdim);
      }
    };
    auto pass = [&](size_t from, size_t to, int stage) {
      for (size_t k = from; k < to; ++k)
        for (const auto& p : groups[idx[(k + n_cal) % idx.size()]]) {  // fitting lines first, calibration last
          auto sc = scan_prompt(ctx, spec, p.tokens, stage > 0 && tokens ? &prof.token : nullptr, stage == 0 && tokens, p.user_spans,
                                stage == 2 && user ? &prof.user : nullptr, stage == 0 && user);
          (stage == 2 ? cal : fit).push_back(std::move(sc.pooled));
          if (stage == 0) {
            reservoir(sc.token_rows, tok_fit, tok_seen, rs);
            reservoir(sc.user_rows, user_fit, user_seen, ru);
          }
          if (stage == 1 && tokens) counts.push_back(sc.counts);
          if (stage == 2 && tokens) ts.push_back(sc.token_max), cc.push_back(sc.count_max);
          if (stage == 2 && user) {
            ms.push_back(signals::special_tokens_in(model->tokenizer(), p.tokens, p.user_spans));
            double u = 0;
            for (int i = 0; i < o->user_topk && i < static_cast<int>(sc.user_top.size()); ++i) u += sc.user_top[i];
            us.push_back(sc.user_top.empty() ? 0.0 : u / std::min<int>(o->user_topk, static_cast<int>(sc.user_top.size())));
            double a = 0;
            for (int i = 0; i < signals::TokenTap::kTop; ++i) {
              if (i < static_cast<int>(sc.user_top.size())) a += sc.user_top[i];
              const int nk = std::min<int>(i + 1, static_cast<int>(sc.user_top.size()));
              us_k[i].push_back(nk ? a / nk : 0.0);
            }
          }
          ++done;
          bar.update(done, done, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
    };
    pass(0, n_tok_lines, 0);
    if (tokens) {
      const auto t1 = std::chrono::steady_clock::now();
      prof.token = signals::fit_token_model(tok_fit, static_cast<int>(tdim), o->token_shrink, o->clusters, o->iterations, o->seed);
      token_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    }
    if (user && user_fit.size() < 2 * tdim && user_opt->count() == 0) {
      // The default part needs user turns; data of complete prompts builds the profile without it.
      if (!o->quiet) std::fprintf(stderr, "no user text in the data (complete prompts): the profile has no user-content part\n");
      user = false;
    }
    if (user) {
      if (user_fit.size() < 2 * tdim)
        throw InputError("kv-profile --user-clusters: the data holds no user text to fit on (give \"messages\", \"prompt\" or "
                         "\"text\" lines: the user turns of complete \"chat_prompt\" lines are not known)");
      const auto t1 = std::chrono::steady_clock::now();
      prof.user = signals::fit_token_model(user_fit, static_cast<int>(tdim), o->token_shrink, o->user_clusters, o->iterations, o->seed + 1);
      prof.user_topk = o->user_topk;
      prof.marker_weight = o->marker_weight;
      token_secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    }
    pass(n_tok_lines, n_fit, 1);
    if (tokens) signals::fit_token_counts(prof.token, counts, o->count_floor);
    pass(n_fit, idx.size(), 2);
    if (!o->quiet) std::fprintf(stderr, "\n");
    {
      auto pooled = signals::fit_profile(fit, o->shrink);
      prof.dim = pooled.dim;
      prof.mean = std::move(pooled.mean);
      prof.whiten = std::move(pooled.whiten);
    }
    prof.model_fingerprint = model_fingerprint(*model);
    prof.layers = spec.layers;
    std::vector<double> cs, combined;
    for (const auto& x : cal) cs.push_back(prof.score(x));
    if (tokens || user) prof.pooled_ref = quantile(cs, o->q);
    if (user) {
      prof.user_ref = std::max(quantile(us, o->q), 1e-6);
      if (!o->quiet)
        std::fprintf(stderr, "user-content model: %zu tokens (of %zu), %d centroids, top-%d mean\n", user_fit.size() / tdim, user_seen,
                     prof.user.k, prof.user_topk);
    }
    if (tokens) {
      prof.token_ref = quantile(ts, o->q);
      prof.count_ref = std::max(quantile(cc, o->q), 1e-6);
      if (!o->quiet)
        std::fprintf(stderr, "token model: %zu tokens (of %zu), %d centroids, fitted in %.1f s; counts from %zu prompts\n",
                     tok_fit.size() / tdim, tok_seen, prof.token.k, token_secs, counts.size());
    }
    for (size_t i = 0; i < cs.size(); ++i)
      combined.push_back(prof.combine(cs[i], tokens ? ts[i] : 0, tokens ? cc[i] : 0, user ? us[i] : 0, user ? ms[i] : 0));
    prof.threshold = quantile(combined, o->q) * o->margin;
    std::vector<double> fs;
    for (const auto& x : fit) fs.push_back(prof.score(x));
    nlohmann::json info = {{"data", o->data},       {"format", reasoning::format_name(fmt.kind())},
                           {"prompts_fit", fit.size()},     {"prompts_calibration", cal.size()},
                           {"layers", spec.layers}, {"dim", prof.dim},               {"shrink", o->shrink},
                           {"quantile", o->q},      {"margin", o->margin},          {"threshold", prof.threshold},
                           {"calibration_median", quantile(combined, 0.5)}, {"pooled_fit_median", quantile(fs, 0.5)},
                           {"calibration_max", *std::max_element(combined.begin(), combined.end())}};
    if (tokens)
      info["token_model"] = {{"tokens_fit", tok_fit.size() / tdim}, {"tokens_seen", tok_seen}, {"clusters", prof.token.k},
                             {"iterations", o->iterations}, {"shrink", o->token_shrink}, {"dim", tdim},
                             {"count_floor", o->count_floor}, {"count_prompts", counts.size()},
                             {"pooled_ref", prof.pooled_ref}, {"token_ref", prof.token_ref}, {"count_ref", prof.count_ref}};
    if (user)
      info["user_model"] = {{"tokens_fit", user_fit.size() / tdim}, {"tokens_seen", user_seen}, {"clusters", prof.user.k},
                            {"topk", prof.user_topk}, {"pooled_ref", prof.pooled_ref}, {"user_ref", prof.user_ref},
                            {"marker_weight", prof.marker_weight},
                            {"calibration_prompts_with_markers", std::count_if(ms.begin(), ms.end(), [](int m) { return m > 0; })}};
    if (user) {
      nlohmann::json refs = nlohmann::json::array();
      for (const auto& v : us_k) refs.push_back(quantile(v, o->q));
      info["user_model"]["ref_by_topk"] = refs;  // the calibration quantile of the user part for k = 1..kTop
    }
    prof.info = info.dump();
    signals::save_profile(o->out, prof);
    if (o->json) {
      std::printf("%s\n", info.dump().c_str());
      return;
    }
    std::printf("KV profile -> %s\n  %zu prompts fitted, %zu held out; %d dimensions (layers %s)\n", o->out.c_str(),
                fit.size(), cal.size(), prof.dim, o->layers.c_str());
    if (tokens)
      std::printf("  per-token model: %zu tokens, %d centroids; parts divided by their held-out q%.3f (pooled %.3f, token %.3f, counts %.3f)\n",
                  tok_fit.size() / tdim, prof.token.k, o->q, prof.pooled_ref, prof.token_ref, prof.count_ref);
    if (user)
      std::printf("  user-content model: %zu user tokens, %d centroids, top-%d mean; held-out q%.3f: pooled %.3f, user %.3f\n",
                  user_fit.size() / tdim, prof.user.k, prof.user_topk, o->q, prof.pooled_ref, prof.user_ref);
    std::printf("  held-out score median %.3f, max %.3f; default threshold %.3f (q%.3f x %.2f)\n", quantile(combined, 0.5),
                *std::max_element(combined.begin(), combined.end()), prof.threshold, o->q, o->margin);
  });
}

void add_eval_anomaly_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval-anomaly", "Measure KV anomaly detection: held-out normal prompts vs shifted sets");
  struct Opts {
    ModelOpts model;
    std::string profile, split = "test", sets, format = "auto", dump;
    int n = 500;
    uint64_t seed = 99;
    bool json = false, quiet = false;
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  cmd->add_option("--profile", o->profile, "KV profile (default: <model>.kvprofile.bin beside the model)");
  cmd->add_option("--split", o->split, "tinygsm split of the normal prompts (not the profile's)")->capture_default_str();
  cmd->add_option("--n", o->n, "Prompts per set")->check(CLI::Range(10, 1 << 20))->capture_default_str();
  cmd->add_option("--sets", o->sets, "Shifted sets (default: all): soup,repeated,other_domain,injection,control");
  cmd->add_option("--seed", o->seed, "Generator seed")->capture_default_str();
  add_reasoning_format_option(cmd, o->format);
  cmd->add_option("--dump", o->dump, "Write every scored prompt (set, text, score) to this JSON-lines file");
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress output");
  cmd->callback([o] {
    const std::string path = resolve_model(o->model.path);
    auto model = Model::load(path);
    const std::string pp = o->profile.empty() ? signals::sibling_profile_path(path) : o->profile;
    if (pp.empty()) throw InputError("no KV profile beside the model; give --profile or build one with kvscope kv-profile");
    const auto prof = signals::load_profile(pp, model_fingerprint(*model));
    const training::PromptFormat fmt(*model, format_named(*model, o->format));
    auto split = tinygsm::parse_split(o->split);
    if (!split) throw InputError("unknown split '" + o->split + "' (train, validation, test, heldout)");
    std::vector<std::string> sets;
    if (o->sets.empty()) sets = training::shifted_set_names();
    else {
      size_t i = 0;
      while (i <= o->sets.size()) {
        size_t j = o->sets.find(',', i);
        if (j == std::string::npos) j = o->sets.size();
        if (j > i) sets.push_back(o->sets.substr(i, j - i));
        i = j + 1;
      }
    }
    Context ctx(*model, o->model.context_params());
    const auto spec = prof.spec();
    std::ofstream dump;
    open_details(dump, o->dump);
    // Per prompt: the score, its pooled part and its token part (as divided in the score).
    struct Scored {
      std::vector<double> score, pooled, token, count, user;
    };
    double secs = 0;
    size_t n_scored = 0;
    auto score_all = [&](const std::string& set, const std::vector<training::SetPrompt>& ps) {
      Scored s;
      for (const auto& p : ps) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto sc = scan_prompt(ctx, spec, p.tokens, &prof.token, false, p.user_spans, &prof.user, false);
        const double pooled = prof.score(sc.pooled);
        double user = 0;
        const int nu = std::min<int>(prof.user_topk, static_cast<int>(sc.user_top.size()));
        for (int i = 0; i < nu; ++i) user += sc.user_top[i] / nu;
        const int markers = prof.user.empty() ? 0 : signals::special_tokens_in(model->tokenizer(), p.tokens, p.user_spans);
        s.score.push_back(prof.combine(pooled, sc.token_max, sc.count_max, user, markers));
        secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ++n_scored;
        s.pooled.push_back(pooled / prof.pooled_ref);
        s.token.push_back(sc.token_max / prof.token_ref);
        s.count.push_back(sc.count_max / prof.count_ref);
        s.user.push_back(user / prof.user_ref);
        if (dump) {
          nlohmann::json j = {{"set", set}, {"text", p.text}, {"tokens", p.tokens.size()}, {"score", s.score.back()}, {"pooled", pooled}};
          if (!prof.token.empty()) {
            j["token_max"] = sc.token_max;
            j["count_max"] = sc.count_max;
            j["token_pos"] = sc.token_pos;
            if (sc.token_pos >= 0 && sc.token_pos < static_cast<int>(p.tokens.size()))
              j["token_piece"] = model->tokenizer().token_to_piece(p.tokens[sc.token_pos]);
          }
          if (!prof.user.empty()) {
            j["user_tokens"] = sc.user_tokens;
            j["user_top"] = sc.user_top;
            j["user_pos"] = sc.user_pos;
            j["user_markers"] = markers;
            if (sc.user_pos >= 0 && sc.user_pos < static_cast<int>(p.tokens.size()))
              j["user_piece"] = model->tokenizer().token_to_piece(p.tokens[sc.user_pos]);
          }
          dump << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';  // soup may hold stray bytes
        }
      }
      return s;
    };
    const auto normal_s = score_all("normal", training::normal_prompts(fmt, *split, static_cast<size_t>(o->n), o->seed));
    const auto& normal = normal_s.score;
    int fp = 0;
    for (double s : normal) fp += s > prof.threshold;
    nlohmann::json out = {{"model", path},
                          {"profile", pp},
                          {"format", reasoning::format_name(fmt.kind())},
                          {"threshold", prof.threshold},
                          {"n", o->n},
                          {"normal_split", o->split},
                          {"normal_fpr", double(fp) / normal.size()},
                          {"normal_median", quantile(normal, 0.5)},
                          {"token_model", !prof.token.empty()},
                          {"user_model", !prof.user.empty()}};
    nlohmann::json per = nlohmann::json::object();
    for (const auto& name : sets) {
      const auto shs = score_all(name, training::shifted_prompts(fmt, name, static_cast<size_t>(o->n), o->seed, *split));
      const auto& sh = shs.score;
      auto auroc_of = [&](const std::vector<double>& a, const std::vector<double>& b) {
        std::vector<double> s = a;
        s.insert(s.end(), b.begin(), b.end());
        std::vector<bool> pos(a.size(), false);
        pos.resize(s.size(), true);
        return signals::auroc(s, pos);
      };
      int tp = 0;
      for (double x : sh) tp += x > prof.threshold;
      per[name] = {{"auroc", auroc_of(normal, sh)}, {"tpr_at_threshold", double(tp) / sh.size()},
                   {"median", quantile(sh, 0.5)}};
      if (prof.has_parts()) per[name]["auroc_pooled"] = auroc_of(normal_s.pooled, shs.pooled);
      if (!prof.token.empty()) {
        per[name]["auroc_token"] = auroc_of(normal_s.token, shs.token);
        per[name]["auroc_count"] = auroc_of(normal_s.count, shs.count);
      }
      if (!prof.user.empty()) per[name]["auroc_user"] = auroc_of(normal_s.user, shs.user);
      if (!o->quiet) std::fprintf(stderr, "%s done\n", name.c_str());
    }
    out["sets"] = per;
    out["ms_per_prompt"] = 1e3 * secs / std::max<size_t>(1, n_scored);
    if (o->json) {
      std::printf("%s\n", out.dump().c_str());
      return;
    }
    std::printf("KV anomaly detection (%s), %d prompts per set; threshold %.3f; prompts %s\n", pp.c_str(), o->n, prof.threshold,
                fmt.chat() ? ("rendered by the chat template (reasoning format " + std::string(reasoning::format_name(fmt.kind())) + ")").c_str()
                           : "in the first reasoner's format");
    std::printf("held-out normal (%s): median score %.3f, false-positive rate at the threshold %.2f%%\n", o->split.c_str(),
                quantile(normal, 0.5), 100.0 * fp / normal.size());
    const bool parts = prof.has_parts(), tparts = !prof.token.empty(), uparts = !prof.user.empty();
    std::printf("%-14s %8s %10s %8s%s%s%s\n", "shifted set", "AUROC", "detected", "median", parts ? "   pooled" : "",
                tparts ? "    token   counts" : "", uparts ? "     user" : "");
    for (auto& [k, v] : per.items()) {
      std::printf("%-14s %8.4f %9.1f%% %8.3f", k.c_str(), v["auroc"].get<double>(), 100 * v["tpr_at_threshold"].get<double>(),
                  v["median"].get<double>());
      if (parts) std::printf(" %8.4f", v["auroc_pooled"].get<double>());
      if (tparts) std::printf(" %8.4f %8.4f", v["auroc_token"].get<double>(), v["auroc_count"].get<double>());
      if (uparts) std::printf(" %8.4f", v["auroc_user"].get<double>());
      std::printf("\n");
    }
    std::printf("%s%.2f ms per prompt (prefill with the taps and scoring)\n", parts ? "(pooled, token, counts, user: the AUROC of each part alone)\n" : "",
                out["ms_per_prompt"].get<double>());
  });
}

}  // namespace kvscope::cli
