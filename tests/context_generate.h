// The single-sequence reference the tests hold the Engine to: greedy or sampled generation on a
// fresh Context, token by token (the library itself generates through the Engine). on_token receives
// valid UTF-8 pieces as they come (returning false stops with "stop"); on_sample sees each sampled
// token with the logits it was drawn from (EOS included).
#pragma once
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/request.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace kvscope {

using SampleObserver = std::function<void(const float* logits, int n_vocab, int32_t tok)>;

inline GenerateResult generate(Context& ctx, const std::vector<int32_t>& prompt, const SamplingParams& sp, int max_tokens,
                        const std::function<bool(int32_t tok, const std::string& piece)>& on_token = nullptr,
                               const SampleObserver& on_sample = nullptr) {
  if (prompt.empty()) throw InputError("empty prompt");
  if (max_tokens < 0) throw InputError("max tokens must be >= 0");
  const auto& tk = ctx.model().tokenizer();
  const int n_vocab = ctx.model().hparams().n_vocab;
  GenerateResult r;
  r.n_prompt = static_cast<int>(prompt.size());
  Sampler sampler(sp);
  tok::StreamDecoder dec(tk);
  std::vector<int32_t> history = prompt;
  ctx.reset();
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  const std::vector<float>* logits = &ctx.eval(prompt);
  auto t1 = clock::now();
  r.prompt_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  r.stop_reason = StopReason::Length;
  for (int i = 0; i < max_tokens; ++i) {
    int32_t id = sampler.sample(logits->data(), n_vocab, history);
    if (on_sample) on_sample(logits->data(), n_vocab, id);
    if (tk.is_eog(id)) {
      r.stop_reason = StopReason::Eos;
      break;
    }
    r.tokens.push_back(id);
    history.push_back(id);
    std::string piece = dec.push(id);
    r.text += piece;
    if (on_token && !on_token(id, piece)) {
      r.stop_reason = StopReason::Stop;
      break;
    }
    if (i + 1 == max_tokens) break;
    if (ctx.n_past() >= ctx.n_ctx()) {
      r.stop_reason = StopReason::Context;
      break;
    }
    logits = &ctx.eval({id});
  }
  std::string tail = dec.flush();
  r.text += tail;
  if (on_token && !tail.empty()) on_token(-1, tail);
  r.gen_ms = std::chrono::duration<double, std::milli>(clock::now() - t1).count();
  return r;
}

}  // namespace kvscope
