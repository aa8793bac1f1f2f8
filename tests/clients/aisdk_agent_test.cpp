// tests/clients/aisdk_agent.mjs: the Vercel AI SDK (generateText with two tools over several steps,
// generateObject with a zod schema, streamText; on chat completions and on the Responses API) against
// `kvscope serve` with the Hermes-format tool test model. Needs Node.js and the packages from
// tools/aisdk/setup.sh (KVSCOPE_AISDK_DIR); skipped without them.
#include <gtest/gtest.h>

#include "server/server_test_util.h"

using namespace kvscope;
using namespace kvscope::test;

TEST(Clients, AISdkAgentObjectAndStream) {
  const char* env = std::getenv("KVSCOPE_AISDK_DIR");
  const std::string dir = env ? env : std::string(KVSCOPE_SOURCE_DIR) + "/build/npm-aisdk";
  if (!std::filesystem::exists(dir + "/node_modules/ai/package.json"))
    GTEST_SKIP() << "the AI SDK npm packages are not installed in " << dir
                 << " (run tools/aisdk/setup.sh, or scripts/test.sh which does)";
  int st = -1;
  run_capture("node --version >/dev/null 2>&1", &st);
  if (st != 0) GTEST_SKIP() << "node (Node.js >= 18) not found";
  const std::string bin = kvscope_bin();
  if (bin.find('/') == std::string::npos || !std::filesystem::exists(bin)) GTEST_SKIP() << "KVSCOPE_BIN is not set";

  ServeProcess srv({"-m", fixtures::tool_model("hermes"), "--model-id", "tools-hermes"});
  ASSERT_GT(srv.port, 0) << srv.notes;
  const std::string cmd = "KVSCOPE_BASE_URL=http://127.0.0.1:" + std::to_string(srv.port) +
                          "/v1 KVSCOPE_MODEL=tools-hermes KVSCOPE_AISDK_DIR='" + dir + "' timeout 240 node '" +
                          KVSCOPE_SOURCE_DIR + "/tests/clients/aisdk_agent.mjs' 2>&1";
  const std::string out = run_capture(cmd, &st);
  std::printf("%s", out.c_str());
  EXPECT_EQ(st, 0) << out;
  EXPECT_NE(out.find("8 checks passed"), std::string::npos) << out;
}
