// tinygsm: the project's own grade-school word-problem benchmark and training data.
//
// Problems are chains of 1 to 6 arithmetic steps (+, -, *, exact /) over small integers (every
// value stays in [1, kMaxValue]) told as English sentences about people, objects, money and time.
// Generation is deterministic from (split, seed, index): it uses its own splitmix64 PRNG, never the
// standard library's distributions, so the same item comes out on every platform.
//
// Splits: an item using any held-out template belongs to the "heldout" split; every other item is
// assigned to train / validation / test by a hash of its question text, so the three are disjoint
// by construction. Held-out templates are never produced for train, validation or test.
//
// Answer styles (modes), chosen by a control line in the prompt:
//   fast   "Answer: 42"
//   mixed  equations only: "3+5=8. 8*2=16. Answer: 16"
//   slow   full sentences of reasoning: the starting statement, then for each numbered statement of
//          the question what it gives, with its equation ("(2) Leo has 48 + 7 = 55 dollars."), then
//          "Answer: N"
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mode.h"

namespace kvscope::tinygsm {

inline constexpr int kMinSteps = 1;
inline constexpr int kMaxSteps = 6;
inline constexpr int kMaxValue = 100;   // every quantity, intermediate or final, is in [2, kMaxValue]
inline constexpr int kMaxMulInput = 25;  // only quantities up to this are multiplied
inline constexpr uint64_t kDefaultSeed = 2024;

enum class Split { Train, Validation, Test, Heldout };

// Classic: the phrasing the first reasoner was trained on (pinned; the legacy model's tests use
// it). Broad: also paraphrased templates, connectives ("After that, ..."), dollars, euros and
// pounds, more objects, and in 30% of the problems one statement that changes nothing ("Zoe is
// 12 years old."), which the slow reasoning names: "(3) This does not change the answer."
// Held-out templates are the same in both, and never appear in train/validation/test.
// Natural: questions as people type them (natural.cpp): bare arithmetic ("What is 17+26?",
// "Compute 45 - 18 * 2"), one-line questions and stories with or without "(1) (2)" numbering and
// "Question:", many verbs per operation in present or past tense, pronouns, names from many
// languages, money, pages and miles, distractors, questions about another person or a total. Its
// items carry the user's text as typed (Item::user_text). It has no held-out templates: its
// held-out set is data/natural/heldout.jsonl, written apart from this generator.
enum class Style { Classic, Broad, Natural };
std::optional<Style> parse_style(std::string_view name);
using kvscope::Mode;  // the reasoning modes the prompts ask for (core/mode.h)
using kvscope::mode_name;
using kvscope::parse_mode;
using kvscope::level_name;

std::string_view split_name(Split s);
std::optional<Split> parse_split(std::string_view name);

// One arithmetic step: a op b = result, with op one of + - * /.
struct Step {
  char op = '+';
  int a = 0, b = 0, result = 0;
  std::string sentence;  // the slow-mode sentence(s) that contain this step's equation
  std::string equation() const;          // "12 + 5 = 17"
  std::string compact_equation() const;  // "12+5=17"
  int compute() const;                   // recompute a op b (exact division checked by callers)
};

struct Item {
  Split split = Split::Train;
  uint64_t seed = 0;
  uint64_t index = 0;
  std::string question;          // the statements and the final question, plain text
  std::vector<std::string> sentences;  // the statements (first: the starting quantity)
  std::string final_question;
  int answer = 0;
  int steps = 0;                 // number of arithmetic steps == worked.size()
  std::vector<Step> worked;
  std::vector<std::string> reasoning;  // slow-mode sentences: "(k) <what statement k gives>."
  std::vector<int> templates;   // ids of the question templates used, in order
  std::string user_text;        // natural style (or a question read from a file): the user's message as
                                // typed; empty: "Question: " and the numbered statements
};

// Deterministic generation. steps == 0 draws the number of steps uniformly in [1, 6].
Item generate_item(Split split, uint64_t seed, uint64_t index, int steps = 0, Style style = Style::Classic);
std::vector<Item> generate(Split split, size_t n, uint64_t seed = kDefaultSeed, int steps = 0,
                           Style style = Style::Classic);

// Which of train / validation / test a question (without held-out templates) belongs to.
Split hash_split(std::string_view question);

// Template table introspection (for tests and documentation).
int template_count();
bool template_is_heldout(int id);
bool template_is_broad(int id);  // used only by Style::Broad
std::string_view template_text(int id);

// The question as the prompt shows it: statements numbered "(1) ... (2) ...", then the question.
std::string numbered_question(const Item& item);
// The user's turn of a chat prompt: user_text when set, else "Question: " + numbered_question.
std::string user_message(const Item& item);

// Questions read from a JSON-lines file (one object per line: "question" as the user types it,
// integer "answer", optional "steps"), such as the held-out natural set data/natural/heldout.jsonl
// ("user_text" instead of "question" when present, as tinygsm --jsonl writes natural items).
// Each becomes an Item with user_text set; a malformed line throws InputError naming file and line.
std::vector<Item> load_items(const std::string& path);

// Natural-style generation (natural.cpp); generate_item dispatches to it. Split::Heldout is refused.
Item generate_natural_item(Split split, uint64_t seed, uint64_t index, int steps = 0);

// Prompt and target text. The model sees "<s>" + prompt and must produce target then "</s>".
std::string format_prompt(const Item& item, Mode mode);
std::string format_target(const Item& item, Mode mode);

// The chat convention of the current reasoner (a ChatML conversation; the level in a system
// message as gpt-oss does, placed after the conversation so that every level shares its KV; the
// thinking in a <think> block the prompt opens):
//   <|im_start|>user\nQuestion: ...<|im_end|>\n<|im_start|>system\nReasoning: high<|im_end|>\n
//   <|im_start|>assistant\n<think>\n          (the prompt; fast = low, mixed = medium, slow = high)
//   (1) ... (2) ...\n</think>\n\nAnswer: 17<|im_end|>   (the target; low: an empty think block)
std::string format_chat_prompt(const Item& item, Mode mode);
std::string format_chat_target(const Item& item, Mode mode);

// The integer after the last "Answer:" in text (optional sign, digits); nullopt when absent.
std::optional<int> parse_answer(std::string_view text);

// One JSON object (single line, no trailing newline) with question, answer, steps, worked steps,
// templates and the prompt/target of every mode.
std::string to_json(const Item& item);

}  // namespace kvscope::tinygsm
