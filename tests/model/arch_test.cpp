// The architectures beyond llama/qwen: gemma2, gemma3, phi3 and the MoE families load with the
// settings their reference implementations use, and malformed MoE files are refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine/context.h"
#include "engine/moe.h"
#include "gguf/gguf.h"
#include "model/model.h"
#include "model/random_model.h"
#include "test_util.h"
#include "util/error.h"

namespace arch_test {

using namespace kvscope;

namespace {

RandomModelSpec small(const std::string& arch, int layers = 2) {
  RandomModelSpec s;
  s.arch = arch;
  s.dim = 64;
  s.layers = layers;
  s.heads = 2;
  s.kv_heads = 1;
  s.ffn = 96;
  s.vocab = 320;
  s.ctx = 256;
  return s;
}

std::string write(const RandomModelSpec& s, const std::string& name) {
  auto p = (test::temp_dir() / (name + ".gguf")).string();
  write_random_model(s, p);
  return p;
}

// Copies a GGUF file, leaving out one tensor and/or replacing one integer key.
std::string rewrite(const std::string& src, const std::string& name, const std::string& drop_tensor,
                    const std::string& key = "", uint32_t value = 0) {
  auto f = gguf::File::open(src);
  gguf::Writer w;
  for (const auto& [k, v] : f->metadata()) w.set(k, k == key ? gguf::Value::u32(value) : v);
  for (const auto& t : f->tensors()) {
    if (t.name == drop_tensor) continue;
    const size_t bytes = kernels::row_bytes(t.type, t.ne[0]) * static_cast<size_t>(t.n_elements() / t.ne[0]);
    const auto* b = static_cast<const uint8_t*>(t.data);
    w.add_tensor(t.name, t.ne, t.type, std::vector<uint8_t>(b, b + bytes));
  }
  auto p = (test::temp_dir() / (name + ".gguf")).string();
  w.write(p);
  return p;
}

std::string load_error(const std::string& path) {
  try {
    Model::load(path);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "loaded: " << path;
  return "";
}

}  // namespace

TEST(Arch, Gemma2SlidesOnEvenLayersAndSoftCaps) {
  auto s = small("gemma2", 4);
  s.sliding_window = 32;
  auto m = Model::load(write(s, "g2"));
  const HParams& hp = m->hparams();
  EXPECT_EQ(hp.arch, Arch::Gemma2);
  EXPECT_TRUE(hp.rope_neox);
  EXPECT_TRUE(hp.ffn_gelu);
  EXPECT_FLOAT_EQ(hp.embd_scale, 8.0f);  // sqrt(64)
  EXPECT_FLOAT_EQ(hp.attn_softcap, 50.0f);
  EXPECT_FLOAT_EQ(hp.final_softcap, 30.0f);
  EXPECT_FLOAT_EQ(hp.attn_scale, 1.0f / std::sqrt(32.0f));
  EXPECT_EQ(hp.n_swa, 32);
  EXPECT_TRUE(hp.is_swa(0));
  EXPECT_FALSE(hp.is_swa(1));
  EXPECT_TRUE(hp.is_swa(2));
  EXPECT_FALSE(hp.is_swa(3));
  EXPECT_NE(m->layers[0].attn_post_norm, nullptr);
  EXPECT_NE(m->layers[0].ffn_post_norm, nullptr);
  EXPECT_EQ(m->output.data, m->tok_embd.data);  // tied
}

TEST(Arch, Gemma3HasOneGlobalLayerInSixAndItsOwnLocalRopeBase) {
  auto s = small("gemma3", 7);
  s.rope_theta = 1e6f;
  auto m = Model::load(write(s, "g3"));
  const HParams& hp = m->hparams();
  for (int l = 0; l < 7; ++l) EXPECT_EQ(hp.is_swa(l), l != 5) << l;
  EXPECT_FLOAT_EQ(hp.rope_theta, 1e6f);
  EXPECT_FLOAT_EQ(hp.rope_theta_swa, 10000.0f);
  EXPECT_EQ(hp.attn_softcap, 0.0f);
  EXPECT_EQ(hp.final_softcap, 0.0f);
  EXPECT_NE(m->layers[0].q_norm, nullptr);
}

TEST(Arch, Phi3FusedMatricesAreViewsAndLongRopePicksByContext) {
  auto s = small("phi3");
  s.heads = 2;
  s.kv_heads = 2;
  s.rope_scaling = "longrope";
  auto path = write(s, "phi3");
  auto m = Model::load(path);
  auto f = gguf::File::open(path);
  const auto& qkv = f->tensor("blk.0.attn_qkv.weight");
  EXPECT_EQ(qkv.ne[1], 3 * 64);
  EXPECT_EQ(m->layers[0].wq.rows, 64);
  EXPECT_EQ(m->layers[0].wk.rows, 64);
  EXPECT_EQ(m->layers[0].w_gate.rows, 96);
  EXPECT_EQ(m->layers[0].w_up.rows, 96);
  const HParams& hp = m->hparams();
  EXPECT_EQ(hp.rope_orig_ctx, 128);
  EXPECT_GT(hp.rope_attn_factor, 1.0f);
  ASSERT_NE(m->rope_factors_long, nullptr);
  EXPECT_EQ(m->rope_freqs_for(256), m->rope_factors_long);
  EXPECT_EQ(m->rope_freqs_for(128), m->rope_factors_short);
}

TEST(Arch, MoeFamiliesLoadWithTheirRouting) {
  for (const std::string arch : {"qwen2moe", "qwen3moe", "olmoe", "llama"}) {
    auto s = small(arch);
    if (arch == "olmoe") s.kv_heads = s.heads;
    s.experts = 4;
    s.experts_used = 2;
    s.expert_ffn = 32;
    auto m = Model::load(write(s, "moe_" + arch));
    const HParams& hp = m->hparams();
    EXPECT_EQ(hp.n_expert, 4) << arch;
    EXPECT_EQ(hp.n_expert_used, 2) << arch;
    EXPECT_EQ(hp.n_ff_exp, 32) << arch;
    EXPECT_EQ(hp.expert_norm, arch == "qwen3moe" || arch == "llama") << arch;
    EXPECT_EQ(m->layers[0].gate_exps.size(), 4u);
    EXPECT_EQ(m->layers[0].has_shexp(), arch == "qwen2moe") << arch;
    // Expert views are consecutive slices of one tensor.
    if (!m->layers[0].gate_exps[0].packed) {
      EXPECT_EQ(static_cast<const uint8_t*>(m->layers[0].gate_exps[1].data) -
                    static_cast<const uint8_t*>(m->layers[0].gate_exps[0].data),
                static_cast<ptrdiff_t>(kernels::row_bytes(kernels::DType::F32, 64) * 32));
    }
  }
}

TEST(Arch, MoeRouterNormalizesPerFamily) {
  HParams hp;
  hp.n_expert = 4;
  hp.n_expert_used = 2;
  float logits[4] = {0.0f, 2.0f, 1.0f, -1.0f};
  int sel[2];
  float w[2];
  float l2[4];
  std::memcpy(l2, logits, sizeof l2);
  moe_route(hp, l2, 1, sel, w);
  EXPECT_EQ(sel[0], 1);
  EXPECT_EQ(sel[1], 2);
  const double z = std::exp(0.0) + std::exp(2.0) + std::exp(1.0) + std::exp(-1.0);
  EXPECT_NEAR(w[0], std::exp(2.0) / z, 1e-6);  // qwen2moe/olmoe: plain softmax probabilities
  EXPECT_NEAR(w[1], std::exp(1.0) / z, 1e-6);
  hp.expert_norm = true;  // qwen3moe/Mixtral: renormalized over the chosen experts
  std::memcpy(l2, logits, sizeof l2);
  moe_route(hp, l2, 1, sel, w);
  EXPECT_NEAR(w[0], std::exp(2.0) / (std::exp(2.0) + std::exp(1.0)), 1e-6);
  EXPECT_NEAR(w[0] + w[1], 1.0, 1e-6);
}

TEST(Arch, MissingExpertTensorIsNamed) {
  auto s = small("qwen3moe");
  s.experts = 4;
  auto good = write(s, "moe_good");
  auto msg = load_error(rewrite(good, "moe_missing", "blk.1.ffn_up_exps.weight"));
  EXPECT_NE(msg.find("missing expert tensor blk.1.ffn_up_exps.weight"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
}

TEST(Arch, ExpertUsedCountAboveExpertCountIsRefused) {
  auto s = small("olmoe");
  s.experts = 4;
  auto good = write(s, "moe_good2");
  auto msg = load_error(rewrite(good, "moe_used", "", "olmoe.expert_used_count", 9));
  EXPECT_NE(msg.find("olmoe.expert_used_count 9 must be between 1 and olmoe.expert_count 4"), std::string::npos) << msg;
}

// Prefill runs each expert once over all the tokens routed to it; decode runs token by token.
// Both must give the same logits (and gemma's windowed layers the same in both paths).
TEST(Arch, PrefillEqualsTokenByTokenDecode) {
  for (const std::string arch : {"qwen2moe", "gemma2", "gemma3", "phi3"}) {
    auto s = small(arch, arch == "gemma3" ? 6 : 2);
    if (arch == "qwen2moe") s.experts = 4, s.expert_ffn = 32;
    s.sliding_window = 8;
    if (arch == "phi3") s.kv_heads = 2;
    auto m = Model::load(write(s, "pd_" + arch));
    std::vector<int32_t> toks;
    for (int i = 0; i < 40; ++i) toks.push_back(3 + (i * 37) % 300);
    Context a(*m, {64, 2, 512});
    auto all = a.eval(toks, true);
    Context b(*m, {64, 2, 512});
    const int nv = m->hparams().n_vocab;
    double worst = 0;
    for (size_t t = 0; t < toks.size(); ++t) {
      const auto& l = b.eval({toks[t]});
      for (int i = 0; i < nv; ++i) worst = std::max(worst, std::fabs(static_cast<double>(l[i]) - all[t * nv + i]));
    }
    // gemma's GELU rounds to fp16: a last-bit difference between the prefill (GEMM) and decode
    // (GEMV) sums can move an activation by one fp16 step, which the layers carry on.
    const bool gemma = arch.rfind("gemma", 0) == 0;
    EXPECT_LT(worst, gemma ? 2e-2 : 2e-3) << arch;
    std::printf("[prefill-vs-decode] %-9s max |dlogit| %.2e\n", arch.c_str(), worst);
  }
}

}  // namespace arch_test
