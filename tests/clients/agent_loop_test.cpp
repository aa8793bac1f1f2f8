// tests/clients/agent_loop.mjs: the official `openai` npm client running a two-tool agent over three
// turns (whole and streamed) against `kvscope serve` with the Hermes-format tool test model. Needs
// Node.js and the package from tools/openai/setup.sh (KVSCOPE_OPENAI_DIR); skipped without them.
#include <gtest/gtest.h>

#include "server/server_test_util.h"

using namespace kvscope;
using namespace kvscope::test;

TEST(Clients, OpenAIToolAgentLoop) {
  const char* env = std::getenv("KVSCOPE_OPENAI_DIR");
  const std::string dir = env ? env : std::string(KVSCOPE_SOURCE_DIR) + "/build/npm-openai";
  if (!std::filesystem::exists(dir + "/node_modules/openai/package.json"))
    GTEST_SKIP() << "the openai npm package is not installed in " << dir
                 << " (run tools/openai/setup.sh, or scripts/test.sh which does)";
  int st = -1;
  run_capture("node --version >/dev/null 2>&1", &st);
  if (st != 0) GTEST_SKIP() << "node (Node.js >= 18) not found";
  const std::string bin = kvscope_bin();
  if (bin.find('/') == std::string::npos || !std::filesystem::exists(bin)) GTEST_SKIP() << "KVSCOPE_BIN is not set";

  ServeProcess srv({"-m", fixtures::tool_model("hermes"), "--model-id", "tools-hermes"});
  ASSERT_GT(srv.port, 0) << srv.notes;
  const std::string cmd = "KVSCOPE_BASE_URL=http://127.0.0.1:" + std::to_string(srv.port) +
                          "/v1 KVSCOPE_MODEL=tools-hermes KVSCOPE_OPENAI_DIR='" + dir + "' timeout 180 node '" +
                          KVSCOPE_SOURCE_DIR + "/tests/clients/agent_loop.mjs' 2>&1";
  const std::string out = run_capture(cmd, &st);
  std::printf("%s", out.c_str());
  EXPECT_EQ(st, 0) << out;
  EXPECT_NE(out.find("8 checks passed"), std::string::npos) << out;
}
