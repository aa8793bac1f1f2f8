// kvscope run: generate a continuation of a prompt (or a chat reply with --chat).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "engine/context.h"
#include "tokenizer/chat_template.h"
#include "util/error.h"

namespace kvscope::cli {

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt");
  struct Opts {
    ModelOpts model;
    SamplingOpts sampling;
    std::string prompt, system;
    int n_predict = 128;
    bool chat = false, json = false;
  };
  auto o = std::make_shared<Opts>();
  add_model_options(cmd, o->model);
  add_sampling_options(cmd, o->sampling);
  cmd->add_option("-p,--prompt", o->prompt, "Prompt text");
  cmd->add_option("-n,--n-predict", o->n_predict, "Tokens to generate")->check(CLI::Range(0, 1 << 20));
  cmd->add_flag("--chat", o->chat, "Wrap the prompt in the model's chat template as a user message");
  cmd->add_option("--system", o->system, "System message (with --chat)");
  cmd->add_flag("--json", o->json, "Print one JSON object instead of streaming text");
  cmd->callback([o] {
    auto model = Model::load(resolve_model(o->model.path));
    SamplingParams sp = o->sampling.params();
    if (o->prompt.empty()) throw InputError("empty prompt (give -p TEXT)");
    if (!tok::is_valid_utf8(o->prompt)) throw InputError("prompt is not valid UTF-8");
    std::vector<int32_t> ids;
    if (o->chat) {
      std::vector<tok::ChatMessage> msgs;
      if (!o->system.empty()) msgs.push_back({"system", o->system});
      msgs.push_back({"user", o->prompt});
      ids = encode_chat(*model, msgs);
    } else {
      ids = model->tokenizer().encode(o->prompt, true, false);
    }
    Context ctx(*model, o->model.context_params());
    if (static_cast<int>(ids.size()) > ctx.n_ctx())
      throw LimitError("prompt too long: " + std::to_string(ids.size()) + " tokens exceed the context of " +
                       std::to_string(ctx.n_ctx()));
    GenerateResult r = generate(ctx, ids, sp, o->n_predict, [&](int32_t, const std::string& piece) {
      if (!o->json) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
      }
      return true;
    });
    if (o->json) {
      nlohmann::json j = {{"text", r.text}, {"tokens", r.tokens}, {"prompt_tokens", r.n_prompt},
                          {"stop_reason", r.stop_reason}, {"prompt_ms", r.prompt_ms}, {"gen_ms", r.gen_ms}};
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("\n");
      std::fprintf(stderr, "[%d prompt tokens in %.1f ms, %zu generated in %.1f ms: %.1f tok/s, stop: %s]\n", r.n_prompt,
                   r.prompt_ms, r.tokens.size(), r.gen_ms, r.gen_ms > 0 ? r.tokens.size() * 1000.0 / r.gen_ms : 0.0,
                   r.stop_reason.c_str());
    }
  });
}

}  // namespace kvscope::cli
