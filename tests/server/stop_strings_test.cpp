// Stop-string matching over text that arrives in arbitrary pieces.
#include "server/stop_strings.h"

#include <gtest/gtest.h>

namespace stop_strings_test {

using kvscope::server::StopMatcher;

namespace {

// Feeds `pieces` and returns everything emitted (flushed at the end when nothing matched).
std::string run(StopMatcher& m, const std::vector<std::string>& pieces) {
  std::string out;
  for (const auto& p : pieces) out += m.push(p);
  return out + m.flush();
}

}  // namespace

TEST(ServerStopStrings, MatchesAcrossPiecesAndDropsTheStopText) {
  StopMatcher m({"END"});
  EXPECT_EQ(run(m, {"hello E", "N", "D world"}), "hello ");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "END");
  EXPECT_EQ(m.push("more"), "");
}

TEST(ServerStopStrings, HoldsBackOnlyWhatCouldStillMatch) {
  StopMatcher m({"\n\nUser:"});
  EXPECT_EQ(m.push("abc\n"), "abc");    // "\n" may start the stop string
  EXPECT_EQ(m.push("\nUs"), "");
  EXPECT_EQ(m.push("ed to"), "\n\nUsed to");  // it did not
  EXPECT_FALSE(m.stopped());
  EXPECT_EQ(m.push("x\n"), "x");
  EXPECT_EQ(m.flush(), "\n");  // the end of generation releases the held tail
}

TEST(ServerStopStrings, EarliestOfSeveralWinsAndEmptyOnesAreIgnored) {
  StopMatcher m({"", "world", "lo w"});
  EXPECT_EQ(run(m, {"hel", "lo world"}), "hel");
  EXPECT_EQ(m.matched(), "lo w");
  StopMatcher none({});
  EXPECT_EQ(run(none, {"a", "b"}), "ab");
}

TEST(ServerStopStrings, MultiByteTextStaysWhole) {
  StopMatcher m({"é!"});
  EXPECT_EQ(m.push("caf"), "caf");
  EXPECT_EQ(m.push("é"), "");  // could be the start of "é!"
  EXPECT_EQ(m.push("s"), "és");
  EXPECT_EQ(run(m, {"é", "!", "tail"}), "");
  EXPECT_TRUE(m.stopped());
}

}  // namespace stop_strings_test
