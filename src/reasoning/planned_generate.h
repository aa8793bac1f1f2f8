// Generation under a reasoning plan on one Context (the CLI's run, eval): the prompt carries the
// plan's think block, the reasoning is counted as it streams, and at the budget the engine writes
// the plan's cut text itself ("</think>", kvscope's "Answer:") and the model answers. The server
// does the same through the engine (server/completions.cpp), by resubmitting the attempt with the
// cut appended, so both give the same text for the same greedy request.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/stop_reason.h"
#include "engine/context.h"
#include "reasoning/format.h"
#include "sampling/sampler.h"

namespace kvscope::reasoning {

struct PlannedResult {
  std::string text;       // everything the model wrote, with the engine's cut text in place
  std::string reasoning;  // the reasoning part (delimiters removed)
  std::string content;    // the answer
  std::vector<int32_t> tokens;  // generated tokens (the cut's are not among them)
  int reasoning_tokens = 0;
  // Mean over the sampled tokens (EOS included, the cut's tokens not) of the top token's
  // probability: the answer confidence a client sees as signals' max_prob.
  double max_prob = 0;
  bool budget_cut = false;
  StopReason stop_reason = StopReason::None;
  double prompt_ms = 0, gen_ms = 0;
};

// prompt: the full prompt tokens (its think block included: plan.prompt_suffix()). on_text gets
// the reasoning and answer text as they become final (either may be empty).
PlannedResult generate_planned(Context& ctx, const std::vector<int32_t>& prompt, const ReasoningPlan& plan,
                               const SamplingParams& sp, int max_tokens,
                               const std::function<void(const std::string& reasoning, const std::string& content)>& on_text = {});

}  // namespace kvscope::reasoning
