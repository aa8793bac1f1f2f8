// Runs one of tests/clients/*.mjs with Node.js against `kvscope serve` on the Hermes-format tool test
// model, skipping when Node.js, the script's npm packages or KVSCOPE_BIN are missing. The script
// prints "N checks passed" when every check held.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "server/server_test_util.h"

namespace kvscope::test {

struct NodeClient {
  const char* script;       // file name under tests/clients
  const char* dir_env;      // where the setup script installed the packages, e.g. KVSCOPE_OPENAI_DIR
  const char* default_dir;  // under the source tree when dir_env is unset
  const char* package;      // a package whose package.json proves the install
  const char* setup;        // the setup script to name when it is missing
  int timeout_s;
  const char* expect;       // the script's final line
};

inline void run_node_client(const NodeClient& c) {
  const char* env = std::getenv(c.dir_env);
  const std::string dir = env ? env : std::string(KVSCOPE_SOURCE_DIR) + "/" + c.default_dir;
  if (!std::filesystem::exists(dir + "/node_modules/" + c.package + "/package.json"))
    GTEST_SKIP() << c.package << " is not installed in " << dir << " (run " << c.setup
                 << ", or scripts/test.sh which does)";
  int st = -1;
  run_capture("node --version >/dev/null 2>&1", &st);
  if (st != 0) GTEST_SKIP() << "node (Node.js >= 18) not found";
  const std::string bin = kvscope_bin();
  if (bin.find('/') == std::string::npos || !std::filesystem::exists(bin)) GTEST_SKIP() << "KVSCOPE_BIN is not set";

  ServeProcess srv({"-m", fixtures::tool_model("hermes"), "--model-id", "tools-hermes"});
  ASSERT_GT(srv.port, 0) << srv.notes;
  const std::string cmd = "KVSCOPE_BASE_URL=http://127.0.0.1:" + std::to_string(srv.port) + "/v1 KVSCOPE_MODEL=tools-hermes " +
                          c.dir_env + "='" + dir + "' timeout " + std::to_string(c.timeout_s) + " node '" +
                          KVSCOPE_SOURCE_DIR + "/tests/clients/" + c.script + "' 2>&1";
  const std::string out = run_capture(cmd, &st);
  std::printf("%s", out.c_str());
  EXPECT_EQ(st, 0) << out;
  EXPECT_NE(out.find(c.expect), std::string::npos) << out;
}

}  // namespace kvscope::test
