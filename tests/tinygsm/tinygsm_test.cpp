// tinygsm: determinism, correct worked steps, disjoint splits, held-out templates, answer parsing.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tinygsm/tinygsm.h"

namespace tinygsm_test {

using namespace kvscope::tinygsm;

namespace {
const Split kAll[] = {Split::Train, Split::Validation, Split::Test, Split::Heldout};
}

TEST(TinyGsm, DeterministicFromSeed) {
  for (Split s : kAll) {
    auto a = generate(s, 50, 7);
    auto b = generate(s, 50, 7);
    ASSERT_EQ(a.size(), 50u);
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].question, b[i].question);
      EXPECT_EQ(to_json(a[i]), to_json(b[i]));
    }
    auto c = generate(s, 50, 8);
    int same = 0;
    for (size_t i = 0; i < a.size(); ++i) same += a[i].question == c[i].question;
    EXPECT_LT(same, 5) << "another seed should give other problems";
  }
}

// Pinned items: a change here means the benchmark (and the trained model's data) changed.
TEST(TinyGsm, PinnedExamples) {
  auto it = generate_item(Split::Test, kDefaultSeed, 0);
  EXPECT_EQ(it.question,
            "Max draws for 23 minutes on Monday. The next day, Max draws for 12 minutes more than the day before. The "
            "day after that, Max draws 10 minutes shorter. The day after that, Max draws 15 minutes longer. For how "
            "many minutes does Max draw on the last day?");
  EXPECT_EQ(it.answer, 40);
  EXPECT_EQ(it.steps, 3);
  auto again = generate_item(Split::Test, kDefaultSeed, 0);
  EXPECT_EQ(it.question, again.question);
  // Index i of a split does not depend on how many were generated before it.
  auto many = generate(Split::Test, 20, kDefaultSeed);
  EXPECT_EQ(to_json(many[19]), to_json(generate_item(Split::Test, kDefaultSeed, 19)));
}

TEST(TinyGsm, WorkedStepsRecomputeToTheAnswer) {
  for (Split s : kAll) {
    for (const Item& it : generate(s, 400, 3)) {
      ASSERT_GE(it.steps, kMinSteps);
      ASSERT_LE(it.steps, kMaxSteps);
      ASSERT_EQ(static_cast<int>(it.worked.size()), it.steps);
      for (const Step& st : it.worked) {
        EXPECT_EQ(st.compute(), st.result) << it.question;
        if (st.op == '/') {
          EXPECT_EQ(st.a % st.b, 0) << "division must be exact: " << it.question;
        }
        EXPECT_GE(st.result, 2);
        EXPECT_LE(st.result, kMaxValue);
        EXPECT_NE(st.sentence.find(st.equation()), std::string::npos) << st.sentence;
      }
      EXPECT_EQ(it.worked.back().result, it.answer);
      // Each operand of a step is either given in the question or a result of an earlier step.
      std::set<int> known;
      for (size_t k = 0; k < it.worked.size(); ++k) {
        const Step& st = it.worked[k];
        std::vector<int> operands = {st.a};
        if (st.op != '/') operands.push_back(st.b);  // time problems say "half as long"
        for (int v : operands) {
          bool in_question = it.question.find(std::to_string(v)) != std::string::npos;
          EXPECT_TRUE(in_question || known.count(v)) << v << " in " << it.question;
        }
        known.insert(st.result);
      }
      EXPECT_EQ(parse_answer(format_target(it, Mode::Fast)), it.answer);
      EXPECT_EQ(parse_answer(format_target(it, Mode::Mixed)), it.answer);
      EXPECT_EQ(parse_answer(format_target(it, Mode::Slow)), it.answer);
    }
  }
}

// The broad style: paraphrases, connectives, currencies and statements that change nothing, with
// the worked steps still exact; held-out templates stay out of train/validation/test.
TEST(TinyGsm, BroadStyleVariesThePhrasingAndKeepsTheArithmetic) {
  int distractors = 0, euros = 0, connectives = 0, broad_templates = 0;
  for (const Item& it : generate(Split::Train, 1500, 5, 0, Style::Broad)) {
    for (const Step& st : it.worked) EXPECT_EQ(st.compute(), st.result) << it.question;
    EXPECT_EQ(it.worked.back().result, it.answer);
    for (size_t i = 0; i < it.reasoning.size(); ++i)
      distractors += it.reasoning[i].find("This does not change the answer") != std::string::npos;
    euros += it.question.find(" euros") != std::string::npos;
    connectives += it.question.find("After that, ") != std::string::npos || it.question.find("Later, ") != std::string::npos;
    for (int id : it.templates) {
      ASSERT_FALSE(template_is_heldout(id)) << it.question;
      broad_templates += template_is_broad(id);
    }
    EXPECT_EQ(parse_answer(format_chat_target(it, Mode::Slow)), it.answer);
  }
  EXPECT_GT(distractors, 300);
  EXPECT_GT(euros, 100);
  EXPECT_GT(connectives, 100);
  EXPECT_GT(broad_templates, 1000);
  // The classic style is unchanged by the broad one (the first reasoner's data).
  EXPECT_EQ(generate_item(Split::Test, kDefaultSeed, 0).question, generate_item(Split::Test, kDefaultSeed, 0, 0, Style::Classic).question);
  EXPECT_NE(generate_item(Split::Test, kDefaultSeed, 0, 0, Style::Broad).question,
            generate_item(Split::Test, kDefaultSeed, 0).question);
  for (const Item& it : generate(Split::Heldout, 300, 2024, 0, Style::Broad)) {
    bool any = false;
    for (int id : it.templates) any |= template_is_heldout(id);
    EXPECT_TRUE(any) << it.question;
  }
}

// The chat convention: the level in a system message after the question, the think block opened by the prompt,
// the low level's empty block and the answer after it.
TEST(TinyGsm, ChatPromptAndTargets) {
  const Item it = generate_item(Split::Test, kDefaultSeed, 3, 2, Style::Broad);
  const std::string p = format_chat_prompt(it, Mode::Mixed);
  EXPECT_EQ(p.rfind("<|im_start|>user\nQuestion: (1) ", 0), 0u) << p;
  const std::string tail = "<|im_end|>\n<|im_start|>system\nReasoning: medium<|im_end|>\n<|im_start|>assistant\n<think>\n";
  EXPECT_EQ(p.substr(p.size() - tail.size()), tail);
  const std::string ans = "\n</think>\n\nAnswer: " + std::to_string(it.answer) + "<|im_end|>";
  EXPECT_EQ(format_chat_target(it, Mode::Fast), ans);
  EXPECT_EQ(format_chat_target(it, Mode::Mixed), it.worked[0].compact_equation() + ". " + it.worked[1].compact_equation() + "." + ans);
  EXPECT_EQ(format_chat_target(it, Mode::Slow).rfind("(1) ", 0), 0u);
}

TEST(TinyGsm, AllStepCountsAppear) {
  std::set<int> seen;
  for (const Item& it : generate(Split::Test, 300)) seen.insert(it.steps);
  EXPECT_EQ(seen.size(), 6u);
  for (int k = 1; k <= 6; ++k) EXPECT_EQ(generate_item(Split::Train, 1, 5, k).steps, k);
}

TEST(TinyGsm, SplitsAreDisjoint) {
  std::set<std::string> train;
  for (const Item& it : generate(Split::Train, 20000, 1)) train.insert(it.question);
  for (Split s : {Split::Validation, Split::Test, Split::Heldout}) {
    int overlap = 0;
    for (const Item& it : generate(s, 1000)) overlap += train.count(it.question);
    EXPECT_EQ(overlap, 0) << split_name(s);
  }
  std::set<std::string> test;
  for (const Item& it : generate(Split::Test, 1000)) test.insert(it.question);
  for (const Item& it : generate(Split::Validation, 1000)) EXPECT_EQ(test.count(it.question), 0u);
  for (const Item& it : generate(Split::Test, 200)) EXPECT_EQ(hash_split(it.question), Split::Test);
  for (const Item& it : generate(Split::Validation, 200)) EXPECT_EQ(hash_split(it.question), Split::Validation);
}

TEST(TinyGsm, ClassicStyleNeverUsesBroadTemplates) {
  for (const Item& it : generate(Split::Train, 1000, 9))
    for (int id : it.templates) ASSERT_FALSE(template_is_broad(id)) << it.question;
}

TEST(TinyGsm, HeldoutTemplatesOnlyInHeldout) {
  int n_held = 0;
  for (int id = 0; id < template_count(); ++id) n_held += template_is_heldout(id);
  EXPECT_GE(n_held, 10);
  for (Split s : {Split::Train, Split::Validation, Split::Test})
    for (const Item& it : generate(s, 3000, 11))
      for (int id : it.templates) ASSERT_FALSE(template_is_heldout(id)) << split_name(s) << ": " << it.question;
  std::set<int> used;
  for (const Item& it : generate(Split::Heldout, 2000)) {
    bool any = false;
    for (int id : it.templates) {
      any |= template_is_heldout(id);
      used.insert(id);
    }
    EXPECT_TRUE(any) << it.question;
  }
  int held_used = 0;
  for (int id : used) held_used += template_is_heldout(id);
  EXPECT_EQ(held_used, n_held) << "every held-out template is exercised by the heldout split";
}

TEST(TinyGsm, PromptAndTargetFormats) {
  Item it;
  for (uint64_t i = 0;; ++i) {  // a two-step problem told in two one-step statements
    it = generate_item(Split::Test, kDefaultSeed, i, 2);
    if (it.sentences.size() == 3) break;
  }
  ASSERT_EQ(it.sentences.size(), 3u);  // start + two one-step statements (or one two-step one)
  const std::string numbered = "(1) " + it.sentences[0] + " (2) " + it.sentences[1] + " (3) " + it.sentences[2] + " " +
                               it.final_question;
  EXPECT_EQ(numbered_question(it), numbered);
  EXPECT_EQ(format_prompt(it, Mode::Fast), "Question: " + numbered + "\nMode: fast\n");
  EXPECT_EQ(format_prompt(it, Mode::Slow), "Question: " + numbered + "\nMode: slow\n");
  EXPECT_EQ(format_target(it, Mode::Fast), "Answer: " + std::to_string(it.answer));
  const std::string mixed = it.worked[0].compact_equation() + ". " + it.worked[1].compact_equation() +
                            ". Answer: " + std::to_string(it.answer);
  EXPECT_EQ(format_target(it, Mode::Mixed), mixed);
  const std::string slow = format_target(it, Mode::Slow);
  EXPECT_EQ(slow.rfind("(1) " + it.sentences[0] + " (2) ", 0), 0u);
  // The slow reasoning names each statement and says what it gives, with the step's equation.
  EXPECT_NE(slow.find("(2) "), std::string::npos);
  EXPECT_EQ(slow.find(it.sentences[1]), std::string::npos) << "statements after the first are not quoted again";
  EXPECT_NE(slow.find(it.worked[0].equation()), std::string::npos);
  EXPECT_GT(slow.size(), format_target(it, Mode::Mixed).size());
  EXPECT_EQ(format_prompt(it, Mode::Mixed).find('\t'), std::string::npos);
}

TEST(TinyGsm, ParseAnswer) {
  EXPECT_EQ(parse_answer("Answer: 42"), 42);
  EXPECT_EQ(parse_answer("3+5=8. 8*2=16. Answer: 16"), 16);
  EXPECT_EQ(parse_answer("Answer:7"), 7);
  EXPECT_EQ(parse_answer("Answer:   -3 apples"), -3);
  EXPECT_EQ(parse_answer("Answer: 12. Answer: 13"), 13);
  EXPECT_EQ(parse_answer("Answer: 0"), 0);
  EXPECT_EQ(parse_answer("Answer: 19</s>"), 19);
  EXPECT_EQ(parse_answer("no answer here"), std::nullopt);
  EXPECT_EQ(parse_answer("Answer: "), std::nullopt);
  EXPECT_EQ(parse_answer("Answer: x"), std::nullopt);
  EXPECT_EQ(parse_answer("Answer: -"), std::nullopt);
  EXPECT_EQ(parse_answer("Answer: 12345678901"), std::nullopt);
  EXPECT_EQ(parse_answer(""), std::nullopt);
}

TEST(TinyGsm, Names) {
  for (Split s : kAll) EXPECT_EQ(parse_split(split_name(s)), s);
  for (Mode m : {Mode::Fast, Mode::Mixed, Mode::Slow}) EXPECT_EQ(parse_mode(mode_name(m)), m);
  EXPECT_EQ(parse_split("val"), Split::Validation);
  EXPECT_EQ(parse_split("nope"), std::nullopt);
  EXPECT_EQ(parse_mode("think"), std::nullopt);
}

// The natural style: questions as typed. Every item's worked steps recompute to its answer, every
// operand is said in the text or computed before, the user's text is the whole chat turn, and the
// constructions the issue lists all occur.
TEST(TinyGsm, NaturalStyleCoversHowPeopleAsk) {
  int bare = 0, one_line = 0, numbered = 0, question_prefix = 0, no_prefix = 0, distractors = 0, past = 0,
      pronouns = 0, together = 0, shares = 0, more_than = 0, fewer_than = 0, money = 0, pages = 0, miles = 0,
      no_question = 0, others_act = 0, scene_start = 0, leads = 0, lower_case = 0, rate_or_need = 0, intros = 0,
      own_amounts = 0, two_amounts = 0, the_rest = 0, which_is = 0, who_has = 0, reversed = 0, change = 0, two_parts = 0,
      scenes = 0, ages = 0, kinds = 0;
  std::set<std::string> names;
  std::map<int, int> by_steps;
  for (const Item& it : generate(Split::Train, 16000, 11, 0, Style::Natural)) {
    ASSERT_FALSE(it.user_text.empty());
    ASSERT_EQ(static_cast<int>(it.worked.size()), it.steps) << it.user_text;
    ASSERT_GE(it.steps, 1);
    for (const Step& st : it.worked) EXPECT_EQ(st.compute(), st.result) << it.user_text;
    EXPECT_EQ(it.worked.back().result, it.answer) << it.user_text;
    std::set<int> known;
    for (const Step& st : it.worked) {
      for (int v : {st.a, st.b}) {
        // Factors may be said in words ("doubles", "half", "a third", "three times").
        if (v <= 4 && (st.op == '*' || st.op == '/')) continue;
        EXPECT_TRUE(it.user_text.find(std::to_string(v)) != std::string::npos || known.count(v))
            << v << " in " << it.user_text;
      }
      known.insert(st.result);
      EXPECT_NE(st.sentence.find(st.equation()), std::string::npos) << st.sentence;
    }
    EXPECT_EQ(user_message(it), it.user_text);
    EXPECT_EQ(format_chat_prompt(it, Mode::Slow).rfind("<|im_start|>user\n" + it.user_text + "<|im_end|>", 0), 0u);
    for (Mode m : {Mode::Fast, Mode::Mixed, Mode::Slow}) EXPECT_EQ(parse_answer(format_chat_target(it, m)), it.answer);
    EXPECT_EQ(hash_split(it.user_text), Split::Train);
    by_steps[it.steps]++;
    const std::string& q = it.user_text;
    const bool story = !it.sentences.empty();
    bare += !story;
    if (story) {
      numbered += q.find("(1) ") != std::string::npos;
      one_line += q.find(". ") == std::string::npos || q.rfind("If ", 0) == 0;
      no_question += q.back() == '.';
      names.insert(q.substr(q.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ", q.rfind(": ") == std::string::npos ? 0 : q.rfind(": ") + 2)).substr(0, 4));
    }
    question_prefix += q.rfind("Question: ", 0) == 0;
    no_prefix += story && q.find(':') == std::string::npos;
    for (const auto& r : it.reasoning) distractors += r.find("This does not change the answer") != std::string::npos;
    past += q.find(" had ") != std::string::npos || q.find(" bought ") != std::string::npos;
    pronouns += q.find(" He ") != std::string::npos || q.find(" She ") != std::string::npos;
    together += q.find("together") != std::string::npos || q.find("altogether") != std::string::npos;
    shares += q.find(" each friend ") != std::string::npos || q.find(" each kid ") != std::string::npos ||
              q.find("in each bag?") != std::string::npos;
    more_than += q.find(" more than ") != std::string::npos;
    fewer_than += q.find(" fewer than ") != std::string::npos || q.find(" less than ") != std::string::npos;
    money += q.find('$') != std::string::npos || q.find(" dollars") != std::string::npos;
    pages += q.find(" pages") != std::string::npos;
    miles += q.find(" miles") != std::string::npos;
    // Someone else acts on the subject ("Ana gives him 5 more"), the amount is where the objects
    // are ("There are 12 apples in Tom's bag"), time leads, and bare arithmetic typed in lower case.
    others_act += q.find(" gives him ") != std::string::npos || q.find(" gives her ") != std::string::npos ||
                  q.find(" borrows ") != std::string::npos || q.find(" takes half of ") != std::string::npos;
    scene_start += q.find("There are ") != std::string::npos || q.find("'s box holds ") != std::string::npos;
    leads += q.find("At first, ") != std::string::npos || q.find("The next day, ") != std::string::npos ||
             q.find("Afterwards, ") != std::string::npos;
    lower_case += !story && q.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ?") == std::string::npos;
    // A rate and the count in the question ("How much do 9 tickets cost?") or what is missing ("How
    // many more ... need?"): one sentence of reasoning that computes it.
    rate_or_need += story && it.reasoning.size() == 1;
    intros += story && it.reasoning.front() == "(1) This does not change the answer.";
    // Two people with amounts of their own, then the total: the second amount is said, not computed.
    // Two amounts under one verb ("spends $25 on shoes and $30 on lunch"): two steps in one clause,
    // and "the rest" shared out only after something was taken away.
    for (const auto& r : it.reasoning)
      if (r.rfind("(", 0) == 0 && r.find(" = ") != r.rfind(" = ") && r.find("That is") == std::string::npos &&
          r.find("that is") == std::string::npos) {
        ++two_amounts;
        break;
      }
    if (q.find(" the rest ") != std::string::npos && q.find(" the rest away") == std::string::npos) {
      ++the_rest;
      bool taken = false;
      for (size_t w = 0; w + 1 < it.worked.size(); ++w) taken |= it.worked[w].op == '-';
      EXPECT_TRUE(taken) << q;
    }
    // The comparison said from the known side ("18 plums, which is 7 fewer than Nikolai"), or before
    // the amount it needs ("... as many coins as Hannah. Hannah has 15 coins."), which is reasoned first.
    which_is += q.find(", which is ") != std::string::npos || q.find(", which was ") != std::string::npos;
    who_has += q.find(", who has ") != std::string::npos || q.find(", who had ") != std::string::npos;
    if (story && it.reasoning.size() >= 2 && it.reasoning[0].rfind("(2) ", 0) == 0) {
      ++reversed;
      EXPECT_EQ(it.reasoning[1].rfind("(1) ", 0), 0u) << q;
      EXPECT_NE(it.worked.front().sentence.find(it.worked.front().equation()), std::string::npos) << q;
    }
    change += q.find(" change ") != std::string::npos;
    ages += q.find(" years older") != std::string::npos || q.find(" years younger") != std::string::npos ||
            q.find(" as old as ") != std::string::npos;
    // A crowd that comes and goes with no owner ("17 get off and 8 more get on"): the numbers are subjects.
    scenes += story && it.reasoning.front().rfind("(1) There are ", 0) == 0 && it.reasoning.back().rfind("(", 0) == 0 &&
              it.reasoning.back().find(" = ") != std::string::npos && it.reasoning.back().find(" There are ") != std::string::npos;
    // Two kinds counted under one word ("33 cows and 28 sheep ... How many animals"): the total is the
    // last step, of the two kinds' amounts as they are by then.
    if (story && it.reasoning.back().rfind("In all, ", 0) == 0) {
      ++kinds;
      EXPECT_EQ(it.worked.back().op, '+') << q;
      // the question counts in the word the total is said in ("... = 50 animals." / "How many animals")
      const std::string& last = it.reasoning.back();
      const std::string said = last.substr(last.find(' ', last.find(" = ") + 3) + 1);
      EXPECT_NE(it.final_question.find(said.substr(0, said.find_first_of(" ."))), std::string::npos) << q;
    }
    two_parts += story && it.reasoning.size() == 1 && it.reasoning[0].find(" in total.") != std::string::npos;
    own_amounts += story && it.worked.back().op == '+' && it.reasoning.back().rfind("Together, ", 0) == 0 &&
                   it.worked.size() >= 2 && it.worked.back().b != it.worked[it.worked.size() - 2].result;
  }
  for (int c : {bare, one_line, numbered, question_prefix, no_prefix, distractors, past, pronouns, together, shares,
                more_than, fewer_than, money, pages, miles, no_question, others_act, scene_start, leads, lower_case,
                rate_or_need, intros, own_amounts, two_amounts, reversed, two_parts, scenes, ages, kinds})
    EXPECT_GT(c, 60);
  // rarer (16,000 items, so twice the counts of 8,000): a share that follows a subtraction; the comparison said in a clause; change from a payment
  for (int c : {the_rest, which_is, who_has, change}) EXPECT_GE(c, 10);
  EXPECT_GT(bare, 800);
  EXPECT_GT(by_steps[1], 2000);  // one-step questions are the common case of a user
  EXPECT_GT(names.size(), 40u);
}

TEST(TinyGsm, NaturalBareArithmeticFollowsPrecedence) {
  int precedence = 0, brackets = 0;
  for (const Item& it : generate(Split::Test, 4000, 4, 2, Style::Natural)) {
    if (!it.sentences.empty()) continue;
    const std::string& q = it.user_text;
    ASSERT_EQ(it.reasoning.size(), it.worked.size()) << q;
    if (const size_t open = q.find('('); open != std::string::npos) {
      // "(14 + 6) * 3", "60 / (2 + 3)": what is inside the bracket is computed first, and its
      // result is one operand of the second step, on the bracket's side.
      const size_t close = q.find(')', open);
      ASSERT_NE(close, std::string::npos) << q;
      const std::string inside = q.substr(open + 1, close - open - 1);
      const Step &first = it.worked[0], &second = it.worked[1];
      const std::string a = std::to_string(first.a), b = std::to_string(first.b);
      EXPECT_EQ(inside.compare(0, a.size(), a), 0) << q;
      EXPECT_EQ(inside.compare(inside.size() - b.size(), b.size(), b), 0) << q;
      const bool bracket_first = q.find_first_of("0123456789") > open;
      EXPECT_EQ(bracket_first ? second.a : second.b, first.result) << q;
      ++brackets;
      continue;
    }
    // "45 - 18 * 2": the product (said second) is computed first, then the first number less it.
    const Step &first = it.worked[0], &second = it.worked[1];
    // (second.a == first.result is "18 * 2 - 36": the product said first, only equal by chance)
    if ((first.op == '*' || first.op == '/') && (second.op == '+' || second.op == '-') && second.b == first.result &&
        second.a != first.result) {
      const std::string a = std::to_string(second.a), b = std::to_string(first.a);
      const size_t pa = q.find_first_of("0123456789");
      EXPECT_EQ(q.compare(pa, a.size(), a), 0) << q;
      EXPECT_GT(q.find(b, pa + a.size()), pa) << q;
      ++precedence;
    }
  }
  EXPECT_GT(precedence, 10);
  EXPECT_GT(brackets, 10);
}

TEST(TinyGsm, NaturalChainsInWordsGoLeftToRight) {
  // "Take 18 away from 40 and then add 5.", "Start with 20, add 15, subtract 9 and then double it.":
  // each operation works on the result of the one before, in the order said, whatever the operators.
  int chains = 0;
  for (const Item& it : generate(Split::Train, 4000, 13, 0, Style::Natural)) {
    if (!it.sentences.empty() || it.steps < 2) continue;
    std::string q = it.user_text;
    std::transform(q.begin(), q.end(), q.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (q.find_first_of("+-*/()=") != std::string::npos || q.find(" x ") != std::string::npos) continue;
    bool opens = false;
    for (const char* w : {"start with", "think of", "take ", "add ", "subtract ", "multiply ", "divide ", "if you "})
      opens |= q.rfind(w, 0) == 0;
    if (!opens) continue;
    std::vector<int> said;  // the numbers in the question, in order
    for (size_t p = 0; (p = q.find_first_of("0123456789", p)) != std::string::npos;) {
      const size_t e = q.find_first_not_of("0123456789", p);
      said.push_back(std::stoi(q.substr(p, e - p)));
      p = e;
    }
    // The numbers the operations need, in order; a factor of 2 or 3 may be a word ("double it",
    // "triple it", "halve it"). The first operation's two numbers come in either order ("take 18
    // away from 40").
    auto matches = [&](bool swapped) {
      std::vector<std::pair<int, bool>> need;  // number, may be said as a word
      const Step& first = it.worked[0];
      need.push_back({swapped ? first.b : first.a, false});
      need.push_back({swapped ? first.a : first.b, !swapped && first.b <= 3 && (first.op == '*' || first.op == '/')});
      for (size_t i = 1; i < it.worked.size(); ++i)
        need.push_back({it.worked[i].b, it.worked[i].b <= 3 && (it.worked[i].op == '*' || it.worked[i].op == '/')});
      size_t next = 0;
      for (auto [v, word] : need) {
        if (next < said.size() && said[next] == v) ++next;
        else if (!word) return false;
      }
      return next == said.size();
    };
    EXPECT_TRUE(matches(false) || matches(true)) << it.user_text;
    for (size_t i = 1; i < it.worked.size(); ++i) EXPECT_EQ(it.worked[i].a, it.worked[i - 1].result) << it.user_text;
    ++chains;
  }
  EXPECT_GT(chains, 40);
}

TEST(TinyGsm, NaturalStoriesToldByI) {
  // "I had 50 candies and ate 12. How many are left?": the teller's verbs agree with "I" in the
  // question and in the reasoning, and the teller is "me"/"my" where someone else acts on them.
  int told = 0, me = 0;
  for (const Item& it : generate(Split::Train, 4000, 17, 0, Style::Natural)) {
    if (it.sentences.empty()) continue;
    const std::string& q = it.user_text;
    if (q.find("I ") == std::string::npos && q.find("my ") == std::string::npos && q.find(" me") == std::string::npos) continue;
    std::string all = q;
    for (auto& r : it.reasoning) all += " " + r;
    for (const char* wrong : {"I has", "I is ", "I does", "I buys", "I gives", "I gets", "I reads", "I walks", " does I ",
                              " is I ", " has I ", " gives I ", "than I.", "than I ", "I and "})
      EXPECT_EQ(all.find(wrong), std::string::npos) << wrong << " in " << all;
    bool reasons_as_i = false;
    for (auto& r : it.reasoning) reasons_as_i |= r.find("I have") != std::string::npos;
    if (q.find("I ") != std::string::npos && reasons_as_i) ++told;
    me += q.find(" me") != std::string::npos;
  }
  EXPECT_GT(told, 100);
  EXPECT_GT(me, 20);
}

TEST(TinyGsm, NaturalStyleIsDeterministicAndKeepsOtherStyles) {
  for (Split s : {Split::Train, Split::Validation, Split::Test}) {
    auto a = generate(s, 40, 9, 0, Style::Natural);
    auto b = generate(s, 40, 9, 0, Style::Natural);
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(to_json(a[i]), to_json(b[i]));
      EXPECT_EQ(hash_split(a[i].user_text), s);
    }
  }
  for (int k = 1; k <= 6; ++k) EXPECT_EQ(generate_item(Split::Train, 1, 5, k, Style::Natural).steps, k);
  EXPECT_THROW(generate_item(Split::Heldout, 1, 0, 0, Style::Natural), std::invalid_argument);
  EXPECT_EQ(parse_style("natural"), Style::Natural);
  // The broad and classic items (the existing splits) do not move.
  const Item broad = generate_item(Split::Test, kDefaultSeed, 0, 0, Style::Broad);
  EXPECT_TRUE(broad.user_text.empty());
  EXPECT_EQ(user_message(broad), "Question: " + numbered_question(broad));
}

TEST(TinyGsm, LoadItemsReadsQuestionsAsTyped) {
  const std::string path = ::testing::TempDir() + "/tinygsm_items.jsonl";
  {
    std::ofstream f(path);
    f << "{\"question\": \"What is 17+26?\", \"answer\": 43, \"steps\": 1}\n\n"
      << "{\"question\": \"Tom has 34 apples. He buys 12 more.\", \"answer\": 46}\n";
  }
  const auto items = load_items(path);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].user_text, "What is 17+26?");
  EXPECT_EQ(items[0].answer, 43);
  EXPECT_EQ(items[0].steps, 1);
  EXPECT_EQ(items[1].steps, 0);
  EXPECT_EQ(format_chat_prompt(items[1], Mode::Fast).rfind("<|im_start|>user\nTom has 34 apples. He buys 12 more.<|im_end|>", 0), 0u);
  {
    std::ofstream f(path);
    f << "{\"question\": \"What is 1+2?\", \"answer\": \"3\"}\n";
  }
  try {
    load_items(path);
    FAIL() << "a string answer must be refused";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(":1: \"answer\" must be an integer"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_items(path + ".missing"), std::exception);
}

}  // namespace tinygsm_test
