// AnswerGate (reasoning/answer_gate.h): structured output on a reasoning model constrains only the
// answer. The gate lets the reasoning through untouched and hands the tokens to the answer's
// constraint from the close on (the model's, or a cut the engine wrote).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "fixtures.h"
#include "reasoning/answer_gate.h"
#include "reasoning/driver.h"
#include "reasoning/format.h"
#include "sampling/constraint.h"
#include "think_fixture.h"

namespace answer_gate_test {

using namespace kvscope;
using namespace kvscope::reasoning;

namespace {
ReasoningPlan at(FormatKind f, Effort e) { return plan(f, {e, {}, {}}); }
}  // namespace

// Before the close every token may come; after it only tokens that keep the text a JSON object's prefix.
TEST(AnswerGate, ConstrainsOnlyTheAnswer) {
  auto m = Model::load(fixtures::think_model());
  const auto& tk = m->tokenizer();
  std::vector<std::string> pieces(static_cast<size_t>(tk.n_vocab()));
  for (int id = 0; id < tk.n_vocab(); ++id)
    if (!tk.is_eog(id)) pieces[static_cast<size_t>(id)] = tk.token_to_piece(id);
  auto tp = std::make_shared<const TokenPieces>(std::move(pieces));
  const ReasoningPlan p = at(FormatKind::Qwen3, Effort::High);
  AnswerGate gate(tk, response_splitter(p), std::make_shared<JsonConstraint>(tp, true));
  const int nv = tk.n_vocab();
  const int32_t letter = tk.encode("x", false, false).back();
  const int32_t brace = tk.encode("{", false, false).back();
  std::vector<float> lg(static_cast<size_t>(nv), 0.0f);
  ASSERT_TRUE(gate.mask(lg.data(), nv));
  EXPECT_EQ(lg[static_cast<size_t>(letter)], 0.0f);  // reasoning: nothing masked
  for (int32_t t : tk.encode("hmm x", false, false)) gate.accept(t);
  EXPECT_FALSE(gate.open());
  for (int32_t t : tk.encode("</think>", false, false)) gate.accept(t);  // the close as text pieces
  EXPECT_TRUE(gate.open());
  std::fill(lg.begin(), lg.end(), 0.0f);
  ASSERT_TRUE(gate.mask(lg.data(), nv));
  EXPECT_TRUE(std::isinf(lg[static_cast<size_t>(letter)]));
  EXPECT_EQ(lg[static_cast<size_t>(brace)], 0.0f);
  gate.accept(brace);
  EXPECT_FALSE(gate.done());
  gate.accept(tk.encode("}", false, false).back());
  EXPECT_TRUE(gate.done());

  // The engine's cut closes the reasoning too; a plan without thinking starts in the answer.
  AnswerGate cut(tk, response_splitter(p), std::make_shared<JsonConstraint>(tp, true));
  cut.forced(p.cut_text());
  EXPECT_TRUE(cut.open());
  AnswerGate direct(tk, response_splitter(at(FormatKind::Qwen3, Effort::None)), std::make_shared<JsonConstraint>(tp, true));
  EXPECT_TRUE(direct.open());
  // Without an answer constraint the gate ends the request where the reasoning does.
  AnswerGate stop(tk, response_splitter(p), nullptr);
  EXPECT_FALSE(stop.done());
  stop.forced("a\n</think>");
  EXPECT_TRUE(stop.done());
}

}  // namespace answer_gate_test
