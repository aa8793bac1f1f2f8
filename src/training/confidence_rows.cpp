// The train-confidence workflow (confidence_rows.h).
#include "training/confidence_rows.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/mode.h"
#include "engine/prefill_tapped.h"
#include "training/prompt_lines.h"
#include "reasoning/dataset.h"
#include "signals/confidence_metrics.h"
#include "signals/kv_tap.h"
#include "signals/scored_generation.h"
#include "tinygsm/tinygsm.h"
#include "util/error.h"

namespace kvscope::training {

namespace {

std::vector<Mode> modes_of(const std::vector<std::string>& modes) {
  std::vector<Mode> out;
  for (const auto& m : modes) {
    const auto pm = parse_mode(m);
    if (!pm) throw InputError("unknown mode '" + m + "' in --modes (fast, mixed, slow)");
    out.push_back(*pm);
  }
  return out;
}

// The prompts of one line's field `used` (p its value) at each mode.
void add_prompts(LabelledPrompts& l, const nlohmann::json& p, const std::string& used, const std::vector<std::string>& modes,
                 const std::vector<Mode>& mode_list, const std::vector<std::string>& order, const PromptFormat& fmt,
                 const std::string& where) {
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
}

// A feature-file line, checked to be one of this model's.
nlohmann::json parse_row_line(const std::string& line, const std::string& file, uint64_t fingerprint) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("x")) throw InputError("'" + file + "' is not a feature file");
  if (j.value("fingerprint", std::string()) != std::to_string(fingerprint))
    throw InputError("feature file '" + file + "' was collected with another model");
  return j;
}

// The rows of one answer: the probe's features after 25, 50 and 75% of its tokens and at its end.
void add_answer_rows(std::vector<ProbeRow>& rows, const std::vector<std::vector<float>>& pf, int group,
                     const std::string& mode, int ok, const signals::PromptPrior* prior) {
  const size_t n = pf.size() - 1;  // per sampled token, then the final vector
  std::vector<std::pair<double, const std::vector<float>*>> pick;
  for (double s : {0.25, 0.5, 0.75})
    if (n > 0) pick.push_back({s, &pf[std::clamp<size_t>(static_cast<size_t>(std::ceil(s * n)), 1, n) - 1]});
  pick.push_back({1.0, &pf.back()});
  for (auto& [s, xp] : pick) {
    ProbeRow row{group, mode, s, ok, *xp, {}, 0};
    if (prior) {  // the prior's values sit before the count: kept apart
      const auto b = row.x.end() - 1 - signals::kProbePriorFeatures;
      row.prior.assign(b, row.x.end() - 1);
      row.x.erase(b, row.x.end() - 1);
      row.prior_id = prior->id();
    }
    rows.push_back(std::move(row));
  }
}

}  // namespace

std::vector<LabelledPrompts> read_labelled(const std::string& path, const std::vector<std::string>& modes,
                                           const std::string& field, const PromptFormat& fmt) {
  const std::vector<std::string> order = field != "auto" ? std::vector<std::string>{field}
                                         : fmt.chat()    ? std::vector<std::string>{"messages", "chat_prompt", "prompt"}
                                                         : std::vector<std::string>{"prompt"};
  const std::vector<Mode> mode_list = modes_of(modes);
  std::vector<LabelledPrompts> out;
  for_each_prompt_line(path, [&](const nlohmann::json& j, const std::string& where) {
    if (!j.contains("answer") || !j["answer"].is_number_integer()) throw InputError(where + ": needs an integer \"answer\"");
    LabelledPrompts l;
    l.answer = j["answer"].get<int>();
    const std::string used = first_field(j, order);
    add_prompts(l, used.empty() ? nlohmann::json() : j[used], used, modes, mode_list, order, fmt, where);
    out.push_back(std::move(l));
  });
  return out;
}

CollectedRows collect_probe_rows(const Model& model, const PromptFormat& fmt, const std::vector<LabelledPrompts>& data,
                                 const CollectOptions& o) {
  const HParams& hp = model.hparams();
  Engine eng(model, signals::scored_engine_params(model, o.context));
  const int limit = eng.max_seq_tokens();
  signals::SignalOptions so;
  so.hidden = false;
  so.probe_features_trace = true;
  so.probe_spec.layers = signals::parse_layers("all", hp.n_layer);
  so.probe_spec.prompt = true;
  so.probe_spec.last = true;
  so.probe_spec.numbers = true;
  so.probe_spec.prior = o.prior;  // when the model has an estimator: kept apart in the rows
  SamplingParams greedy;
  greedy.temperature = 0.0f, greedy.top_k = 0, greedy.top_p = 1.0f, greedy.min_p = 0.0f;
  CollectedRows out;
  for (size_t i = 0; i < data.size(); ++i) {
    for (const auto& [mode, text] : data[i].prompts) {
      const auto ids = fmt.encode(text);
      if (static_cast<int>(ids.size()) >= limit) continue;
      const int room = std::min(o.max_tokens, limit - static_cast<int>(ids.size()));
      const auto r = signals::generate_scored(eng, ids, greedy, room, so);
      const auto got = tinygsm::parse_answer(answer_text(fmt.plan(parse_mode(mode).value_or(Mode::Slow)), r.gen.text));
      const int ok = got && *got == data[i].answer;
      ++out.answers;
      out.right += ok;
      add_answer_rows(out.rows, r.signals.probe_features, static_cast<int>(i), mode, ok, o.prior.get());
      if (o.on_answer) o.on_answer(out.answers, out.right);
    }
  }
  return out;
}

void write_probe_row(std::ostream& out, const ProbeRow& r, uint64_t fingerprint) {
  nlohmann::json j = {{"g", r.group}, {"mode", r.mode}, {"share", r.share}, {"ok", r.ok}, {"x", r.x},
                      {"fingerprint", std::to_string(fingerprint)}};
  if (!r.prior.empty()) j["prior"] = r.prior, j["prior_id"] = std::to_string(r.prior_id);
  out << j.dump() << '\n';
}

std::vector<ProbeRow> read_probe_rows(const std::string& file, uint64_t fingerprint, const std::vector<std::string>& modes,
                                      const signals::PromptPrior* prior, int group_offset) {
  std::vector<ProbeRow> out;
  std::ifstream in(file);
  if (!in) throw InputError("cannot open feature file '" + file + "'");
  std::string line;
  while (std::getline(in, line)) {
    const auto j = parse_row_line(line, file, fingerprint);
    const std::string mode = j["mode"].get<std::string>();
    if (!mode.empty() && std::find(modes.begin(), modes.end(), mode) == modes.end()) continue;
    ProbeRow r{j["g"].get<int>() + group_offset, mode, j["share"].get<double>(), j["ok"].get<int>(),
               j["x"].get<std::vector<float>>(), {}, 0};
    if (j.contains("prior")) {
      r.prior = j["prior"].get<std::vector<float>>();
      r.prior_id = std::stoull(j.value("prior_id", std::string("0")));
    }
    if (prior && r.prior_id != prior->id())
      throw InputError("feature file '" + file + "' " +
                       (r.prior.empty() ? std::string("holds no prompt prior (collected without a difficulty estimator); "
                                                      "add it with --add-prior or collect again")
                                        : std::string("was collected with another difficulty estimator than the prompt "
                                                      "prior's; add the prior again with --add-prior")));
    out.push_back(std::move(r));
  }
  if (out.empty()) throw InputError("feature file '" + file + "' holds no rows of the modes asked for");
  return out;
}

std::map<std::pair<int, std::string>, std::vector<float>> prompt_priors(
    const Model& model, const PromptFormat& fmt, const std::vector<LabelledPrompts>& data,
    const std::shared_ptr<const signals::PromptPrior>& prior, const ContextParams& cp,
    const std::function<void(int problem)>& on_problem) {
  signals::ProbeSpec ps;
  ps.kv = false;
  ps.logits = false;
  ps.prior = prior;
  Context ctx(model, cp);
  std::map<std::pair<int, std::string>, std::vector<float>> priors;
  for (size_t i = 0; i < data.size(); ++i) {
    for (const auto& [mode, text] : data[i].prompts) {
      const auto ids = fmt.encode(text);
      if (static_cast<int>(ids.size()) >= ctx.n_ctx()) continue;
      signals::ProbeFeatures pf(model.hparams(), ps, static_cast<int>(ids.size()));
      prefill_tapped(ctx, ids, &pf);
      priors[{static_cast<int>(i), mode}] = pf.prior_features();
    }
    if (on_problem) on_problem(static_cast<int>(i));
  }
  return priors;
}

size_t add_prior_to_rows(const std::string& in_file, std::ostream& out,
                         const std::map<std::pair<int, std::string>, std::vector<float>>& priors, uint64_t fingerprint,
                         uint64_t prior_id) {
  std::ifstream in(in_file);
  if (!in) throw InputError("cannot open feature file '" + in_file + "'");
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    auto j = parse_row_line(line, in_file, fingerprint);
    const auto it = priors.find({j["g"].get<int>(), j["mode"].get<std::string>()});
    if (it == priors.end())
      throw InputError("feature file '" + in_file + "': a row of line " + std::to_string(j["g"].get<int>() + 1) + " mode '" +
                       j["mode"].get<std::string>() + "' has no prompt in --data (not the file it was collected from?)");
    j["prior"] = it->second;
    j["prior_id"] = std::to_string(prior_id);
    out << j.dump() << '\n';
    ++n;
  }
  return n;
}

std::vector<float> probe_inputs(const std::vector<float>& all, const signals::ProbeSpec& spec, int head_dim,
                                const std::vector<float>& prior) {
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

ProbeFit fit_probe(const std::vector<ProbeRow>& rows, const signals::ProbeSpec& spec, int head_dim, const ProbeFitOptions& o) {
  std::vector<std::vector<float>> X;
  std::vector<int> y, g;
  for (const auto& r : rows) {
    if (o.final_only && r.share < 1) continue;
    X.push_back(probe_inputs(r.x, spec, head_dim, r.prior));
    y.push_back(r.ok);
    g.push_back(r.group);  // one group per problem: its answers in every mode stay on one side of the split
  }
  const int pos = static_cast<int>(std::count(y.begin(), y.end(), 1));
  if (pos == 0 || pos == static_cast<int>(y.size()))
    throw InputError("the answers are all right or all wrong: nothing to learn a confidence from");
  ProbeFit fit;
  fit.mlp = signals::ProbeMLP(static_cast<int>(X[0].size()), o.hidden, o.seed);
  fit.report = train_probe(fit.mlp, X, y, g, o.train);
  fit.n_rows = X.size();
  // Early-cut threshold: at most cut_fpr of the right answers' partial (25-75%) scores fall below.
  std::vector<double> right_partial;
  for (size_t i = 0, k = 0; i < rows.size(); ++i) {
    if (o.final_only && rows[i].share < 1) continue;
    if (rows[i].share < 1 && rows[i].ok) right_partial.push_back(fit.mlp.score(X[k]));
    ++k;
  }
  if (!right_partial.empty() && o.cut_fpr > 0) {
    std::sort(right_partial.begin(), right_partial.end());
    fit.cut_below = right_partial[std::min(right_partial.size() - 1, static_cast<size_t>(o.cut_fpr * right_partial.size()))];
  }
  return fit;
}

std::vector<ProbeModeTest> test_probe(const signals::ProbeMLP& mlp, const signals::ProbeSpec& spec, int head_dim,
                                      const std::vector<ProbeRow>& rows, const std::vector<std::string>& modes) {
  const int per = 6 * head_dim + 4;  // one layer's collected features
  std::vector<ProbeModeTest> out;
  for (const auto& m : modes) {
    std::map<double, std::pair<std::vector<double>, std::vector<bool>>> by_share;
    std::vector<double> mp;
    std::vector<bool> mp_ok;
    for (const auto& r : rows) {
      if (r.mode != m) continue;
      auto& [s, k] = by_share[r.share];
      s.push_back(mlp.score(probe_inputs(r.x, spec, head_dim, r.prior)));
      k.push_back(r.ok);
      if (r.share == 1) {
        const size_t nl = (r.x.size() - signals::kProbeLogitFeatures - 1) / per;
        mp.push_back(r.x[nl * per]);
        mp_ok.push_back(r.ok);
      }
    }
    if (mp.empty()) continue;
    ProbeModeTest t{m, mp.size(), signals::auroc(mp, mp_ok), signals::expected_calibration_error(mp, mp_ok), 0, {}};
    for (auto& [sh, v] : by_share) t.probe_by_share[static_cast<int>(sh * 100)] = signals::auroc(v.first, v.second);
    if (const auto f = by_share.find(1.0); f != by_share.end())
      t.probe_ece = signals::expected_calibration_error(f->second.first, f->second.second);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace kvscope::training
