// tests/clients/aisdk_agent.mjs: the Vercel AI SDK (generateText with two tools over several steps,
// generateObject with a zod schema, streamText; on chat completions and on the Responses API) against
// `kvscope serve` with the Hermes-format tool test model. Needs Node.js and the packages from
// tools/aisdk/setup.sh (KVSCOPE_AISDK_DIR); skipped without them.
#include "clients/node_client.h"

namespace aisdk_agent_test {

TEST(Clients, AISdkAgentObjectAndStream) {
  kvscope::test::run_node_client({"aisdk_agent.mjs", "KVSCOPE_AISDK_DIR", "build/npm-aisdk", "ai", "tools/aisdk/setup.sh",
                                  240, "8 checks passed"});
}

}  // namespace aisdk_agent_test
