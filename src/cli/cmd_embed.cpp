// kvscope embed: a sequence embedding read from the KV cache of one forward pass.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "signals/embedding.h"
#include "util/error.h"

namespace kvscope::cli {

void add_embed_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("embed", "Embed text with the model's KV cache (mean of K|V over layers and heads)");
  struct Opts {
    ModelOpts model;
    std::string text, layers = "mid", pool = "mean", source = "kv";
    int dimensions = 0, begin = -1, end = -1;
    bool json = false, pre_rope = signals::kDefaultPreRope;
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  cmd->add_option("--text", o->text, "Text to embed")->required();
  cmd->add_option("--layers", o->layers, "Layers: mid | all | a-b | a,b,c")->capture_default_str();
  cmd->add_option("--pool", o->pool, "Token pooling: mean | last")->capture_default_str();
  cmd->add_option("--dimensions", o->dimensions, "Keep the first N values (renormalized); 0: all")->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--from", o->begin, "First pooled token (-1: skip BOS)")->check(CLI::Range(-1, 1 << 24));
  cmd->add_option("--to", o->end, "One past the last pooled token (-1: end)")->check(CLI::Range(-1, 1 << 24));
  cmd->add_option("--source", o->source, "kv | token (input embeddings) | hidden (last layer)")->capture_default_str();
  cmd->add_flag("--pre-rope,!--post-rope", o->pre_rope, "Use K before RoPE");
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->callback([o] {
    auto model = Model::load(resolve_model(o->model.path), o->model.threads);
    if (!tok::is_valid_utf8(o->text)) throw InputError("text is not valid UTF-8");
    signals::EmbeddingOptions eo;
    eo.layers = o->layers;
    auto pool = signals::parse_pool(o->pool);
    if (!pool) throw InputError("unknown pooling '" + o->pool + "' (mean, last)");
    eo.pool = *pool;
    auto src = signals::parse_source(o->source);
    if (!src) throw InputError("unknown source '" + o->source + "' (kv, token, hidden)");
    eo.source = *src;
    eo.dimensions = o->dimensions;
    eo.token_begin = o->begin;
    eo.token_end = o->end;
    eo.pre_rope = o->pre_rope;
    const auto ids = model->tokenizer().encode(o->text, true, false);
    ContextParams cp = o->model.context_params();
    if (cp.n_ctx == 0) cp.n_ctx = std::max<int>(16, static_cast<int>(ids.size()));
    signals::Embedder emb(*model, cp);
    const auto v = emb.embed(ids, eo);
    if (o->json) {
      nlohmann::json j = {{"object", "embedding"}, {"embedding", v},           {"dimensions", v.size()},
                          {"tokens", ids.size()},  {"layers", signals::parse_layers(o->layers, model->hparams().n_layer)},
                          {"pool", o->pool},       {"source", o->source},       {"pre_rope", o->pre_rope}};
      std::printf("%s\n", j.dump().c_str());
    } else {
      for (size_t i = 0; i < v.size(); ++i) std::printf("%s%.6f", i ? " " : "", v[i]);
      std::printf("\n");
    }
  });
}

}  // namespace kvscope::cli
