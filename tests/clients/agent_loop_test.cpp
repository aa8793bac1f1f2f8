// tests/clients/agent_loop.mjs: the official `openai` npm client running a two-tool agent over three
// turns (whole and streamed) against `kvscope serve` with the Hermes-format tool test model. Needs
// Node.js and the package from tools/openai/setup.sh (KVSCOPE_OPENAI_DIR); skipped without them.
#include "clients/node_client.h"

namespace agent_loop_test {

TEST(Clients, OpenAIToolAgentLoop) {
  kvscope::test::run_node_client({"agent_loop.mjs", "KVSCOPE_OPENAI_DIR", "build/npm-openai", "openai", "tools/openai/setup.sh",
                                  180, "8 checks passed"});
}

}  // namespace agent_loop_test
