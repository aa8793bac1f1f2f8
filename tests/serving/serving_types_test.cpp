// The serving layer's enums: each spelling round-trips, and the engine's stops map onto the
// finish reasons the APIs report (a stop string wins over the engine's own reason).
#include <gtest/gtest.h>

#include "serving/events.h"
#include "serving/job.h"

namespace kvscope::serving {
namespace {

TEST(ServingTypes, ReasoningModeRoundTrips) {
  for (ReasoningMode m : {ReasoningMode::Auto, ReasoningMode::Fast, ReasoningMode::Mixed, ReasoningMode::Slow})
    EXPECT_EQ(parse_reasoning_mode(reasoning_mode_name(m)), m);
  EXPECT_FALSE(parse_reasoning_mode("Fast"));
  EXPECT_FALSE(parse_reasoning_mode(""));
  EXPECT_FALSE(fixed_mode(ReasoningMode::Auto));
  for (Mode m : {Mode::Fast, Mode::Mixed, Mode::Slow}) EXPECT_EQ(fixed_mode(reasoning_mode_of(m)), m);
  // The metrics index reasoning_started by this order.
  EXPECT_EQ(static_cast<int>(ReasoningMode::Auto), 0);
  EXPECT_EQ(static_cast<int>(ReasoningMode::Slow), 3);
}

TEST(ServingTypes, FinishReasonFromStop) {
  EXPECT_EQ(finish_reason_of(StopReason::Eos, false), FinishReason::Stop);
  EXPECT_EQ(finish_reason_of(StopReason::Stop, false), FinishReason::Stop);
  EXPECT_EQ(finish_reason_of(StopReason::Length, false), FinishReason::Length);
  EXPECT_EQ(finish_reason_of(StopReason::Context, false), FinishReason::Length);
  EXPECT_EQ(finish_reason_of(StopReason::Cancelled, false), FinishReason::Cancelled);
  EXPECT_EQ(finish_reason_of(StopReason::Length, true), FinishReason::Stop);  // the stop string matched first
  EXPECT_EQ(finish_reason_name(FinishReason::Length), "length");
  EXPECT_EQ(finish_reason_name(FinishReason::ToolCalls), "tool_calls");
  for (FinishReason r : {FinishReason::Stop, FinishReason::Length, FinishReason::ToolCalls, FinishReason::Cancelled})
    EXPECT_EQ(parse_finish_reason(finish_reason_name(r)), r);
  EXPECT_FALSE(parse_finish_reason("Length"));
}

TEST(ServingTypes, AttemptStates) {
  EXPECT_TRUE(reasoning_closed(AttemptState::BudgetCut));
  EXPECT_TRUE(reasoning_closed(AttemptState::EarlyAnswer));
  EXPECT_FALSE(reasoning_closed(AttemptState::First));
  EXPECT_FALSE(reasoning_closed(AttemptState::Upgraded));
  EXPECT_TRUE(reasoning_closed(AttemptState::AnswerContinued));
  EXPECT_FALSE(reasoning_closed(AttemptState::Retried));
  EXPECT_EQ(attempt_state_name(AttemptState::BudgetCut), "budget_cut");
}

TEST(ServingTypes, EventsCarryTheirKind) {
  std::vector<Event> ev{ReasoningDelta{"think", std::nullopt}, ContentDelta{"4", std::nullopt, 0}, ToolCallDelta{0, "call_1", "add", "{}"},
                        Finished{FinishReason::ToolCalls, {3, 2, 1}}};
  EXPECT_TRUE(std::holds_alternative<ReasoningDelta>(ev[0]));
  EXPECT_EQ(std::get<ContentDelta>(ev[1]).text, "4");
  EXPECT_EQ(std::get<ToolCallDelta>(ev[2]).name, "add");
  EXPECT_EQ(std::get<Finished>(ev[3]).usage.reasoning_tokens, 1);
}

}  // namespace
}  // namespace kvscope::serving
