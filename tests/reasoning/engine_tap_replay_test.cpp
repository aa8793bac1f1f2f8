// A request whose prompt comes from the prefix cache still shows its whole prompt to a tap that
// asks for it (Request::tap_cached_prefix): the difficulty features are the same as when every
// position is computed, so a cached question gets the same decision.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/context.h"
#include "engine/engine.h"
#include "training/difficulty_data.h"
#include "tinygsm/tinygsm.h"

namespace engine_tap_replay_test {

using namespace kvscope;
using namespace kvscope::reasoning;

TEST(EngineTapReplay, CachedPromptBlocksReachTheTap) {
  const std::string path = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no embedded reasoner";
  auto model = Model::load(path);
  const HParams& hp = model->hparams();
  const auto it = tinygsm::generate(tinygsm::Split::Test, 1, tinygsm::kDefaultSeed)[0];
  const auto q = model->tokenizer().encode(tinygsm_question(it), true, false);
  ASSERT_GT(q.size(), 32u);  // at least two full blocks to be cached

  // Reference: the whole question computed in a Context.
  DifficultyTap ref(hp, {}, false);
  {
    Context ctx(*model, {0, 2, 512});
    ctx.set_tap(&ref);
    ctx.eval(q);
  }
  EngineParams ep;
  ep.n_threads = 2;
  ep.kv_mem_bytes = size_t{16} << 20;
  Engine eng(*model, ep);
  auto run = [&](DifficultyTap& t, bool replay) {
    Request r;
    r.prompt = q;
    r.max_tokens = 1;
    r.sampling.temperature = 0;
    r.tap = &t;
    r.tap_cached_prefix = replay;
    return eng.wait(eng.submit(std::move(r)));
  };
  DifficultyTap first(hp, {}, false), cached(hp, {}, false), unreplayed(hp, {}, false);
  EXPECT_EQ(run(first, true).n_cached, 0);
  const auto c2 = run(cached, true);
  EXPECT_GE(c2.n_cached, 32);
  const auto c3 = run(unreplayed, false);
  EXPECT_GE(c3.n_cached, 32);
  EXPECT_EQ(first.n_tokens(), static_cast<int>(q.size()));
  EXPECT_EQ(cached.n_tokens(), static_cast<int>(q.size()));
  EXPECT_EQ(unreplayed.n_tokens(), static_cast<int>(q.size()) - c3.n_cached);  // without replay: only computed ones
  const auto a = ref.features(), b = first.features(), c = cached.features();
  ASSERT_EQ(a.size(), c.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(b[i], a[i], 1e-4f);
    EXPECT_NEAR(c[i], a[i], 1e-4f);
  }
}

}  // namespace engine_tap_replay_test
