#include "reasoning/difficulty_mlp.h"

#include "util/error.h"
#include "util/model_file.h"

namespace kvscope::reasoning {

namespace {
constexpr char kMagic[8] = {'K', 'V', 'S', 'D', 'I', 'F', 'F', '1'};
constexpr uint32_t kVersion = 1;
}  // namespace

void save_difficulty(const std::string& path, const DifficultyFile& f) {
  ModelFileWriter o(kMagic, kVersion, f.model_fingerprint);
  o.put<uint32_t>(static_cast<uint32_t>(f.features.layers.size()));
  for (int l : f.features.layers) o.put<int32_t>(l);
  o.put<double>(f.features.prompt_fraction);
  o.put<uint8_t>(f.features.pre_rope);
  o.str(f.info);
  o.put<int32_t>(f.mlp.input_dim());
  o.put<int32_t>(f.mlp.hidden());
  o.floats(f.mlp.pack());
  o.save(path, "difficulty file");
}

DifficultyFile load_difficulty(const std::string& path, uint64_t expect_fingerprint) {
  ModelFileReader in(path, kMagic, kVersion, "difficulty file", expect_fingerprint,
                     "retrain it with kvscope train-difficulty for this model");
  DifficultyFile f;
  f.model_fingerprint = in.fingerprint();
  const uint32_t nl = in.get<uint32_t>();
  if (nl > 4096) throw in.damaged("layer count");
  for (uint32_t i = 0; i < nl; ++i) f.features.layers.push_back(in.get<int32_t>());
  f.features.prompt_fraction = in.get<double>();
  f.features.pre_rope = in.get<uint8_t>() != 0;
  if (!(f.features.prompt_fraction > 0 && f.features.prompt_fraction <= 1)) throw in.damaged("prompt fraction");
  f.info = in.str();
  const int32_t din = in.get<int32_t>(), hid = in.get<int32_t>();
  if (din <= 0 || hid <= 0 || din > (1 << 22) || hid > (1 << 16)) throw in.damaged("dimensions");
  const std::vector<float> w = in.floats(uint64_t{1} << 28);
  try {
    f.mlp.unpack(din, hid, w);
  } catch (const InputError&) {
    throw in.damaged("weights do not match its dimensions");
  }
  in.expect_end();
  return f;
}

std::string sibling_difficulty_path(const std::string& model_path) {
  return sibling_model_file(model_path, ".difficulty.bin");
}

}  // namespace kvscope::reasoning
