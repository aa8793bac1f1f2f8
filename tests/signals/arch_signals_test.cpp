// KV signals and a quantized KV cache on the newer architectures: gemma2 (sliding-window layers in
// their own cache, soft-capping) and a MoE (qwen3moe).
#include <gtest/gtest.h>

#include <cmath>

#include "context_generate.h"
#include "engine/context.h"
#include "model/random_model.h"
#include "signals/kv_tap.h"
#include "signals/scored_generation.h"
#include "test_util.h"

namespace arch_signals_test {

using namespace kvscope;
using namespace kvscope::signals;

namespace {

std::unique_ptr<Model> arch_model(const std::string& arch) {
  RandomModelSpec s;
  s.arch = arch;
  s.dim = 64;
  s.layers = 4;
  s.heads = 4;
  s.kv_heads = 2;
  s.ffn = 128;
  s.vocab = 320;
  s.ctx = 256;
  s.sliding_window = 16;
  if (arch == "qwen3moe") s.experts = 4, s.expert_ffn = 64;
  auto p = (test::temp_dir() / ("sig_" + arch + ".gguf")).string();
  write_random_model(s, p);
  return Model::load(p);
}

}  // namespace

TEST(ArchSignals, ScoredGenerationOnGemma2AndMoeWithQuantizedKV) {
  for (const std::string arch : {"gemma2", "qwen3moe"}) {
    auto model = arch_model(arch);
    SamplingParams sp;
    sp.temperature = 0;
    SignalOptions so;
    so.extra = {{"all", parse_layers("all", model->hparams().n_layer), false}};
    const auto prompt = model->tokenizer().encode("hello world, this is a longer prompt than the window", true, false);
    for (KVType kt : {KVType::F32, KVType::INT8, KVType::INT4}) {
      Engine eng(*model, scored_engine_params(*model, {128, 1, 8, KVCacheTypes(kt, kt)}));
      if (arch == "gemma2") {
        EXPECT_NE(eng.swa_kv(), nullptr);  // the sliding layers' own pool
      }
      auto r = generate_scored(eng, prompt, sp, 24, so);
      ASSERT_EQ(r.gen.tokens.size(), 24u) << arch << " " << r.gen.stop_reason;
      const auto& s = r.signals;
      EXPECT_EQ(s.n_tokens, 24) << arch;
      EXPECT_GT(s.kv.coe_c, 0) << arch;
      EXPECT_TRUE(std::isfinite(s.kv.coe_r)) << arch;
      EXPECT_GT(s.max_prob, 0);
      EXPECT_GE(s.perplexity, 1);
      EXPECT_TRUE(s.has_hidden);
      // The tap does not change what is generated.
      Context plain(*model, {128, 1, 8, KVCacheTypes(kt, kt)});
      EXPECT_EQ(generate(plain, prompt, sp, 24).tokens, r.gen.tokens) << arch;
    }
  }
}

}  // namespace arch_signals_test
