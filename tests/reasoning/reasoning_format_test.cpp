// Reasoning formats: detection from templates and vocabularies, how efforts map onto each format,
// the errors for what a format cannot express, and the splitter that divides streamed text into
// reasoning and answer (delimiters split across pieces included). Budgets on a model are in
// tests/server (local_run_test, server_reasoning_effort_test).
#include <gtest/gtest.h>

#include "fixtures.h"
#include "reasoning/driver.h"
#include "reasoning/format.h"
#include "tokenizer/chat_template.h"
#include "util/error.h"

namespace reasoning_format_test {

using namespace kvscope;
using namespace kvscope::reasoning;

namespace {

// Feeds text one byte at a time (the worst split of every delimiter) and returns both parts.
Splitter::Delta split_bytes(FormatKind f, bool open, const std::string& text) {
  Splitter s(f, open);
  Splitter::Delta all;
  for (char c : text) {
    auto d = s.push(std::string(1, c));
    all.reasoning += d.reasoning;
    all.content += d.content;
  }
  auto d = s.flush();
  all.reasoning += d.reasoning;
  all.content += d.content;
  return all;
}

}  // namespace

TEST(ReasoningFormat, NamesRoundTrip) {
  for (FormatKind f : {FormatKind::None, FormatKind::Think, FormatKind::Qwen3, FormatKind::DeepSeekR1, FormatKind::GptOss,
                       FormatKind::Levels, FormatKind::Kvscope})
    EXPECT_EQ(parse_format(format_name(f)), f);
  EXPECT_FALSE(parse_format("qwen4").has_value());
  for (Effort e : {Effort::None, Effort::Minimal, Effort::Low, Effort::Medium, Effort::High, Effort::Auto})
    EXPECT_EQ(parse_effort(effort_name(e)), e);
  EXPECT_FALSE(parse_effort("extreme").has_value());
}

TEST(ReasoningFormat, DetectsFromTemplateVocabularyAndName) {
  const Model& plain = fixtures::model(fixtures::tiny_spec(), "fmt-plain");  // no template, no <think>
  const auto& tk = plain.tokenizer();
  EXPECT_EQ(detect_format("", tk, "kvscope-random-llama"), FormatKind::None);
  EXPECT_EQ(detect_format("", tk, "kvscope-reasoner"), FormatKind::Kvscope);
  EXPECT_EQ(detect_format("{% if enable_thinking is false %}<think>\n\n</think>{% endif %}<|im_start|>", tk, ""),
            FormatKind::Qwen3);
  EXPECT_EQ(detect_format("<\xef\xbd\x9c" "Assistant\xef\xbd\x9c><think>\n", tk, ""), FormatKind::DeepSeekR1);
  EXPECT_EQ(detect_format("{{ '<think>' }}<|im_start|>", tk, ""), FormatKind::Think);
  EXPECT_EQ(detect_format("<|start|>assistant<|channel|>final<|message|>", tk, ""), FormatKind::GptOss);
  EXPECT_EQ(detect_format("<|im_start|>{{ message.content }}", tk, ""), FormatKind::None);
  // The embedded model's template: levels in the system message and a think block; its name no
  // longer decides once it has a template.
  const std::string levels = "<|im_start|>system\nReasoning: {{ effort }}<|im_end|>{% if add_generation_prompt %}"
                             "<|im_start|>assistant\n<think>\n{% endif %}";
  EXPECT_EQ(detect_format(levels, tk, "kvscope-reasoner"), FormatKind::Levels);
  EXPECT_EQ(detect_format("{{ reasoning_effort }} Reasoning: <|start|>", tk, ""), FormatKind::GptOss);
  EXPECT_EQ(detect_format(plain), FormatKind::None);
}

TEST(ReasoningFormat, EffortsMapOntoThinkFormats) {
  const EffortBudgets b{7, 30};
  auto p = plan(FormatKind::Qwen3, {Effort::None, {}, {}}, b);
  EXPECT_FALSE(p.thinking);
  EXPECT_EQ(p.prompt_suffix(), "<think>\n\n</think>\n\n");
  EXPECT_FALSE(plan(FormatKind::Qwen3, {Effort::Minimal, {}, {}}, b).thinking);
  p = plan(FormatKind::Qwen3, {Effort::Low, {}, {}}, b);
  EXPECT_TRUE(p.thinking);
  EXPECT_EQ(p.budget, 7);
  EXPECT_EQ(p.prompt_suffix(), "<think>\n");
  EXPECT_EQ(p.cut_text(), "\n</think>\n\n");
  EXPECT_EQ(plan(FormatKind::DeepSeekR1, {Effort::Medium, {}, {}}, b).budget, 30);
  p = plan(FormatKind::Think, {Effort::High, {}, {}}, b);
  EXPECT_TRUE(p.thinking);
  EXPECT_EQ(p.budget, -1);
  // enable_thinking and budgets alone; the model's default is to think without a bound.
  EXPECT_FALSE(plan(FormatKind::Qwen3, {{}, false, {}}, b).thinking);
  EXPECT_EQ(plan(FormatKind::Qwen3, {{}, {}, 12}, b).budget, 12);
  EXPECT_FALSE(plan(FormatKind::Qwen3, {{}, {}, 0}, b).thinking);
  EXPECT_EQ(plan(FormatKind::Qwen3, {Effort::Low, {}, 50}, b).budget, 50);  // an explicit budget wins
  p = plan(FormatKind::Qwen3, {}, b);
  EXPECT_TRUE(p.thinking);
  EXPECT_FALSE(p.requested);
  EXPECT_EQ(p.budget, -1);
}

TEST(ReasoningFormat, LevelFormatsUseTheirOwnLevels) {
  auto k = [](Effort e) { return plan(FormatKind::Kvscope, {e, {}, {}}).mode; };
  EXPECT_EQ(k(Effort::None), Mode::Fast);
  EXPECT_EQ(k(Effort::Minimal), Mode::Fast);
  EXPECT_EQ(k(Effort::Low), Mode::Fast);
  EXPECT_EQ(k(Effort::Medium), Mode::Mixed);
  EXPECT_EQ(k(Effort::High), Mode::Slow);
  EXPECT_EQ(plan(FormatKind::Kvscope, {Effort::High, {}, {}}).cut_text(), "Answer:");
  EXPECT_EQ(plan(FormatKind::GptOss, {Effort::Low, {}, {}}).system_line(), "Reasoning: low");
  EXPECT_EQ(plan(FormatKind::GptOss, {}).system_line(), "Reasoning: medium");
  EXPECT_EQ(effort_for_mode(FormatKind::Qwen3, Mode::Fast), Effort::None);
  EXPECT_EQ(effort_for_mode(FormatKind::Kvscope, Mode::Fast), Effort::Low);
}

// The embedded model's format: the level in a system message (none and minimal are low), the think
// block always opened by the prompt, the budget cut closing it; its default is high.
TEST(ReasoningFormat, LevelsInTheSystemMessageWithAThinkBlock) {
  auto lv = [](Effort e) { return plan(FormatKind::Levels, {e, {}, {}}); };
  EXPECT_EQ(lv(Effort::None).system_line(), "Reasoning: low");
  EXPECT_EQ(lv(Effort::Minimal).system_line(), "Reasoning: low");
  EXPECT_EQ(lv(Effort::Low).system_line(), "Reasoning: low");
  EXPECT_EQ(lv(Effort::Medium).system_line(), "Reasoning: medium");
  EXPECT_EQ(lv(Effort::High).system_line(), "Reasoning: high");
  EXPECT_EQ(plan(FormatKind::Levels, {}).system_line(), "Reasoning: high");
  for (Effort e : {Effort::None, Effort::Low, Effort::High}) {
    EXPECT_TRUE(lv(e).thinking);
    EXPECT_EQ(lv(e).prompt_suffix(), "<think>\n");
    EXPECT_EQ(lv(e).cut_text(), "\n</think>\n\n");
  }
  EXPECT_EQ(plan(FormatKind::Levels, {Effort::High, {}, 40}).budget, 40);
  EXPECT_EQ(plan(FormatKind::Levels, {{}, {}, 0}).system_line(), "Reasoning: low");  // no thinking: the low level
  // ChatML renders the level as a system turn after the conversation, so that the conversation's
  // KV is a prefix of every level's prompt.
  const std::vector<tok::ChatMessage> msgs = {{"system", "Be brief."}, {"user", "2+2?"}};
  const std::string conv = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n";
  EXPECT_EQ(tok::apply_chat_template(tok::ChatFormat::ChatML, msgs, true, "", "", "medium"),
            conv + "<|im_start|>system\nReasoning: medium<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(tok::apply_chat_template(tok::ChatFormat::ChatML, msgs, false, "", "", "medium"), conv);
  EXPECT_EQ(tok::apply_chat_template(tok::ChatFormat::ChatML, msgs, true, "", ""),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n");
  const auto d = split_bytes(FormatKind::Levels, true, "(1) Tom has 3 apples.\n</think>\n\nAnswer: 3");
  EXPECT_EQ(d.reasoning, "(1) Tom has 3 apples.\n");
  EXPECT_EQ(d.content, "Answer: 3");
}

TEST(ReasoningFormat, WhatAFormatCannotExpressIsAnErrorNamingIt) {
  try {
    plan(FormatKind::None, {Effort::High, {}, {}});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'high'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("reasoning format is 'none'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan(FormatKind::None, {Effort::Auto, {}, {}}), InputError);
  EXPECT_THROW(plan(FormatKind::None, {{}, true, {}}), InputError);
  EXPECT_THROW(plan(FormatKind::None, {{}, {}, 10}), InputError);
  EXPECT_NO_THROW(plan(FormatKind::None, {Effort::None, {}, {}}));  // already what it does
  try {
    plan(FormatKind::Qwen3, {{}, {}, -5});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("-5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan(FormatKind::Qwen3, {Effort::High, false, {}}), InputError);  // contradiction
}

TEST(ReasoningFormat, SplitterThinkBlocks) {
  auto d = split_bytes(FormatKind::Qwen3, true, "step one\nstep two\n</think>\n\nThe answer is 4.");
  EXPECT_EQ(d.reasoning, "step one\nstep two\n");
  EXPECT_EQ(d.content, "The answer is 4.");
  // The model opens the block itself (no prefill), after some whitespace.
  d = split_bytes(FormatKind::Think, false, "\n<think>hmm</think>ok");
  EXPECT_EQ(d.reasoning, "hmm");
  EXPECT_EQ(d.content, "ok");
  // ... or answers directly.
  d = split_bytes(FormatKind::Think, false, "<thin air");
  EXPECT_EQ(d.reasoning, "");
  EXPECT_EQ(d.content, "<thin air");
  // A prefilled block the model opens again; a close that never comes keeps everything reasoning.
  d = split_bytes(FormatKind::DeepSeekR1, true, "<think>a </thi");
  EXPECT_EQ(d.reasoning, "a </thi");
  EXPECT_EQ(d.content, "");
  // A piece holding the end of the reasoning and the start of the answer.
  Splitter s(FormatKind::Qwen3, true);
  auto a = s.push("x</thi");
  EXPECT_EQ(a.reasoning, "x");
  auto b = s.push("nk>\n\nY");
  EXPECT_EQ(b.reasoning, "");
  EXPECT_EQ(b.content, "Y");
}

TEST(ReasoningFormat, SplitterKvscopeAndGptOss) {
  auto d = split_bytes(FormatKind::Kvscope, true, "Mode: fast\nAnswer: 56");
  EXPECT_EQ(d.reasoning, "Mode: fast\n");
  EXPECT_EQ(d.content, "56");
  d = split_bytes(FormatKind::Kvscope, true, "29-5=24. 24*3=72. Answer: 72");
  EXPECT_EQ(d.reasoning, "29-5=24. 24*3=72. ");
  EXPECT_EQ(d.content, "72");
  d = split_bytes(FormatKind::GptOss, true,
                  "<|channel|>analysis<|message|>think it over<|end|><|start|>assistant<|channel|>final<|message|>Done.");
  EXPECT_EQ(d.reasoning, "think it over");
  EXPECT_EQ(d.content, "Done.");
  d = split_bytes(FormatKind::None, false, "</think>plain");
  EXPECT_EQ(d.content, "</think>plain");
}

// The chat formats of the thinking families that are not ChatML: DeepSeek-R1's and gpt-oss's
// harmony (its reasoning level in the system message).
TEST(ReasoningFormat, DeepSeekAndHarmonyChatFormats) {
  using tok::ChatFormat;
  const std::string user = "<\xef\xbd\x9c" "User\xef\xbd\x9c>", asst = "<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>";
  EXPECT_EQ(tok::detect_chat_format("{{ bos_token }}{% for m in messages %}" + user + "{{ m.content }}" + asst + "{% endfor %}"),
            ChatFormat::DeepSeek);
  EXPECT_EQ(tok::detect_chat_format("<|start|>{{ role }}<|channel|>final<|message|>"), ChatFormat::Harmony);
  const std::vector<tok::ChatMessage> msgs = {{"system", "Be brief."}, {"user", "2+2?"}};
  EXPECT_EQ(tok::apply_chat_template(ChatFormat::DeepSeek, msgs, true, "", "<eos>"), "Be brief." + user + "2+2?" + asst);
  const std::string h = tok::apply_chat_template(ChatFormat::Harmony, msgs, true, "", "", "high");
  EXPECT_NE(h.find("<|start|>system<|message|>Reasoning: high"), std::string::npos) << h;
  EXPECT_NE(h.find("<|start|>developer<|message|># Instructions\n\nBe brief.<|end|>"), std::string::npos) << h;
  const std::string tail = "<|start|>user<|message|>2+2?<|end|><|start|>assistant";
  EXPECT_EQ(h.rfind(tail), h.size() - tail.size()) << h;
  EXPECT_NE(tok::apply_chat_template(ChatFormat::Harmony, msgs, true, "", "").find("Reasoning: medium"), std::string::npos);
  EXPECT_EQ(tok::chat_format_from_name("deepseek"), ChatFormat::DeepSeek);
  EXPECT_EQ(tok::chat_format_from_name("harmony"), ChatFormat::Harmony);
}

// The driver both adapters run: reasoning tokens, the budget's Cut, the cut moving the split, and a
// restart under another effort keeping the count.
TEST(ReasoningFormat, DriverCountsAndCuts) {
  Driver d(plan(FormatKind::Qwen3, {{}, {}, 3}));
  EXPECT_EQ(d.on_token("a"), Driver::Action::Continue);
  EXPECT_EQ(d.on_token("b"), Driver::Action::Continue);
  EXPECT_EQ(d.on_token("c"), Driver::Action::Cut);
  EXPECT_TRUE(d.needs_cut());
  d.on_cut("\n</think>\n\n");
  EXPECT_TRUE(d.budget_cut());
  EXPECT_EQ(d.on_token("4"), Driver::Action::Continue);
  d.finish();
  EXPECT_EQ(d.reasoning(), "abc\n");
  EXPECT_EQ(d.content(), "4");
  EXPECT_EQ(d.reasoning_tokens(), 3);
  // The model closes the block itself before the budget: no cut.
  Driver e(plan(FormatKind::Qwen3, {{}, {}, 5}));
  e.on_token("x");
  e.on_token("</think>");
  EXPECT_EQ(e.on_token("\n\nok"), Driver::Action::Continue);
  EXPECT_FALSE(e.needs_cut());
  EXPECT_EQ(e.reasoning_tokens(), 2);
  e.restart(plan(FormatKind::Qwen3, {Effort::None, {}, {}}));  // a no-thinking attempt: all answer
  e.on_token("y");
  e.finish();
  EXPECT_EQ(e.content(), "y");
  EXPECT_EQ(e.reasoning_tokens(), 2);
}

}  // namespace reasoning_format_test
