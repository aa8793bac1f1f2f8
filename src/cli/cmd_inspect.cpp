// kvscope logits / tokenize: look inside the model (used by the parity tests against llama.cpp).
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "engine/context.h"
#include "util/error.h"

namespace kvscope::cli {

namespace {
std::vector<int32_t> prompt_tokens(const Model& m, const std::string& prompt, const std::string& tokens, bool bos,
                                   bool special) {
  if (!tokens.empty()) return parse_token_list(tokens);
  if (prompt.empty()) throw InputError("empty prompt (give --prompt TEXT or --tokens IDS)");
  if (!tok::is_valid_utf8(prompt)) throw InputError("prompt is not valid UTF-8");
  return m.tokenizer().encode(prompt, bos, special);
}
}  // namespace

void add_logits_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("logits", "Print the next-token logits after a prompt");
  struct Opts {
    ModelOpts model;
    std::string prompt, tokens;
    int top = 20;
    bool json = false, full = false, no_bos = false, all_positions = false;
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  cmd->add_option("--prompt", o->prompt, "Prompt text");
  cmd->add_option("--tokens", o->tokens, "Comma-separated token ids instead of text");
  cmd->add_option("--top", o->top, "How many top logits")->check(CLI::Range(1, 1 << 20));
  cmd->add_flag("--full", o->full, "Also print every logit of the last position");
  cmd->add_flag("--all-positions", o->all_positions, "Top logits for every prompt position");
  cmd->add_flag("--no-bos", o->no_bos, "Do not add BOS to text prompts");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] {
    auto model = Model::load(resolve_model(o->model.path), o->model.threads);
    auto ids = prompt_tokens(*model, o->prompt, o->tokens, !o->no_bos, false);
    Context ctx(*model, o->model.context_params());
    const auto& logits = ctx.eval(ids, o->all_positions);
    const int nv = model->hparams().n_vocab;
    auto top_of = [&](const float* l) {
      std::vector<int32_t> idx(nv);
      for (int i = 0; i < nv; ++i) idx[i] = i;
      int k = std::min(o->top, nv);
      std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int a, int b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
      nlohmann::json arr = nlohmann::json::array();
      for (int i = 0; i < k; ++i)
        arr.push_back({{"id", idx[i]}, {"logit", l[idx[i]]}, {"piece", model->tokenizer().token_to_piece(idx[i], true)}});
      return arr;
    };
    nlohmann::json j = {{"tokens", ids}};
    const float* last = logits.data() + (o->all_positions ? (ids.size() - 1) * static_cast<size_t>(nv) : 0);
    j["top"] = top_of(last);
    if (o->all_positions) {
      j["positions"] = nlohmann::json::array();
      for (size_t p = 0; p < ids.size(); ++p) j["positions"].push_back(top_of(logits.data() + p * nv));
    }
    if (o->full) j["logits"] = std::vector<float>(last, last + nv);
    if (o->json) {
      std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
      for (const auto& e : j["top"])
        std::printf("%8d %12.6f %s\n", e["id"].get<int>(), e["logit"].get<float>(), e["piece"].get<std::string>().c_str());
    }
  });
}

void add_tokenize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tokenize", "Print the token ids of a text");
  struct Opts {
    std::string model, prompt;
    bool json = false, no_bos = false, special = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("-m,--model", o->model, "GGUF model file (default: the embedded model)");
  cmd->add_option("--prompt", o->prompt, "Text")->required();
  cmd->add_flag("--no-bos", o->no_bos, "Do not add BOS/EOS as the vocabulary asks");
  cmd->add_flag("--parse-special", o->special, "Turn special-token text (e.g. <|im_start|>) into its id");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] {
    if (!tok::is_valid_utf8(o->prompt)) throw InputError("prompt is not valid UTF-8");
    auto f = gguf::File::open(resolve_model(o->model));
    auto tk = tok::Tokenizer::from_gguf(*f);
    auto ids = tk->encode(o->prompt, !o->no_bos, o->special);
    if (o->json) {
      nlohmann::json pieces = nlohmann::json::array();
      for (auto id : ids) pieces.push_back(tk->token_to_piece(id, true));
      nlohmann::json j = {{"tokens", ids}, {"pieces", pieces}};
      std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
      for (auto id : ids) std::printf("%d ", id);
      std::printf("\n");
    }
  });
}

}  // namespace kvscope::cli
