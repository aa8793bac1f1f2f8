// kvscope eval-embed: a mini embedding benchmark on tinygsm questions (no downloads). Labels come
// from the generator: the template of a question's first statement is its class. Tasks:
//   classification  nearest-centroid accuracy, first half of the questions train, second half test
//   clustering      k-means purity with k = number of classes
//   pairs           Spearman between cosine similarity and a graded gold: 1 for a paraphrase (the
//                   same question with every number changed), else the Jaccard overlap of the two
//                   questions' template sets (unrelated neighbours)
// Sources: the KV embedding (middle third and all layers, from one forward pass), the mean of the
// input token embeddings, and the mean of the last layer's hidden states.
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "signals/embed_metrics.h"
#include "signals/embedding.h"
#include "tinygsm/tinygsm.h"
#include "util/error.h"

namespace kvscope::cli {

namespace {

// The same question with each number n replaced by n + 1 (a paraphrase with other numbers).
std::string change_numbers(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      size_t j = i;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      out += std::to_string(std::stoi(s.substr(i, j - i)) + 1);
      i = j;
    } else {
      out += s[i++];
    }
  }
  return out;
}

double jaccard(const std::vector<int>& a, const std::vector<int>& b) {
  std::set<int> sa(a.begin(), a.end()), sb(b.begin(), b.end()), u = sa;
  u.insert(sb.begin(), sb.end());
  int inter = 0;
  for (int x : sa) inter += sb.count(x) > 0;
  return u.empty() ? 0.0 : double(inter) / double(u.size());
}

void normalize(std::vector<float>& v) {
  double nn = 0;
  for (float x : v) nn += double(x) * x;
  if (nn > 0)
    for (float& x : v) x = static_cast<float>(x / std::sqrt(nn));
}

}  // namespace

void add_eval_embed_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval-embed", "Mini embedding benchmark on tinygsm questions (KV embedding vs baselines)");
  struct Opts {
    ModelOpts model;
    std::string split = "test", pool = "mean";
    int n = 200;
    uint64_t seed = tinygsm::kDefaultSeed;
    bool json = false, quiet = false, pre_rope = signals::kDefaultPreRope;
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  cmd->add_option("--split", o->split, "tinygsm split of the questions")->capture_default_str();
  cmd->add_option("--n", o->n, "Questions (each also embedded as a paraphrase)")->check(CLI::Range(8, 1 << 20))->capture_default_str();
  cmd->add_option("--seed", o->seed, "Generator seed")->capture_default_str();
  cmd->add_option("--pool", o->pool, "Token pooling: mean | last")->capture_default_str();
  cmd->add_flag("--pre-rope,!--post-rope", o->pre_rope, "KV embedding from K before RoPE");
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress bar on stderr");
  cmd->callback([o] {
    auto split = tinygsm::parse_split(o->split);
    if (!split) throw InputError("unknown split '" + o->split + "' (test, heldout, validation, train)");
    auto pool = signals::parse_pool(o->pool);
    if (!pool) throw InputError("unknown pooling '" + o->pool + "' (mean, last)");
    const std::string path = resolve_model(o->model.path);
    auto model = Model::load(path);
    const HParams& hp = model->hparams();
    signals::Embedder emb(*model, o->model.context_params());  // the token-embedding baseline
    Context ctx(*model, o->model.context_params());           // one pass feeds both KV taps and the hidden one
    const auto items = tinygsm::generate(*split, static_cast<size_t>(o->n), o->seed);

    const std::vector<std::string> sources = {"kv_mid", "kv_all", "token_mean", "hidden_last"};
    std::map<std::string, signals::Matrix> q, para;  // source -> vectors of questions / paraphrases
    Progress bar(!o->quiet, o->n, "eval-embed");
    const auto t0 = std::chrono::steady_clock::now();
    auto embed_all = [&](const std::string& text, std::map<std::string, signals::Matrix>& dst) {
      const auto ids = model->tokenizer().encode(text, true, false);
      if (static_cast<int>(ids.size()) > ctx.n_ctx()) throw LimitError("question longer than the context");
      const int n = static_cast<int>(ids.size());
      const int begin = *pool == signals::Pool::Last ? n - 1 : (n > 1 && ids[0] == model->tokenizer().vocab().bos ? 1 : 0);
      signals::TapOptions mid, all;
      mid.layers = signals::parse_layers("mid", hp.n_layer);
      all.layers = signals::parse_layers("all", hp.n_layer);
      mid.begin = all.begin = begin;
      mid.pre_rope = all.pre_rope = o->pre_rope;
      mid.hidden = true;
      signals::FeatureTap tmid(hp, mid), tall(hp, all);
      signals::TapFanout fan({&tmid, &tall});
      ctx.reset();
      ctx.set_tap(&fan);
      ctx.eval(ids);
      ctx.set_tap(nullptr);
      dst["kv_mid"].push_back(tmid.pooled_mean());
      dst["kv_all"].push_back(tall.pooled_mean());
      auto h = tmid.hidden_means().back();
      normalize(h);
      dst["hidden_last"].push_back(h);
      signals::EmbeddingOptions eo;
      eo.source = signals::EmbedSource::TokenEmbedding;
      eo.pool = *pool;
      dst["token_mean"].push_back(emb.embed(ids, eo));
    };
    std::vector<int> labels;
    for (size_t i = 0; i < items.size(); ++i) {
      embed_all(items[i].question, q);
      embed_all(change_numbers(items[i].question), para);
      labels.push_back(items[i].templates.empty() ? -1 : items[i].templates[0]);
      bar.update(static_cast<int>(i + 1), 0, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const int k = static_cast<int>(std::set<int>(labels.begin(), labels.end()).size());
    const size_t half = items.size() / 2;
    std::vector<int> train_l(labels.begin(), labels.begin() + half), test_l(labels.begin() + half, labels.end());

    nlohmann::json res = nlohmann::json::object();
    for (const auto& src : sources) {
      const auto& X = q[src];
      signals::Matrix tr(X.begin(), X.begin() + half), te(X.begin() + half, X.end());
      const double acc = signals::nearest_centroid_accuracy(tr, train_l, te, test_l);
      const double pur = signals::purity(signals::kmeans(X, k, o->seed), labels);
      std::vector<double> sim, gold;
      double para_cos = 0, other_cos = 0;
      for (size_t i = 0; i < items.size(); ++i) {
        const size_t j = (i + 1) % items.size();
        const double cp = signals::cosine(X[i], para[src][i]), co = signals::cosine(X[i], X[j]);
        sim.push_back(cp), gold.push_back(1.0);
        sim.push_back(co), gold.push_back(jaccard(items[i].templates, items[j].templates));
        para_cos += cp;
        other_cos += co;
      }
      const double n = static_cast<double>(items.size());
      res[src] = {{"classification_accuracy", acc}, {"clustering_purity", pur},
                  {"pair_spearman", signals::spearman(sim, gold)},
                  {"mean_cos_paraphrase", para_cos / n}, {"mean_cos_unrelated", other_cos / n},
                  {"dim", X.empty() ? 0 : X[0].size()}};
    }
    nlohmann::json out = {{"model", path}, {"split", o->split}, {"n", o->n}, {"seed", o->seed}, {"pool", o->pool},
                          {"classes", k}, {"pre_rope", o->pre_rope}, {"sources", res},
                          {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
    if (o->json) {
      std::printf("%s\n", out.dump().c_str());
      return;
    }
    std::printf("tinygsm %s questions, n=%d, %d classes (first-statement template), pool %s (%s)\n", o->split.c_str(),
                o->n, k, o->pool.c_str(), path.c_str());
    std::printf("%-12s %5s %8s %8s %9s %9s %9s\n", "source", "dim", "classif", "purity", "spearman", "cos_para", "cos_other");
    for (const auto& src : sources) {
      const auto& r = res[src];
      std::printf("%-12s %5d %8.3f %8.3f %9.3f %9.3f %9.3f\n", src.c_str(), r["dim"].get<int>(),
                  r["classification_accuracy"].get<double>(), r["clustering_purity"].get<double>(),
                  r["pair_spearman"].is_number() ? r["pair_spearman"].get<double>() : NAN,
                  r["mean_cos_paraphrase"].get<double>(), r["mean_cos_unrelated"].get<double>());
    }
  });
}

}  // namespace kvscope::cli
