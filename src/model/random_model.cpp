#include "model/random_model.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "gguf/gguf.h"
#include "model/model.h"
#include "util/error.h"
#include "util/rng.h"

namespace kvscope {
namespace {

// A fixed generator, so the same seed gives the same file on every platform.
using Rng = util::SplitMix64;

std::vector<uint8_t> encode(kernels::DType t, const std::vector<float>& x, int64_t cols) {
  const int64_t rows = static_cast<int64_t>(x.size()) / cols;
  const size_t rb = kernels::row_bytes(t, cols);
  std::vector<uint8_t> out(rb * rows);
  for (int64_t r = 0; r < rows; ++r) kernels::quantize_row(t, x.data() + r * cols, out.data() + r * rb, cols);
  return out;
}

struct VocabOut {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
};

VocabOut make_vocab(int n) {
  VocabOut v;
  std::set<std::string> seen;
  auto add = [&](const std::string& s, float score, int type) {
    if (static_cast<int>(v.tokens.size()) >= n || !seen.insert(s).second) return false;
    v.tokens.push_back(s);
    v.scores.push_back(score);
    v.types.push_back(type);
    return true;
  };
  add("<unk>", 0, 2);
  add("<s>", 0, 3);
  add("</s>", 0, 3);
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    add(buf, 0, 6);
  }
  const std::string space = "\xE2\x96\x81";  // U+2581, SentencePiece's space
  std::vector<std::string> chars = {space};
  for (char c = 'a'; c <= 'z'; ++c) chars.emplace_back(1, c);
  for (char c = 'A'; c <= 'Z'; ++c) chars.emplace_back(1, c);
  for (char c = '0'; c <= '9'; ++c) chars.emplace_back(1, c);
  for (char c : std::string(".,!?'\"-:;()")) chars.emplace_back(1, c);
  float score = -1000.0f;
  for (const auto& c : chars) add(c, score, 1);
  // Merged pieces: a space-prefixed letter run grows one letter at a time, so every piece's two
  // halves are in the vocabulary, as BPE requires.
  const std::string common = "etaoinshrdlucmfwypvbgkqjxz";
  std::vector<std::string> frontier;
  for (char c : common) frontier.push_back(space + c);
  score = -1.0f;
  for (const auto& p : frontier) add(p, score -= 0.001f, 1);
  for (size_t gen = 0; static_cast<int>(v.tokens.size()) < n && gen < 64; ++gen) {
    std::vector<std::string> next;
    for (const auto& p : frontier)
      for (char c : common) {
        if (static_cast<int>(v.tokens.size()) >= n) break;
        std::string s = p + c;
        if (add(s, score -= 0.001f, 1)) next.push_back(s);
      }
    frontier.swap(next);
  }
  if (static_cast<int>(v.tokens.size()) < n) throw InputError("vocabulary size too large for the generator");
  return v;
}

}  // namespace

void RandomModelSpec::validate() const {
  auto bad = [](const std::string& m) { throw InputError("gen-model: " + m); };
  if (arch != "llama" && arch != "mistral" && arch != "qwen2" && arch != "qwen3")
    bad("unknown architecture '" + arch + "' (llama, mistral, qwen2, qwen3)");
  if (dim <= 0 || layers <= 0 || heads <= 0 || kv_heads <= 0 || ffn <= 0 || ctx <= 0) bad("sizes must be positive");
  if (heads % kv_heads) bad("heads must be a multiple of kv-heads");
  const int hd = head_dim > 0 ? head_dim : dim / heads;
  if (head_dim == 0 && dim % heads) bad("dim must be a multiple of heads (or give --head-dim)");
  if (hd % 2 || hd > 1024) bad("head dimension must be even and <= 1024");
  if (!rope_scaling.empty() && rope_scaling != "linear" && rope_scaling != "llama3")
    bad("unknown rope scaling '" + rope_scaling + "' (none, linear, llama3)");
  if (!(rope_scale_factor > 0)) bad("rope scale must be positive");
  if (vocab < 300) bad("vocab must be at least 300 (controls + 256 byte tokens + characters)");
  const int64_t bs = kernels::block_size(type);
  if (dim % bs || ffn % bs || (static_cast<int64_t>(heads) * hd) % bs)
    bad(std::string("dim, ffn and heads*head_dim must be multiples of ") + std::to_string(bs) + " for " +
        kernels::dtype_name(type));
}

void write_random_model(const RandomModelSpec& s, const std::string& path) {
  s.validate();
  using gguf::Value;
  const int hd = s.head_dim > 0 ? s.head_dim : s.dim / s.heads;
  const int qd = s.heads * hd, kvd = s.kv_heads * hd;
  Rng rng{s.seed};
  gguf::Writer w;
  const std::string a = s.arch;
  w.set("general.architecture", Value::str(a));
  w.set("general.name", Value::str("kvscope-random-" + a));
  w.set(a + ".context_length", Value::u32(s.ctx));
  w.set(a + ".embedding_length", Value::u32(s.dim));
  w.set(a + ".block_count", Value::u32(s.layers));
  w.set(a + ".feed_forward_length", Value::u32(s.ffn));
  w.set(a + ".attention.head_count", Value::u32(s.heads));
  w.set(a + ".attention.head_count_kv", Value::u32(s.kv_heads));
  w.set(a + ".attention.key_length", Value::u32(hd));
  w.set(a + ".attention.value_length", Value::u32(hd));
  w.set(a + ".attention.layer_norm_rms_epsilon", Value::f32(1e-5f));
  w.set(a + ".rope.freq_base", Value::f32(s.rope_theta));
  w.set(a + ".rope.dimension_count", Value::u32(hd));
  // Linear scaling is metadata; llama3 scaling travels as a rope_freqs tensor, as converters write it.
  if (s.rope_scaling == "linear") {
    w.set(a + ".rope.scaling.type", Value::str("linear"));
    w.set(a + ".rope.scaling.factor", Value::f32(s.rope_scale_factor));
  }
  const uint32_t ftype = s.type == kernels::DType::F32 ? 0 : s.type == kernels::DType::F16 ? 1
                       : s.type == kernels::DType::Q4_0 ? 2 : s.type == kernels::DType::Q8_0 ? 7 : 32;
  w.set("general.file_type", Value::u32(ftype));
  VocabOut v = make_vocab(s.vocab);
  w.set("tokenizer.ggml.model", Value::str("llama"));
  w.set("tokenizer.ggml.tokens", Value::str_array(v.tokens));
  w.set("tokenizer.ggml.scores", Value::f32_array(v.scores));
  w.set("tokenizer.ggml.token_type", Value::i32_array(v.types));
  w.set("tokenizer.ggml.bos_token_id", Value::u32(1));
  w.set("tokenizer.ggml.eos_token_id", Value::u32(2));
  w.set("tokenizer.ggml.unknown_token_id", Value::u32(0));
  w.set("tokenizer.ggml.add_bos_token", Value::boolean(true));
  w.set("tokenizer.ggml.add_eos_token", Value::boolean(false));

  // Scales keep activations O(1) through the residual stream and give logits a spread of a few
  // units, so greedy choices are decisive rather than near-ties.
  auto matrix = [&](const std::string& name, int rows, int cols, float std_dev) {
    std::vector<float> x(static_cast<size_t>(rows) * cols);
    for (auto& e : x) e = static_cast<float>(rng.normal()) * std_dev;
    w.add_tensor(name, {cols, rows}, s.type, encode(s.type, x, cols));
  };
  auto vector = [&](const std::string& name, int n, float mean, float spread) {
    std::vector<float> x(n);
    for (auto& e : x) e = mean + spread * static_cast<float>(rng.normal());
    std::vector<uint8_t> b(n * sizeof(float));
    std::memcpy(b.data(), x.data(), b.size());
    w.add_tensor(name, {n}, kernels::DType::F32, std::move(b));
  };
  // A tied embedding doubles as the output matrix, so it gets the output's scale.
  matrix("token_embd.weight", s.vocab, s.dim, s.tied_output ? 4.0f / std::sqrt(static_cast<float>(s.dim)) : 1.0f);
  if (s.rope_scaling == "llama3") {
    auto ff = llama3_rope_freq_factors(s.rope_theta, hd, s.rope_scale_factor, 1.0f, 4.0f, 256);
    std::vector<uint8_t> b(ff.size() * sizeof(float));
    std::memcpy(b.data(), ff.data(), b.size());
    w.add_tensor("rope_freqs.weight", {static_cast<int64_t>(ff.size())}, kernels::DType::F32, std::move(b));
  }
  for (int l = 0; l < s.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    vector(p + "attn_norm.weight", s.dim, 1.0f, 0.1f);
    matrix(p + "attn_q.weight", qd, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
    matrix(p + "attn_k.weight", kvd, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
    matrix(p + "attn_v.weight", kvd, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
    if (a == "qwen2") {
      vector(p + "attn_q.bias", qd, 0.0f, 0.1f);
      vector(p + "attn_k.bias", kvd, 0.0f, 0.1f);
      vector(p + "attn_v.bias", kvd, 0.0f, 0.1f);
    }
    if (a == "qwen3") {
      vector(p + "attn_q_norm.weight", hd, 1.0f, 0.1f);
      vector(p + "attn_k_norm.weight", hd, 1.0f, 0.1f);
    }
    matrix(p + "attn_output.weight", s.dim, qd, 0.5f / std::sqrt(static_cast<float>(qd)));
    vector(p + "ffn_norm.weight", s.dim, 1.0f, 0.1f);
    matrix(p + "ffn_gate.weight", s.ffn, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
    matrix(p + "ffn_up.weight", s.ffn, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
    matrix(p + "ffn_down.weight", s.dim, s.ffn, 0.5f / std::sqrt(static_cast<float>(s.ffn)));
  }
  vector("output_norm.weight", s.dim, 1.0f, 0.1f);
  if (!s.tied_output) matrix("output.weight", s.vocab, s.dim, 4.0f / std::sqrt(static_cast<float>(s.dim)));
  w.write(path);
}

}  // namespace kvscope
