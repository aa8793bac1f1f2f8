#include "training/tinygsm_eval.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "signals/confidence_metrics.h"

namespace kvscope::training {

namespace {

struct ModeRun {
  explicit ModeRun(std::string n) : name(std::move(n)) {}
  std::string name;
  Tally all;
  std::map<int, Tally> by_steps;
  long prompt_tokens = 0;
  double seconds = 0;
  std::vector<double> max_prob, kv_probe;   // per answer that reported it
  std::vector<bool> max_prob_ok, kv_probe_ok;

  void add(const tinygsm::Item& it, bool ok, const EvalAnswer& a) {
    for (Tally* t : {&all, &by_steps[it.steps]}) {
      t->n += 1;
      t->correct += ok;
      t->tokens += a.tokens;
    }
    prompt_tokens += a.prompt_tokens;
    if (a.max_prob >= 0) max_prob.push_back(a.max_prob), max_prob_ok.push_back(ok);
    if (a.kv_probe >= 0) kv_probe.push_back(a.kv_probe), kv_probe_ok.push_back(ok);
  }

  nlohmann::json json() const {
    nlohmann::json j = all.json();
    j["mode"] = name;
    j["wall_s"] = seconds;
    j["gen_tok_s"] = seconds > 0 ? all.tokens / seconds : 0.0;
    nlohmann::json bs = nlohmann::json::object();
    for (const auto& [k, t] : by_steps) bs[std::to_string(k)] = t.json();
    j["by_steps"] = bs;
    auto mean = [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += x;
      return v.empty() ? 0.0 : s / static_cast<double>(v.size());
    };
    if (!max_prob.empty()) {
      j["mean_max_prob"] = mean(max_prob);
      j["ece_max_prob"] = signals::expected_calibration_error(max_prob, max_prob_ok);
    }
    if (!kv_probe.empty()) {  // the answer confidence the web chat shows (signals.kv_probe)
      j["mean_kv_probe"] = mean(kv_probe);
      j["ece_kv_probe"] = signals::expected_calibration_error(kv_probe, kv_probe_ok);
    }
    return j;
  }
};

}  // namespace

nlohmann::json evaluate_tinygsm(const std::vector<tinygsm::Item>& items, const AskFn& ask, const TinygsmEvalOptions& o) {
  using clock = std::chrono::steady_clock;
  auto seconds_since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
  std::vector<ModeRun> runs;
  for (Mode m : o.modes) runs.emplace_back(std::string(mode_name(m)));
  ModeRun auto_run("auto");
  std::map<std::string, int> initial, final_mode;
  int early = 0, upgrades = 0, retries = 0, early_cuts = 0, fallbacks = 0;
  double estimate_ms = 0;

  auto answer = [&](ModeRun& mr, const tinygsm::Item& it, std::optional<Mode> m) {
    const auto t = clock::now();
    const EvalAnswer a = ask(it, m);
    mr.seconds += seconds_since(t);
    const auto got = tinygsm::parse_answer(o.answer_in_text ? a.text : a.content);
    const bool ok = got && *got == it.answer;
    mr.add(it, ok, a);
    if (o.details) {
      nlohmann::json d = {{"index", it.index},   {"mode", mr.name},  {"steps", it.steps},
                          {"answer", it.answer}, {"correct", ok},    {"tokens", a.tokens},
                          {"output", a.text},    {"stop", stop_reason_name(a.stop)}, {"question", it.question}};
      if (got) d["parsed"] = *got;
      if (a.max_prob >= 0) d["max_prob"] = a.max_prob;
      if (a.kv_probe >= 0) d["kv_probe"] = a.kv_probe;
      if (!m) d["kvscope"] = a.reasoning;
      *o.details << d.dump() << '\n';
    }
    return a;
  };
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& it = items[i];
    for (size_t k = 0; k < o.modes.size(); ++k) answer(runs[k], it, o.modes[k]);
    if (o.with_auto) {
      const EvalAnswer a = answer(auto_run, it, std::nullopt);
      const nlohmann::json& rep = a.reasoning;
      initial[rep.value("initial_mode", "?")]++;
      final_mode[rep.value("final_mode", rep.value("mode", "?"))]++;
      for (const auto& sw : rep.value("switches", nlohmann::json::array())) {
        const std::string act = sw.value("action", "");
        early += act == "early_answer";
        upgrades += act == "upgrade";
        retries += act == "retry";
        early_cuts += act == "early_cut";
      }
      fallbacks += rep.value("confidence", 1.0) < o.min_confidence;
      estimate_ms += rep.value("estimate_ms", 0.0);
    }
    if (o.on_problem) {
      const Tally& shown = o.with_auto || runs.empty() ? auto_run.all : runs.back().all;
      o.on_problem(static_cast<int>(i + 1), shown.correct);
    }
  }

  nlohmann::json per_mode = nlohmann::json::object();
  for (const ModeRun& mr : runs) {
    nlohmann::json j = mr.json();
    j["mean_prompt_tokens"] = mr.all.n ? double(mr.prompt_tokens) / mr.all.n : 0.0;
    per_mode[mr.name] = j;
  }
  if (o.with_auto) {
    nlohmann::json j = auto_run.json();
    j["initial_modes"] = initial;
    j["final_modes"] = final_mode;
    j["early_answers"] = early;
    j["upgrades"] = upgrades;
    j["retries"] = retries;
    j["early_cuts"] = early_cuts;
    j["low_confidence_fallbacks"] = fallbacks;
    j["mean_estimate_ms"] = auto_run.all.n ? estimate_ms / auto_run.all.n : 0.0;
    // The blind baseline: a point on the fixed modes' accuracy-tokens hull at auto's mean tokens.
    const double t_auto = auto_run.all.mean_tokens();
    double blind = -1;
    for (const ModeRun& a : runs)
      for (const ModeRun& b : runs) {
        const double ta = a.all.mean_tokens(), tb = b.all.mean_tokens();
        if (ta > t_auto || tb < t_auto) continue;
        const double w = tb > ta ? (t_auto - ta) / (tb - ta) : 1.0;
        blind = std::max(blind, a.all.accuracy() + w * (b.all.accuracy() - a.all.accuracy()));
      }
    if (blind >= 0) j["blind_mix_accuracy"] = blind;
    per_mode["auto"] = j;
  }
  if (per_mode.contains("slow")) {
    const double slow_s = per_mode["slow"]["wall_s"].get<double>();
    for (auto& [k, v] : per_mode.items()) v["speedup_vs_slow"] = v["wall_s"].get<double>() > 0 ? slow_s / v["wall_s"].get<double>() : 0.0;
  }
  return per_mode;
}

}  // namespace kvscope::training
