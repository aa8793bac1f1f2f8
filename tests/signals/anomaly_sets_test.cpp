// The anomaly sets and the probe's prompts as each kind of model is prompted: a ChatML model with
// levels gets every set (normal and shifted) rendered by its chat template at a mode's effort, its
// markers typed inside the user turn become its special tokens; the first reasoner keeps its bare
// "Question: ...\nMode: m" text.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "fixtures.h"
#include "reasoning/format.h"
#include "tinygsm/tinygsm.h"
#include "training/anomaly_sets.h"
#include "training/prompt_format.h"
#include "util/error.h"

namespace anomaly_sets_test {

using namespace kvscope;

namespace {

// The levels template of the embedded chat reasoner (tools/train/export_gguf.py).
const char* kLevelsTemplate =
    "{%- set effort = reasoning_effort if reasoning_effort is defined and reasoning_effort else 'high' -%}"
    "{%- if effort in ['none', 'minimal'] %}{% set effort = 'low' %}{% endif -%}"
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>system\nReasoning: {{ effort }}<|im_end|>\n"
    "<|im_start|>assistant\n<think>\n{% endif %}";

const Model& chat_model() {
  auto s = fixtures::tiny_spec(64, 2, 2, 1, 64, 400, 256, 31);
  s.added_tokens = {"<|im_start|>", "<|im_end|>", "<think>", "</think>"};
  s.chat_template = kLevelsTemplate;
  s.name = "random-chatml-levels";
  return fixtures::model(s, "anomaly-chatml");
}

const Model& bare_reasoner() {
  auto s = fixtures::tiny_spec(64, 2, 2, 1, 64, 400, 256, 32);
  s.name = "kvscope-reasoner-random";  // no template: the first reasoner's format
  return fixtures::model(s, "anomaly-bare");
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

int32_t token_id(const Model& m, const std::string& text) {
  const auto& t = m.tokenizer().vocab().tokens;
  return static_cast<int32_t>(std::find(t.begin(), t.end(), text) - t.begin());
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The template's tail after the user turn at one of the levels.
bool ends_with_level_tail(const std::string& s) {
  for (const char* level : {"low", "medium", "high"})
    if (ends_with(s, std::string("<|im_end|>\n<|im_start|>system\nReasoning: ") + level +
                         "<|im_end|>\n<|im_start|>assistant\n<think>\n"))
      return true;
  return false;
}

}  // namespace

TEST(AnomalySets, ChatModelNormalPromptsAreItsTrainingConvention) {
  const Model& m = chat_model();
  const training::PromptFormat f(m);
  ASSERT_TRUE(f.chat());
  EXPECT_EQ(f.kind(), reasoning::FormatKind::Levels);
  const auto ps = training::normal_prompts(f, tinygsm::Split::Test, 30, 5);
  const auto items = tinygsm::generate(tinygsm::Split::Test, 30, 5, 0, tinygsm::Style::Broad);
  ASSERT_EQ(ps.size(), items.size());
  std::set<std::string> levels;
  for (size_t i = 0; i < ps.size(); ++i) {
    // The text the chat reasoner was trained on (tinygsm's chat_prompt) at one of the modes.
    bool same = false;
    for (Mode md : {Mode::Fast, Mode::Mixed, Mode::Slow})
      if (ps[i].text == tinygsm::format_chat_prompt(items[i], md)) same = true, levels.insert(std::string(level_name(md)));
    EXPECT_TRUE(same) << ps[i].text;
    // Markers are special tokens, not spelled out as text.
    EXPECT_EQ(std::count(ps[i].tokens.begin(), ps[i].tokens.end(), token_id(m, "<|im_start|>")), 3);
    EXPECT_EQ(std::count(ps[i].tokens.begin(), ps[i].tokens.end(), token_id(m, "<think>")), 1);
  }
  EXPECT_EQ(levels.size(), 3u);  // every effort appears
}

TEST(AnomalySets, ChatModelShiftedSetsAreRenderedWithItsTemplate) {
  const Model& m = chat_model();
  const training::PromptFormat f(m);
  const int32_t im_start = token_id(m, "<|im_start|>"), im_end = token_id(m, "<|im_end|>");
  for (const auto& set : training::shifted_set_names()) {
    const auto ps = training::shifted_prompts(f, set, 40, 9);
    ASSERT_EQ(ps.size(), 40u) << set;
    for (const auto& p : ps) {
      // A user turn of the template, then the level and the open think block.
      EXPECT_EQ(p.text.rfind("<|im_start|>user\n", 0), 0u) << set << ": " << p.text;
      EXPECT_TRUE(ends_with_level_tail(p.text)) << set << ": " << p.text;
      EXPECT_EQ(p.text.find("\nMode: "), std::string::npos) << set << ": the first reasoner's mode line in " << p.text;
      // Every marker in the text is one special token.
      EXPECT_EQ(std::count(p.tokens.begin(), p.tokens.end(), im_start), count(p.text, "<|im_start|>")) << p.text;
      EXPECT_EQ(std::count(p.tokens.begin(), p.tokens.end(), im_end), count(p.text, "<|im_end|>")) << p.text;
      if (set == "other_domain" || set == "injection" || set == "control") {
        EXPECT_EQ(p.text.rfind("<|im_start|>user\nQuestion: ", 0), 0u) << p.text;
      }
    }
  }
}

TEST(AnomalySets, ChatModelControlSetMisusesItsOwnMarkers) {
  const Model& m = chat_model();
  const training::PromptFormat f(m);
  const auto& mk = f.control_markers();
  for (const char* want : {"<|im_start|>", "<|im_end|>", "<think>", "</think>", "Reasoning: high"})
    EXPECT_NE(std::find(mk.begin(), mk.end(), want), mk.end()) << want;
  const auto ps = training::shifted_prompts(f, "control", 200, 3);
  int stray_start = 0, stray_end = 0, stray_think = 0, level_line = 0;
  for (const auto& p : ps) {
    // The user turn alone (the template adds 3 <|im_start|>, 2 <|im_end|>, 1 <think>).
    const std::string user = p.text.substr(0, p.text.rfind("<|im_end|>\n<|im_start|>system\nReasoning: "));
    stray_start += count(user, "<|im_start|>") > 1;
    stray_end += count(user, "<|im_end|>") > 0;
    stray_think += count(user, "think>") > 0;
    level_line += count(user, "Reasoning: ") > 0;
    bool has = false;
    for (const auto& x : mk) has = has || user.find(x) != std::string::npos;
    EXPECT_TRUE(has) << p.text;
  }
  EXPECT_GT(stray_start, 0);
  EXPECT_GT(stray_end, 0);
  EXPECT_GT(stray_think, 0);
  EXPECT_GT(level_line, 0);
}

TEST(AnomalySets, FirstReasonerKeepsItsBareFormat) {
  const Model& m = bare_reasoner();
  const training::PromptFormat f(m);
  ASSERT_FALSE(f.chat());
  const auto ps = training::normal_prompts(f, tinygsm::Split::Test, 20, 5);
  const auto items = tinygsm::generate(tinygsm::Split::Test, 20, 5);
  for (size_t i = 0; i < ps.size(); ++i) {
    bool same = false;
    for (Mode md : {Mode::Fast, Mode::Mixed, Mode::Slow}) same = same || ps[i].text == tinygsm::format_prompt(items[i], md);
    EXPECT_TRUE(same) << ps[i].text;
    EXPECT_EQ(ps[i].tokens, m.tokenizer().encode(ps[i].text, true, false));
  }
  for (const auto& p : training::shifted_prompts(f, "soup", 10, 1)) EXPECT_EQ(p.text.find("Mode: "), std::string::npos);
  for (const auto& set : {"other_domain", "injection", "control"})
    for (const auto& p : training::shifted_prompts(f, set, 10, 1)) {
      EXPECT_EQ(p.text.rfind("Question: ", 0), 0u) << p.text;
      EXPECT_NE(p.text.find("\nMode: "), std::string::npos) << p.text;
      EXPECT_EQ(p.text.find("<|im_start|>"), std::string::npos);
    }
  const auto& mk = f.control_markers();
  EXPECT_NE(std::find(mk.begin(), mk.end(), "\nMode: fast\n"), mk.end());
}

// A base or random model (no chat template, no reasoning format) is asked in bare text, as these
// tools always did, instead of being refused; a think format without a template cannot be rendered.
TEST(AnomalySets, ModelWithoutTemplateOrFormatIsAskedInBareText) {
  auto s = fixtures::tiny_spec(64, 2, 2, 1, 64, 400, 256, 33);
  const Model& m = fixtures::model(s, "anomaly-plain");
  const training::PromptFormat f(m, reasoning::FormatKind::None);
  EXPECT_FALSE(f.chat());
  const std::string user = "Question: (1) Tom has 3 pens. How many pens does Tom have?";
  const std::string p = f.render(user, Mode::Slow);
  EXPECT_EQ(p.rfind(user, 0), 0u) << p;  // no template around it
  EXPECT_NE(p.find("\nMode: slow"), std::string::npos) << p;
  try {
    training::PromptFormat think(m, reasoning::FormatKind::Qwen3);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no chat template"), std::string::npos) << e.what();
  }
}

TEST(AnomalySets, AnswerIsReadAfterTheThinkBlock) {
  const Model& m = chat_model();
  const training::PromptFormat f(m);
  const auto plan = f.plan(Mode::Slow);
  // An "Answer:" inside the thinking is not the answer.
  const std::string resp = "(1) Answer: 5 is a guess. (2) 5 + 7 = 12.\n</think>\n\nAnswer: 12";
  EXPECT_EQ(tinygsm::parse_answer(training::answer_text(plan, resp)), 12);
  EXPECT_EQ(tinygsm::parse_answer(training::answer_text(plan, "(1) Answer: 5 and no end")), std::nullopt);
  // The first reasoner's text is read whole.
  const training::PromptFormat b(bare_reasoner());
  EXPECT_EQ(tinygsm::parse_answer(training::answer_text(b.plan(Mode::Slow), "5 + 7 = 12. Answer: 12")), 12);
}

// Every prompt of the sets carries the span of its user turn: the tokens between the template's
// "<|im_start|>user\n" and the "<|im_end|>" that closes the turn, so a typed marker is inside it
// and the template's own markers are not.
TEST(AnomalySets, UserSpanIsTheRenderedUserTurn) {
  const Model& m = chat_model();
  const training::PromptFormat f(m);
  const auto& tk = m.tokenizer();
  auto check = [&](const training::SetPrompt& p) {
    ASSERT_EQ(p.user_spans.size(), 1u) << p.text;
    const auto [b, e] = p.user_spans[0];
    std::string user, before;
    for (int i = b; i < e; ++i) user += tk.token_to_piece(p.tokens[i], true);
    for (int i = 0; i < b; ++i) before += tk.token_to_piece(p.tokens[i], true);
    // The tokenizer of this model puts a dummy-prefix space before "user": the turn header ends the
    // text before the span.
    EXPECT_TRUE(before.size() >= 5 && before.substr(before.size() - 5) == "user\n") << "[" << before << "] [" << user << "]";
    EXPECT_NE(before.find("<|im_start|>"), std::string::npos) << before;
    // The span is the whole user turn: what follows it is the turn's end and the template's level
    // turn. (Pieces read one at a time put this tokenizer's prefix space after each special token
    // again: the texts are compared without spaces.)
    auto squeeze = [](std::string x) {
      x.erase(std::remove(x.begin(), x.end(), ' '), x.end());
      return x;
    };
    const std::string text = squeeze(p.text), u = squeeze(user);
    const size_t at = text.find("<|im_start|>user\n" + u);
    ASSERT_NE(at, std::string::npos) << "[" << u << "] " << text;
    EXPECT_EQ(text.compare(at + 17 + u.size(), 40, "<|im_end|>\n<|im_start|>system\nReasoning:"), 0) << "[" << u << "] " << text;
  };
  for (const auto& p : training::normal_prompts(f, tinygsm::Split::Test, 20, 5)) check(p);
  for (const char* set : {"control", "injection", "other_domain"})
    for (const auto& p : training::shifted_prompts(f, set, 20, 5)) check(p);
}

}  // namespace anomaly_sets_test
