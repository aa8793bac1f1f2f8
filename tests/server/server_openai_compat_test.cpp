// The official `openai` npm client against the server (tests/server/openai_compat.mjs). Needs Node.js
// and the package from tools/openai/setup.sh (scripts/test.sh installs it); skipped without them.
#include <gtest/gtest.h>

#include "server_test_util.h"

namespace server_openai_compat_test {

using namespace kvscope;
using namespace kvscope::test;

TEST(ServerOpenAICompat, OfficialNodeClient) {
  const char* env = std::getenv("KVSCOPE_OPENAI_DIR");
  const std::string dir = env ? env : std::string(KVSCOPE_SOURCE_DIR) + "/build/npm-openai";
  if (!std::filesystem::exists(dir + "/node_modules/openai/package.json"))
    GTEST_SKIP() << "the openai npm package is not installed in " << dir
                 << " (run tools/openai/setup.sh, or scripts/test.sh which does)";
  int st = -1;
  run_capture("node --version >/dev/null 2>&1", &st);
  if (st != 0) GTEST_SKIP() << "node (Node.js >= 18) not found";

  auto o = test_options();
  o.api_keys = {"compat-key"};
  auto srv = start_server(o);
  const std::string cmd = "KVSCOPE_BASE_URL=http://127.0.0.1:" + std::to_string(srv->port()) +
                          "/v1 KVSCOPE_API_KEY=compat-key KVSCOPE_OPENAI_DIR='" + dir + "' timeout 120 node '" +
                          KVSCOPE_SOURCE_DIR + "/tests/server/openai_compat.mjs' 2>&1";
  const std::string out = run_capture(cmd, &st);
  std::printf("%s", out.c_str());
  EXPECT_EQ(st, 0) << out;
  EXPECT_NE(out.find("checks passed"), std::string::npos) << out;
  // The stream the client abandoned was cancelled and its blocks came back.
  Engine& eng = *srv->engine();
  EXPECT_TRUE(eventually([&] { return eng.stats().blocks.used == 0 && eng.stats().running == 0; })) << srv->metrics_text();
  EXPECT_GE(metric(srv->metrics_text(), "kvscope_requests_cancelled_total"), 1);
}

}  // namespace server_openai_compat_test
