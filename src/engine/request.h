// What a caller hands the engine (Request) and gets back (TokenEvent per token, Completion at the
// end). Shared by the engine, the server and the signal/reasoning layers that observe requests.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/stop_reason.h"
#include "engine/batch.h"
#include "sampling/constraint.h"
#include "sampling/sampler.h"

namespace kvscope {

using RequestId = int64_t;

struct TokenEvent {
  RequestId id = 0;
  int32_t token = -1;        // -1 on the final event when no token comes with it
  bool finished = false;
  StopReason stop_reason = StopReason::None;  // on the final event
};

struct Request {
  std::vector<int32_t> prompt;
  SamplingParams sampling;
  int max_tokens = 16;
  // Non-empty: when the request ends its blocks stay pinned under this id, and the next request
  // with the same id whose prompt extends that history computes only the new tokens.
  std::string session_id;
  uint64_t cache_salt = 0;  // separates tenants in the prefix cache
  bool ignore_eos = false;  // benchmarks: always generate max_tokens
  // Called on the engine's step thread, in order, for every token and once with finished = true.
  std::function<void(const TokenEvent&)> on_token;
  // Optional: the logits each sampled token was drawn from (n_vocab floats), on the step thread.
  std::function<void(const float* logits, int n_vocab)> on_logits;
  // Optional observer of the request's K/V (signals), called on the step thread; must outlive the
  // request. After a preemption the recomputed positions are delivered again and prompt blocks
  // served from the prefix cache are not delivered at all (the tap sees only computed positions).
  KVTap* tap = nullptr;
  // Optional: the first generated token must be one marked here (a forced answer must open with a
  // number: Tokenizer::number_start_mask); must outlive the request.
  const std::vector<uint8_t>* first_token_allowed = nullptr;
  // Optional: after the first generated token, a token not marked here ends the request (stop
  // reason "stop") and is not emitted, so a forced answer ends with its number
  // (Tokenizer::number_continue_mask); must outlive the request.
  const std::vector<uint8_t>* continue_allowed = nullptr;
  // Optional: after the step that computed the K/V of the last generated token (a tap has seen
  // it) and before the next token is drawn, with the tokens generated so far (>= 1); true ends the
  // request there (stop reason Stop) without drawing the next token. Adaptive reasoning decides
  // here, at the token where the Context loop does. On the step thread; after a preemption it may
  // be called again with the same count.
  std::function<bool(int n_generated)> on_step;
  // Optional: structured output (sampling/constraint.h). Masks the logits before each draw and
  // follows the tokens drawn; the request ends (stop reason Stop) once it is done or allows no
  // token. Used on the step thread only.
  std::shared_ptr<TokenConstraint> constraint;
  // With a tap: also deliver the K/V of prompt positions served from the prefix cache or a session,
  // read back from the cache at admission (K as stored, after RoPE; skipped for a pre-RoPE tap).
  bool tap_cached_prefix = false;
};

struct Completion {
  std::vector<int32_t> tokens;
  StopReason stop_reason = StopReason::None;
  int n_prompt = 0;
  int n_cached = 0;        // prompt tokens served from the prefix cache at the last admission
  int n_preempted = 0;     // times this request was preempted and recomputed
};

// One sequence's generated text, as a single-sequence caller reports it (signals' generate_scored).
struct GenerateResult {
  std::vector<int32_t> tokens;
  std::string text;
  StopReason stop_reason = StopReason::None;  // Eos | Length | Stop | Context
  int n_prompt = 0;
  double prompt_ms = 0, gen_ms = 0;
};

}  // namespace kvscope
