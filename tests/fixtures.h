// Shared test fixtures: small random-weight models written once per test process.
//
//   auto s = fixtures::tiny_spec();                 // 128-dim, 2 layers, 4/2 heads, vocab 400
//   s.seed = 23;                                    // adjust what the test cares about
//   const std::string path = fixtures::model_file(s, "sched");   // written once, then reused
//   const Model& m = fixtures::model(s, "sched");                // loaded once, then reused
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "model/model.h"
#include "model/random_model.h"
#include "test_util.h"

namespace kvscope::fixtures {

// The small llama shape most engine tests use; fields can be changed before use.
inline RandomModelSpec tiny_spec(int dim = 128, int layers = 2, int heads = 4, int kv_heads = 2, int ffn = 256,
                                 int vocab = 400, int ctx = 128, uint64_t seed = 11) {
  RandomModelSpec s;
  s.dim = dim, s.layers = layers, s.heads = heads, s.kv_heads = kv_heads, s.ffn = ffn, s.vocab = vocab, s.ctx = ctx;
  s.seed = seed;
  return s;
}

// The GGUF file of `spec` in the test temp folder, named `name`.gguf; written the first time it is
// asked for in this process (a name stands for one spec: the test that names it owns it).
inline std::string model_file(const RandomModelSpec& spec, const std::string& name) {
  const std::string path = (test::temp_dir() / (name + ".gguf")).string();
  if (!std::filesystem::exists(path)) write_random_model(spec, path);
  return path;
}

// The loaded model of model_file(spec, name), shared by the tests of this process.
inline const Model& model(const RandomModelSpec& spec, const std::string& name) {
  static std::map<std::string, std::unique_ptr<Model>> loaded;
  auto& m = loaded[name];
  if (!m) m = Model::load(model_file(spec, name));
  return *m;
}

}  // namespace kvscope::fixtures
