// util/env: the one reader of environment variables. A value it does not understand is reported
// (not ignored) and the default is used.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "test_util.h"
#include "util/env.h"

namespace kvscope::util {
namespace {

TEST(Env, ChoiceAcceptsListedValuesCaseInsensitively) {
  ::setenv("KVSCOPE_TEST_CHOICE", "AVX2", 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(env_choice("KVSCOPE_TEST_CHOICE", {"scalar", "avx2"}), "avx2");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ::unsetenv("KVSCOPE_TEST_CHOICE");
  EXPECT_EQ(env_choice("KVSCOPE_TEST_CHOICE", {"scalar", "avx2"}), std::nullopt);
}

TEST(Env, UnknownValueWarnsOnceNamingTheVariableAndTheChoices) {
  ::setenv("KVSCOPE_TEST_CHOICE", "avx1024", 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(env_choice("KVSCOPE_TEST_CHOICE", {"scalar", "avx2"}), std::nullopt);
  EXPECT_EQ(env_choice("KVSCOPE_TEST_CHOICE", {"scalar", "avx2"}), std::nullopt);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "warning: KVSCOPE_TEST_CHOICE=avx1024 is not understood (expected scalar|avx2); using the default\n");
  ::unsetenv("KVSCOPE_TEST_CHOICE");
}

TEST(Env, FlagReadsCommonSpellingsAndWarnsOnOthers) {
  ::setenv("KVSCOPE_TEST_FLAG", "off", 1);
  EXPECT_FALSE(env_flag("KVSCOPE_TEST_FLAG", true));
  ::setenv("KVSCOPE_TEST_FLAG", "1", 1);
  EXPECT_TRUE(env_flag("KVSCOPE_TEST_FLAG", false));
  ::setenv("KVSCOPE_TEST_FLAG", "maybe", 1);
  testing::internal::CaptureStderr();
  EXPECT_TRUE(env_flag("KVSCOPE_TEST_FLAG", true));
  EXPECT_NE(testing::internal::GetCapturedStderr().find("KVSCOPE_TEST_FLAG=maybe"), std::string::npos);
  ::unsetenv("KVSCOPE_TEST_FLAG");
  EXPECT_TRUE(env_flag("KVSCOPE_TEST_FLAG", true));
}

TEST(Env, EveryVariableTheSourcesReadIsRegistered) {
  std::set<std::string> names;
  for (const auto& v : env_registry()) names.insert(v.name);
  for (const char* n : {"KVSCOPE_MODEL", "KVSCOPE_ISA", "KVSCOPE_REPACK"}) EXPECT_TRUE(names.count(n)) << n;
}

TEST(Env, UnknownIsaWarnsFromTheCli) {
  const std::string out = test::run_capture("KVSCOPE_ISA=avx9000 " + test::kvscope_bin() + " tokenize --prompt hi 2>&1");
  EXPECT_NE(out.find("warning: KVSCOPE_ISA=avx9000 is not understood"), std::string::npos) << out;
}

TEST(Env, MisspeltVariableIsReported) {
  const std::string out = test::run_capture("KVSCOPE_IAS=avx2 " + test::kvscope_bin() + " tokenize --prompt hi 2>&1");
  EXPECT_NE(out.find("warning: KVSCOPE_IAS is not a variable kvscope reads"), std::string::npos) << out;
}

TEST(Env, MissingModelFileNamedByTheVariableIsAnError) {
  int status = 0;
  const std::string out =
      test::run_capture("KVSCOPE_MODEL=/nonexistent.gguf " + test::kvscope_bin() + " tokenize --prompt hi 2>&1", &status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("KVSCOPE_MODEL=/nonexistent.gguf: no such file"), std::string::npos) << out;
}

}  // namespace
}  // namespace kvscope::util
