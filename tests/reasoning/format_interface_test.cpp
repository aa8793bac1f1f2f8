// The reasoning formats as one interface (reasoning/format.h): each format's exact strings (the
// prompt suffix, the cut, the system line, the level names, the splitter's delimiters), what it can
// do (skip thinking, mode lines, levels after the conversation) and the registry by name.
#include <gtest/gtest.h>

#include "reasoning/driver.h"
#include "reasoning/format.h"

namespace format_interface_test {

using namespace kvscope;
using namespace kvscope::reasoning;

namespace {

Splitter::Delta split_all(FormatKind f, bool open, const std::string& text) {
  Splitter s(f, open);
  auto d = s.push(text);
  const auto e = s.flush();
  d.reasoning += e.reasoning;
  d.content += e.content;
  return d;
}

ReasoningPlan at(FormatKind f, Effort e) { return plan(f, {e, {}, {}}); }

}  // namespace

TEST(FormatInterface, RegistryByName) {
  EXPECT_EQ(format_names(), "none, think, qwen3, deepseek-r1, gpt-oss, levels, kvscope");
  for (FormatKind f : {FormatKind::None, FormatKind::Think, FormatKind::Qwen3, FormatKind::DeepSeekR1, FormatKind::GptOss,
                       FormatKind::Levels, FormatKind::Kvscope}) {
    EXPECT_EQ(format_of(f).kind(), f);
    EXPECT_EQ(parse_format(format_of(f).name()), f);
  }
  EXPECT_EQ(parse_format("deepseek"), FormatKind::DeepSeekR1);
  EXPECT_EQ(parse_format("harmony"), std::nullopt);
}

TEST(FormatInterface, ThinkFormatsOpenOrEmptyTheBlock) {
  for (FormatKind f : {FormatKind::Think, FormatKind::Qwen3, FormatKind::DeepSeekR1}) {
    const Format& fm = format_of(f);
    EXPECT_TRUE(fm.think_block());
    EXPECT_FALSE(fm.mode_line());
    EXPECT_EQ(at(f, Effort::High).prompt_suffix(), "<think>\n");
    // effort none skips the thinking: an empty block in the prompt, the answer from the first token
    const ReasoningPlan none = at(f, Effort::None);
    EXPECT_FALSE(none.thinking);
    EXPECT_EQ(none.prompt_suffix(), "<think>\n\n</think>\n\n");
    EXPECT_TRUE(response_splitter(none).answering());
    EXPECT_EQ(at(f, Effort::Low).cut_text(), "\n</think>\n\n");
    EXPECT_EQ(at(f, Effort::Medium).system_line(), "");
    EXPECT_EQ(at(f, Effort::Medium).level_name(), "medium");
    EXPECT_EQ(fm.effort_for_mode(Mode::Fast), Effort::None);
    EXPECT_EQ(fm.default_effort(), Effort::High);
    const auto d = split_all(f, true, "17 and 26 make 43.\n</think>\n\n43");
    EXPECT_EQ(d.reasoning, "17 and 26 make 43.\n");
    EXPECT_EQ(d.content, "43");
    // without a prefilled block the model may open one itself, or answer directly
    EXPECT_EQ(split_all(f, false, "<think>hm</think>43").content, "43");
    EXPECT_EQ(split_all(f, false, "43").content, "43");
  }
}

TEST(FormatInterface, LevelsKeepTheBlockOpenAndTheLevelAfterTheConversation) {
  const Format& fm = format_of(FormatKind::Levels);
  EXPECT_TRUE(fm.level_after_conversation());
  EXPECT_FALSE(fm.think_block());
  const ReasoningPlan none = at(FormatKind::Levels, Effort::None);
  EXPECT_TRUE(none.thinking);  // its lowest level writes the empty block itself
  EXPECT_EQ(none.prompt_suffix(), "<think>\n");
  EXPECT_EQ(none.system_line(), "Reasoning: low");
  EXPECT_EQ(at(FormatKind::Levels, Effort::Medium).level_name(), "medium");
  EXPECT_EQ(none.cut_text(), "\n</think>\n\n");
  EXPECT_FALSE(response_splitter(none).answering());
  const auto d = split_all(FormatKind::Levels, true, "\n</think>\n\nAnswer: 46");
  EXPECT_EQ(d.reasoning, "\n");
  EXPECT_EQ(d.content, "Answer: 46");
}

TEST(FormatInterface, GptOssChannels) {
  const Format& fm = format_of(FormatKind::GptOss);
  EXPECT_EQ(fm.default_effort(), Effort::Medium);
  const ReasoningPlan p = at(FormatKind::GptOss, Effort::High);
  EXPECT_EQ(p.prompt_suffix(), "");
  EXPECT_EQ(p.system_line(), "Reasoning: high");
  EXPECT_EQ(p.cut_text(), "<|end|><|start|>assistant<|channel|>final<|message|>");
  EXPECT_EQ(fm.delimiters().after_close, "<|start|>assistant<|channel|>final<|message|>");
  // The answer begins after the final channel's header, not at the analysis' end.
  Splitter s(FormatKind::GptOss, true);
  s.push("<|channel|>analysis<|message|>think<|end|>");
  EXPECT_TRUE(s.answered());
  EXPECT_FALSE(s.answering());
  s.push("<|start|>assistant<|channel|>final<|message|>");
  EXPECT_TRUE(s.answering());
  EXPECT_EQ(s.push("42").content, "42");
}

TEST(FormatInterface, KvscopeModeLinesAndAnswerCue) {
  const Format& fm = format_of(FormatKind::Kvscope);
  EXPECT_TRUE(fm.mode_line());
  const ReasoningPlan fast = at(FormatKind::Kvscope, Effort::None);
  EXPECT_EQ(fast.mode, Mode::Fast);
  EXPECT_EQ(fast.level_name(), "fast");
  EXPECT_EQ(fast.prompt_suffix(), "");
  EXPECT_EQ(fast.cut_text(), "Answer:");
  EXPECT_EQ(fm.effort_for_mode(Mode::Fast), Effort::Low);
  const auto d = split_all(FormatKind::Kvscope, true, "Mode: slow\n(1) 3+4=7. Answer: 7");
  EXPECT_EQ(d.reasoning, "Mode: slow\n(1) 3+4=7. ");
  EXPECT_EQ(d.content, "7");
}

TEST(FormatInterface, NoneHasNoReasoning) {
  const Format& fm = format_of(FormatKind::None);
  EXPECT_FALSE(fm.reasons());
  const ReasoningPlan p = at(FormatKind::None, Effort::None);
  EXPECT_EQ(p.prompt_suffix(), "");
  EXPECT_EQ(p.cut_text(), "");
  EXPECT_FALSE(Splitter(FormatKind::None, true).active());
  EXPECT_TRUE(Splitter(FormatKind::None, true).answering());
}

}  // namespace format_interface_test
