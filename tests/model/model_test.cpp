#include "model/model.h"

#include <gtest/gtest.h>

#include <fstream>

#include "model/random_model.h"
#include "fixtures.h"
#include "test_util.h"
#include "util/error.h"

namespace model_test {

using namespace kvscope;

namespace {
std::string expect_load_error(const std::string& path) {
  try {
    Model::load(path);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "model loaded: " << path;
  return "";
}
}  // namespace

TEST(Model, LoadsHyperParametersOfARealModel) {
  auto m = Model::load(test::shared_model("stories260K.gguf"));
  const auto& hp = m->hparams();
  EXPECT_EQ(hp.arch, Arch::Llama);
  EXPECT_EQ(hp.n_embd, 64);
  EXPECT_EQ(hp.n_layer, 5);
  EXPECT_EQ(hp.n_head, 8);
  EXPECT_EQ(hp.n_head_kv, 4);
  EXPECT_EQ(hp.n_vocab, 512);
  EXPECT_EQ(hp.n_ctx_train, 128);
  EXPECT_FALSE(hp.rope_neox);
}

TEST(Model, QwenUsesNeoxRopeAndItsExtraTensors) {
  RandomModelSpec s;
  s.arch = "qwen3";
  s.dim = 64;
  s.layers = 1;
  s.heads = 2;
  s.kv_heads = 1;
  s.head_dim = 64;
  s.ffn = 64;
  s.vocab = 320;
  auto p = (test::temp_dir() / "q3.gguf").string();
  write_random_model(s, p);
  auto m = Model::load(p);
  EXPECT_TRUE(m->hparams().rope_neox);
  EXPECT_EQ(m->hparams().head_dim, 64);
  EXPECT_NE(m->layers[0].q_norm, nullptr);
}

TEST(Model, UnknownArchitectureIsNamed) {
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::str("gpt-j"));
  auto p = (test::temp_dir() / "gptj.gguf").string();
  w.write(p);
  EXPECT_NE(expect_load_error(p).find("unknown architecture 'gpt-j'"), std::string::npos);
}

TEST(Model, TruncatedFileIsRefused) {
  RandomModelSpec s = fixtures::tiny_spec(64, 1, 2, 1, 64, 320, 512, 1);
  auto p = (test::temp_dir() / "trunc_src.gguf").string();
  write_random_model(s, p);
  std::ifstream in(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  auto q = (test::temp_dir() / "trunc.gguf").string();
  std::ofstream(q, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 100));
  EXPECT_NE(expect_load_error(q).find("truncated"), std::string::npos);
  EXPECT_NE(expect_load_error("/no/such/file.gguf").find("cannot open"), std::string::npos);
}

TEST(Model, WrongTensorShapeIsNamed) {
  // A Q weight of the wrong width: the error names the tensor and both shapes.
  RandomModelSpec s = fixtures::tiny_spec(64, 1, 2, 1, 64, 320, 512, 1);
  auto p = (test::temp_dir() / "shape_src.gguf").string();
  write_random_model(s, p);
  auto f = gguf::File::open(p);
  gguf::Writer w;
  for (const auto& [k, v] : f->metadata()) w.set(k, v);
  for (const auto& t : f->tensors()) {
    auto ne = t.ne;
    std::vector<uint8_t> b(t.data, t.data + t.nbytes);
    if (t.name == "blk.0.attn_q.weight") {
      ne = {32, 128};
      b.resize(32 * 128 * 4);
    }
    w.add_tensor(t.name, ne, t.type, b);
  }
  auto q = (test::temp_dir() / "shape.gguf").string();
  w.write(q);
  auto msg = expect_load_error(q);
  EXPECT_NE(msg.find("blk.0.attn_q.weight"), std::string::npos) << msg;
}

}  // namespace model_test
