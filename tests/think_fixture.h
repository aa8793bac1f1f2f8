// A random-weight think-format model that needs no oracle file (fixtures::qwen3_think_model needs
// llama.cpp's Qwen vocabulary): a generated vocabulary with <think> and </think> added (as control
// tokens, so the model's own close is not shown as text), and a Qwen3-style chat template (format
// qwen3; enable_thinking false renders an empty think block). Its random reasoning does not close by
// itself: tests close it with a thinking budget.
#pragma once
#include <string>

#include "fixtures.h"

namespace kvscope::fixtures {

inline std::string think_model() {
  // 2048 positions: the generated vocabulary spells a tool's JSON in many small pieces.
  RandomModelSpec s = tiny_spec(64, 2, 4, 2, 128, 512, 2048, 23);
  s.added_tokens = {"<think>", "</think>"};
  s.chat_template =
      "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
      "{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
      "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}"
      "{%- endif %}{%- endif %}";
  return model_file(s, "think-generated");
}

}  // namespace kvscope::fixtures
