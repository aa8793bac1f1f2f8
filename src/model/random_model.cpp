#include "model/random_model.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
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

// llama.cpp's general.file_type numbering (LLAMA_FTYPE_MOSTLY_*) for a file whose matrices are t.
uint32_t llama_file_type(kernels::DType t) {
  using kernels::DType;
  switch (t) {
    case DType::F32: return 0;
    case DType::F16: return 1;
    case DType::Q4_0: return 2;
    case DType::Q4_1: return 3;
    case DType::Q8_0: return 7;
    case DType::Q5_0: return 8;
    case DType::Q5_1: return 9;
    case DType::IQ4_NL: return 25;
    case DType::IQ4_XS: return 30;
    case DType::Q2_K: return 10;
    case DType::Q3_K: return 11;
    case DType::Q4_K: return 14;
    case DType::Q5_K: return 16;
    case DType::Q6_K: return 18;
    default: return 32;  // BF16
  }
}

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

VocabOut make_vocab(int n, const std::vector<std::string>& extra_controls = {}) {
  VocabOut v;
  const int n_total = n;
  n -= static_cast<int>(extra_controls.size());
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
  // A family's chat/control tokens at the end, as its tokenizer has them (phi3's loader in llama.cpp
  // looks <|endoftext|> up by name).
  n = n_total;
  for (const auto& t : extra_controls) add(t, 0, 3);
  return v;
}

}  // namespace

void RandomModelSpec::validate() const {
  auto bad = [](const std::string& m) { throw InputError("gen-model: " + m); };
  static const std::set<std::string> archs = {"llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3",
                                              "phi3", "qwen2moe", "qwen3moe", "olmoe"};
  if (!archs.count(arch))
    bad("unknown architecture '" + arch + "' (llama, mistral, qwen2, qwen3, gemma2, gemma3, phi3, qwen2moe, qwen3moe, olmoe)");
  const bool moe_arch = arch == "qwen2moe" || arch == "qwen3moe" || arch == "olmoe";
  if (experts < 0 || experts_used < 0 || expert_ffn < 0 || shared_ffn < 0) bad("expert sizes must be >= 0");
  if (experts > 0 && !moe_arch && arch != "llama" && arch != "mistral") bad("experts need a MoE architecture or llama/mistral");
  if (experts > 0 || moe_arch) {
    const int ne = experts > 0 ? experts : 8, nu = experts_used > 0 ? experts_used : 2;
    if (nu > ne) bad("experts-used must not exceed experts");
    const int64_t bs0 = kernels::block_size(type);
    if ((expert_ffn > 0 ? expert_ffn : ffn) % bs0 || (shared_ffn > 0 ? shared_ffn : ffn) % bs0)
      bad("expert feed-forward sizes must be multiples of the type's block size");
  }
  if (dim <= 0 || layers <= 0 || heads <= 0 || kv_heads <= 0 || ffn <= 0 || ctx <= 0) bad("sizes must be positive");
  if (heads % kv_heads) bad("heads must be a multiple of kv-heads");
  const int hd = head_dim > 0 ? head_dim : dim / heads;
  if (head_dim == 0 && dim % heads) bad("dim must be a multiple of heads (or give --head-dim)");
  if (hd % 2 || hd > 1024) bad("head dimension must be even and <= 1024");
  if (!rope_scaling.empty() && rope_scaling != "linear" && rope_scaling != "llama3" && rope_scaling != "longrope")
    bad("unknown rope scaling '" + rope_scaling + "' (none, linear, llama3, longrope)");
  if (rope_scaling == "longrope" && arch != "phi3") bad("longrope scaling is phi3's");
  if (arch == "phi3" && heads * hd != dim) bad("phi3 needs heads * head_dim == dim");
  if (sliding_window < 0) bad("sliding window must be >= 0");
  if (!(rope_scale_factor > 0)) bad("rope scale must be positive");
  if (vocab < 300) bad("vocab must be at least 300 (controls + 256 byte tokens + characters)");
  // K-quant and IQ4_XS tensors whose rows are not a multiple of 256 fall back to a 32-block type.
  const int64_t bs = kernels::is_kquant(type) || type == kernels::DType::IQ4_XS ? 32 : kernels::block_size(type);
  if (dim % bs || ffn % bs || (static_cast<int64_t>(heads) * hd) % bs)
    bad(std::string("dim, ffn and heads*head_dim must be multiples of ") + std::to_string(bs) + " for " +
        kernels::dtype_name(type));
}

namespace {
// llama-quantize's rule for spending more bits on some layers' attn_v / ffn_down: the first and
// last eighth of the layers and every third layer in between.
bool more_bits(int layer, int n_layers) {
  return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}
}  // namespace

kernels::DType RandomModelSpec::tensor_type(const std::string& name, int64_t cols) const {
  using kernels::DType;
  DType t = type;
  int layer = -1;
  if (name.rfind("blk.", 0) == 0) layer = std::atoi(name.c_str() + 4);
  auto is = [&](const char* part) { return name.find(part) != std::string::npos; };
  const bool output = name == "output.weight" || (tied_output && name == "token_embd.weight");
  if (mix == "q4_k_m" || mix == "q5_k_m") {
    if (output || ((is("attn_v.") || is("ffn_down.")) && more_bits(layer, layers))) t = DType::Q6_K;
  } else if (mix == "q3_k_m") {
    if (output) t = DType::Q6_K;
    else if (is("attn_v.")) t = layer < 2 ? DType::Q5_K : DType::Q4_K;
    else if (is("attn_output.")) t = DType::Q4_K;
    else if (is("ffn_down.")) t = layer < layers / 16 ? DType::Q5_K : more_bits(layer, layers) ? DType::Q4_K : DType::Q3_K;
  }
  if ((kernels::is_kquant(t) || t == DType::IQ4_XS) && cols % 256 != 0) {
    // As llama-quantize does: IQ4_NL for Q2_K, Q3_K and IQ4_XS, Q5_0 for Q4_K, Q5_1 for Q5_K, Q8_0 for Q6_K.
    t = t == DType::Q6_K ? DType::Q8_0 : t == DType::Q5_K ? DType::Q5_1 : t == DType::Q4_K ? DType::Q5_0 : DType::IQ4_NL;
  }
  if (cols % kernels::block_size(t) != 0) t = DType::F16;
  return t;
}

void set_random_model_type(RandomModelSpec& spec, const std::string& name) {
  std::string s = name;
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  spec.mix.clear();
  if (s == "q4_k_m" || s == "q5_k_m" || s == "q3_k_m") {
    spec.mix = s;
    spec.type = s == "q4_k_m" ? kernels::DType::Q4_K : s == "q5_k_m" ? kernels::DType::Q5_K : kernels::DType::Q3_K;
    return;
  }
  try {
    spec.type = kernels::dtype_from_name(name);
  } catch (const InputError&) {
    throw InputError("unknown model type '" + name +
                     "' (expected f32, f16, bf16, q8_0, q4_0, q2_k, q3_k, q4_k, q5_k, q6_k, q4_k_m, q5_k_m or q3_k_m)");
  }
  if (spec.type == kernels::DType::Q8_K) throw InputError("q8_k is an activation type, not a weight type");
}

namespace {

// Copies a real vocabulary's tokenizer.* keys into w; returns its size. Added tokens take the places
// of the file's padding entries ("[PAD<id>]", as llama.cpp's test vocabularies pad Qwen's 151646
// tokens to 151936), so Qwen3's <think> lands on its real id; without padding they are appended.
int copy_vocab(gguf::Writer& w, const RandomModelSpec& s) {
  using gguf::Value;
  const auto f = gguf::File::open(s.vocab_from);
  const Value* tv = f->find("tokenizer.ggml.tokens");
  if (!tv) throw InputError("gen-model: " + s.vocab_from + " has no tokenizer.ggml.tokens");
  std::vector<std::string> toks;
  for (const auto& t : tv->as_array().items) toks.push_back(t.as_string());
  std::vector<int32_t> types(toks.size(), 1);
  std::vector<float> scores(toks.size(), 0.0f);
  if (const Value* ty = f->find("tokenizer.ggml.token_type"))
    for (size_t i = 0; i < ty->as_array().items.size() && i < types.size(); ++i)
      types[i] = static_cast<int32_t>(ty->as_array().items[i].as_int());
  const Value* sc = f->find("tokenizer.ggml.scores");
  if (sc)
    for (size_t i = 0; i < sc->as_array().items.size() && i < scores.size(); ++i)
      scores[i] = static_cast<float>(sc->as_array().items[i].as_float());
  size_t at = 0;
  while (at < toks.size() && toks[at] != "[PAD" + std::to_string(at) + "]") ++at;
  for (const auto& t : s.added_tokens) {
    if (at >= toks.size()) {
      toks.push_back(t);
      types.push_back(0);
      scores.push_back(0.0f);
    }
    toks[at] = t;
    types[at] = t.rfind("<|", 0) == 0 ? 3 : 4;  // control : user-defined
    scores[at] = 0.0f;
    ++at;
  }
  for (const auto& [key, val] : f->metadata()) {
    if (key.rfind("tokenizer.", 0) != 0) continue;
    if (key == "tokenizer.chat_template" && !s.chat_template.empty()) continue;
    if (key == "tokenizer.ggml.tokens") w.set(key, Value::str_array(toks));
    else if (key == "tokenizer.ggml.token_type") w.set(key, Value::i32_array(types));
    else if (key == "tokenizer.ggml.scores") w.set(key, Value::f32_array(scores));
    else w.set(key, val);
  }
  return static_cast<int>(toks.size());
}

}  // namespace

void write_random_model(const RandomModelSpec& spec, const std::string& path) {
  spec.validate();
  RandomModelSpec s = spec;
  using gguf::Value;
  const int hd = s.head_dim > 0 ? s.head_dim : s.dim / s.heads;
  const int qd = s.heads * hd, kvd = s.kv_heads * hd;
  Rng rng{s.seed};
  gguf::Writer w;
  const std::string a = s.arch;
  const bool gemma = a == "gemma2" || a == "gemma3";
  const bool moe = s.experts > 0 || a == "qwen2moe" || a == "qwen3moe" || a == "olmoe";
  const int n_exp = s.experts > 0 ? s.experts : 8, n_used = s.experts_used > 0 ? s.experts_used : 2;
  const int ffe = s.expert_ffn > 0 ? s.expert_ffn : s.ffn, ffs = s.shared_ffn > 0 ? s.shared_ffn : s.ffn;
  // gemma2 reads its output matrix from the token embedding (gemma3 takes output.weight if there).
  const bool tied = s.tied_output || a == "gemma2";
  w.set("general.architecture", Value::str(a));
  w.set("general.name", Value::str(s.name.empty() ? "kvscope-random-" + a : s.name));
  w.set(a + ".context_length", Value::u32(s.ctx));
  w.set(a + ".embedding_length", Value::u32(s.dim));
  w.set(a + ".block_count", Value::u32(s.layers));
  // olmoe and Mixtral give the expert size as feed_forward_length; the qwen MoEs have their own keys.
  w.set(a + ".feed_forward_length", Value::u32(moe && (a == "olmoe" || a == "llama" || a == "mistral") ? ffe : s.ffn));
  if (moe) {
    w.set(a + ".expert_count", Value::u32(n_exp));
    w.set(a + ".expert_used_count", Value::u32(n_used));
    if (a == "qwen2moe" || a == "qwen3moe") w.set(a + ".expert_feed_forward_length", Value::u32(ffe));
    if (a == "qwen2moe") w.set(a + ".expert_shared_feed_forward_length", Value::u32(ffs));
  }
  w.set(a + ".attention.head_count", Value::u32(s.heads));
  w.set(a + ".attention.head_count_kv", Value::u32(s.kv_heads));
  w.set(a + ".attention.key_length", Value::u32(hd));
  w.set(a + ".attention.value_length", Value::u32(hd));
  w.set(a + ".attention.layer_norm_rms_epsilon", Value::f32(gemma ? 1e-6f : 1e-5f));
  w.set(a + ".rope.freq_base", Value::f32(s.rope_theta));
  w.set(a + ".rope.dimension_count", Value::u32(hd));
  if (gemma) {
    // As Google's configs: gemma2 caps attention logits at 50 and output logits at 30 and slides
    // on every other layer; gemma3 slides on 5 of every 6 layers with a 10000 rope base there.
    w.set(a + ".attention.sliding_window", Value::u32(s.sliding_window > 0 ? s.sliding_window : a == "gemma2" ? 4096 : 512));
    if (a == "gemma2") {
      w.set(a + ".attn_logit_softcapping", Value::f32(50.0f));
      w.set(a + ".final_logit_softcapping", Value::f32(30.0f));
    } else {
      w.set(a + ".attention.sliding_window_pattern", Value::u32(6));
      w.set(a + ".rope.freq_base_swa", Value::f32(10000.0f));
    }
  }
  // phi3's long-context rope: per-dimension divisors for contexts above the original length (long)
  // and within it (short), and the attention factor that goes with them, as its converter writes.
  const int longrope_orig = s.ctx / 2;
  if (s.rope_scaling == "longrope") {
    w.set(a + ".rope.scaling.original_context_length", Value::u32(longrope_orig));
    const double scale = static_cast<double>(s.ctx) / longrope_orig;
    w.set(a + ".rope.scaling.attn_factor", Value::f32(static_cast<float>(std::sqrt(1 + std::log(scale) / std::log(longrope_orig)))));
  }
  // Linear scaling is metadata; llama3 scaling travels as a rope_freqs tensor, as converters write it.
  if (s.rope_scaling == "linear") {
    w.set(a + ".rope.scaling.type", Value::str("linear"));
    w.set(a + ".rope.scaling.factor", Value::f32(s.rope_scale_factor));
  }
  // llama.cpp's file-type ids (LLAMA_FTYPE_*): a pure K-quant file is reported as its _S variant.
  uint32_t ftype = llama_file_type(s.type);
  if (s.mix == "q4_k_m") ftype = 15;
  if (s.mix == "q5_k_m") ftype = 17;
  if (s.mix == "q3_k_m") ftype = 12;
  w.set("general.file_type", Value::u32(ftype));
  std::vector<std::string> controls;
  if (a == "phi3") controls = {"<|endoftext|>", "<|assistant|>", "<|end|>", "<|system|>", "<|user|>"};
  if (gemma) controls = {"<start_of_turn>", "<end_of_turn>"};
  if (!s.vocab_from.empty()) {
    s.vocab = copy_vocab(w, s);
  } else {
    controls.insert(controls.end(), s.added_tokens.begin(), s.added_tokens.end());
    VocabOut v = make_vocab(s.vocab, controls);
    w.set("tokenizer.ggml.model", Value::str("llama"));
    w.set("tokenizer.ggml.tokens", Value::str_array(v.tokens));
    w.set("tokenizer.ggml.scores", Value::f32_array(v.scores));
    w.set("tokenizer.ggml.token_type", Value::i32_array(v.types));
    w.set("tokenizer.ggml.bos_token_id", Value::u32(1));
    w.set("tokenizer.ggml.eos_token_id", Value::u32(2));
    w.set("tokenizer.ggml.unknown_token_id", Value::u32(0));
    w.set("tokenizer.ggml.add_bos_token", Value::boolean(true));
    w.set("tokenizer.ggml.add_eos_token", Value::boolean(false));
  }
  if (!s.chat_template.empty()) w.set("tokenizer.chat_template", Value::str(s.chat_template));

  // Scales keep activations O(1) through the residual stream and give logits a spread of a few
  // units, so greedy choices are decisive rather than near-ties.
  auto matrix = [&](const std::string& name, int rows, int cols, float std_dev) {
    std::vector<float> x(static_cast<size_t>(rows) * cols);
    for (auto& e : x) e = static_cast<float>(rng.normal()) * std_dev;
    const kernels::DType t = s.tensor_type(name, cols);
    w.add_tensor(name, {cols, rows}, t, encode(t, x, cols));
  };
  auto vector = [&](const std::string& name, int n, float mean, float spread) {
    std::vector<float> x(n);
    for (auto& e : x) e = mean + spread * static_cast<float>(rng.normal());
    std::vector<uint8_t> b(n * sizeof(float));
    std::memcpy(b.data(), x.data(), b.size());
    w.add_tensor(name, {n}, kernels::DType::F32, std::move(b));
  };
  // A tied embedding doubles as the output matrix, so it gets the output's scale.
  // Gemma multiplies embeddings by sqrt(dim); a small tied embedding keeps the token's own row from
  // dominating the residual stream (and so the output: every step would repeat the input token).
  const float embd_std = gemma ? (tied ? 0.5f : 1.0f) / std::sqrt(static_cast<float>(s.dim))
                               : tied ? 4.0f / std::sqrt(static_cast<float>(s.dim)) : 1.0f;
  matrix("token_embd.weight", s.vocab, s.dim, embd_std);
  auto factors = [&](const std::string& name, float lo, float hi) {
    std::vector<float> x(hd / 2);
    for (int i = 0; i < hd / 2; ++i) x[i] = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(hd / 2);
    std::vector<uint8_t> b(x.size() * sizeof(float));
    std::memcpy(b.data(), x.data(), b.size());
    w.add_tensor(name, {static_cast<int64_t>(x.size())}, kernels::DType::F32, std::move(b));
  };
  if (s.rope_scaling == "longrope") {
    factors("rope_factors_long.weight", 1.0f, 8.0f);
    factors("rope_factors_short.weight", 1.0f, 1.5f);
  }
  if (s.rope_scaling == "llama3") {
    auto ff = llama3_rope_freq_factors(s.rope_theta, hd, s.rope_scale_factor, 1.0f, 4.0f, 256);
    std::vector<uint8_t> b(ff.size() * sizeof(float));
    std::memcpy(b.data(), ff.data(), b.size());
    w.add_tensor("rope_freqs.weight", {static_cast<int64_t>(ff.size())}, kernels::DType::F32, std::move(b));
  }
  for (int l = 0; l < s.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    // Norm weights near 1: for gemma that is the stored (1 + w), as its converter writes them.
    vector(p + "attn_norm.weight", s.dim, 1.0f, 0.1f);
    if (a == "phi3") {
      matrix(p + "attn_qkv.weight", qd + 2 * kvd, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
    } else {
      matrix(p + "attn_q.weight", qd, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
      matrix(p + "attn_k.weight", kvd, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
      matrix(p + "attn_v.weight", kvd, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
    }
    if (a == "qwen2" || a == "qwen2moe") {
      vector(p + "attn_q.bias", qd, 0.0f, 0.1f);
      vector(p + "attn_k.bias", kvd, 0.0f, 0.1f);
      vector(p + "attn_v.bias", kvd, 0.0f, 0.1f);
    }
    if (a == "qwen3" || a == "gemma3" || a == "qwen3moe") {
      vector(p + "attn_q_norm.weight", hd, 1.0f, 0.1f);
      vector(p + "attn_k_norm.weight", hd, 1.0f, 0.1f);
    }
    if (a == "olmoe") {  // over the whole Q and K rows
      vector(p + "attn_q_norm.weight", qd, 1.0f, 0.1f);
      vector(p + "attn_k_norm.weight", kvd, 1.0f, 0.1f);
    }
    matrix(p + "attn_output.weight", s.dim, qd, 0.5f / std::sqrt(static_cast<float>(qd)));
    if (gemma) vector(p + "post_attention_norm.weight", s.dim, 1.0f, 0.1f);
    vector(p + "ffn_norm.weight", s.dim, 1.0f, 0.1f);
    if (moe) {
      // The router stays F32 as quantizers leave it; the experts are 3-D [cols, rows, experts].
      // Router logits a few units apart make the top-k choice decisive, not a near-tie.
      std::vector<float> r(static_cast<size_t>(n_exp) * s.dim);
      for (auto& e : r) e = rng.normal() * 3.0f / std::sqrt(static_cast<float>(s.dim));
      w.add_tensor(p + "ffn_gate_inp.weight", {s.dim, n_exp}, kernels::DType::F32, encode(kernels::DType::F32, r, s.dim));
      auto experts = [&](const std::string& name, int rows, int cols, float std_dev) {
        std::vector<float> x(static_cast<size_t>(rows) * cols * n_exp);
        for (auto& e : x) e = rng.normal() * std_dev;
        w.add_tensor(name, {cols, rows, n_exp}, s.type, encode(s.type, x, cols));
      };
      experts(p + "ffn_gate_exps.weight", ffe, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
      experts(p + "ffn_up_exps.weight", ffe, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
      experts(p + "ffn_down_exps.weight", s.dim, ffe, 0.5f / std::sqrt(static_cast<float>(ffe)));
      if (a == "qwen2moe") {
        vector(p + "ffn_gate_inp_shexp.weight", s.dim, 0.0f, 1.0f / std::sqrt(static_cast<float>(s.dim)));
        matrix(p + "ffn_gate_shexp.weight", ffs, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
        matrix(p + "ffn_up_shexp.weight", ffs, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
        matrix(p + "ffn_down_shexp.weight", s.dim, ffs, 0.5f / std::sqrt(static_cast<float>(ffs)));
      }
    } else if (a == "phi3") {  // gate rows then up rows in one matrix
      matrix(p + "ffn_up.weight", 2 * s.ffn, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
    } else {
      matrix(p + "ffn_gate.weight", s.ffn, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
      matrix(p + "ffn_up.weight", s.ffn, s.dim, 1.0f / std::sqrt(static_cast<float>(s.dim)));
    }
    if (!moe) matrix(p + "ffn_down.weight", s.dim, s.ffn, 0.5f / std::sqrt(static_cast<float>(s.ffn)));
    if (gemma) vector(p + "post_ffw_norm.weight", s.dim, 1.0f, 0.1f);
  }
  vector("output_norm.weight", s.dim, 1.0f, 0.1f);
  if (!tied) matrix("output.weight", s.vocab, s.dim, 4.0f / std::sqrt(static_cast<float>(s.dim)));
  w.write(path);
}

}  // namespace kvscope
