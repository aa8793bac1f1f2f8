// Model loading: hyper-parameters from GGUF metadata, shape-checked weight views into the mapping.
#include "model/model.h"

#include <cmath>

#include "util/error.h"

namespace kvscope {

const char* arch_name(Arch a) {
  switch (a) {
    case Arch::Llama: return "llama";
    case Arch::Mistral: return "mistral";
    case Arch::Qwen2: return "qwen2";
    case Arch::Qwen3: return "qwen3";
  }
  return "?";
}

namespace {

Arch parse_arch(const std::string& path, const std::string& name) {
  if (name == "llama") return Arch::Llama;
  if (name == "mistral") return Arch::Mistral;
  if (name == "qwen2") return Arch::Qwen2;
  if (name == "qwen3") return Arch::Qwen3;
  throw FormatError(path + ": unknown architecture '" + name + "' (supported: llama, mistral, qwen2, qwen3)");
}

std::string shape_str(const std::vector<int64_t>& ne) {
  std::string s = "[";
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

}  // namespace

std::vector<float> llama3_rope_freq_factors(float theta, int rope_dim, float factor, float low_freq_factor,
                                            float high_freq_factor, int orig_ctx) {
  std::vector<float> ff(rope_dim / 2);
  const double low_wavelen = orig_ctx / low_freq_factor;
  const double high_wavelen = orig_ctx / high_freq_factor;
  for (int i = 0; i < rope_dim / 2; ++i) {
    const double wavelen = 2 * M_PI / std::pow(theta, -2.0 * i / rope_dim);
    if (wavelen < high_wavelen) {
      ff[i] = 1.0f;
    } else if (wavelen > low_wavelen) {
      ff[i] = factor;
    } else {
      const double smooth = (orig_ctx / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
      ff[i] = static_cast<float>(1.0 / ((1 - smooth) / factor + smooth));
    }
  }
  return ff;
}

std::unique_ptr<Model> Model::load(const std::string& path) {
  std::unique_ptr<Model> m(new Model());
  m->file_ = gguf::File::open(path);
  const gguf::File& f = *m->file_;
  HParams& hp = m->hp_;
  std::string arch = f.get_string("general.architecture");
  hp.arch = parse_arch(path, arch);
  auto key = [&](const std::string& k) { return arch + "." + k; };

  hp.n_embd = static_cast<int>(f.get_int(key("embedding_length")));
  hp.n_layer = static_cast<int>(f.get_int(key("block_count")));
  hp.n_ff = static_cast<int>(f.get_int(key("feed_forward_length")));
  hp.n_head = static_cast<int>(f.get_int(key("attention.head_count")));
  hp.n_head_kv = static_cast<int>(f.get_int(key("attention.head_count_kv"), hp.n_head));
  hp.n_ctx_train = static_cast<int>(f.get_int(key("context_length"), 2048));
  hp.norm_eps = static_cast<float>(f.get_float(key("attention.layer_norm_rms_epsilon"), 1e-5));
  hp.rope_theta = static_cast<float>(f.get_float(key("rope.freq_base"), 10000.0));
  if (hp.n_embd <= 0 || hp.n_layer <= 0 || hp.n_head <= 0 || hp.n_head_kv <= 0 || hp.n_ff <= 0 || hp.n_ctx_train <= 0)
    throw FormatError(path + ": invalid hyper-parameters (embedding, layers, heads, ffn and context must be positive)");
  if (hp.n_head % hp.n_head_kv != 0)
    throw FormatError(path + ": attention.head_count " + std::to_string(hp.n_head) +
                      " is not a multiple of head_count_kv " + std::to_string(hp.n_head_kv));
  hp.head_dim = static_cast<int>(f.get_int(key("attention.key_length"), hp.n_embd / hp.n_head));
  if (hp.head_dim <= 0 || hp.head_dim % 2 != 0 || f.get_int(key("attention.value_length"), hp.head_dim) != hp.head_dim)
    throw FormatError(path + ": unsupported head dimension " + std::to_string(hp.head_dim));
  hp.rope_dim = static_cast<int>(f.get_int(key("rope.dimension_count"), hp.head_dim));
  if (hp.rope_dim <= 0 || hp.rope_dim > hp.head_dim || hp.rope_dim % 2 != 0)
    throw FormatError(path + ": invalid rope.dimension_count " + std::to_string(hp.rope_dim));
  hp.rope_neox = hp.arch == Arch::Qwen2 || hp.arch == Arch::Qwen3;

  std::string scaling = f.get_string(key("rope.scaling.type"), "");
  double factor = f.get_float(key("rope.scaling.factor"), f.get_float(key("rope.scale_linear"), 1.0));
  if (scaling == "linear" || (scaling.empty() && factor != 1.0)) {
    hp.rope_scaling = RopeScaling::Linear;
    hp.rope_scale_factor = static_cast<float>(factor);
  } else if (scaling == "llama3") {
    hp.rope_scaling = RopeScaling::Llama3;
    hp.rope_scale_factor = static_cast<float>(factor);
    hp.rope_low_freq_factor = static_cast<float>(f.get_float(key("rope.scaling.low_freq_factor"), 1.0));
    hp.rope_high_freq_factor = static_cast<float>(f.get_float(key("rope.scaling.high_freq_factor"), 4.0));
    hp.rope_orig_ctx = static_cast<int>(f.get_int(key("rope.scaling.original_context_length"), 8192));
  } else if (!scaling.empty() && scaling != "none") {
    throw FormatError(path + ": unsupported rope scaling type '" + scaling + "' (supported: none, linear, llama3)");
  }
  if (!(hp.rope_scale_factor > 0.0f)) throw FormatError(path + ": invalid rope scaling factor");

  m->tokenizer_ = tok::Tokenizer::from_gguf(f);
  hp.n_vocab = m->tokenizer_->n_vocab();

  auto mat = [&](const std::string& name, int64_t rows, int64_t cols) {
    const gguf::TensorInfo& t = f.tensor(name);
    if (t.ne.size() != 2 || t.ne[0] != cols || t.ne[1] != rows)
      throw FormatError(path + ": tensor " + name + " has shape " + shape_str(t.ne) + ", expected [" +
                        std::to_string(cols) + ", " + std::to_string(rows) + "]");
    return kernels::WeightRef{t.data, t.type, rows, cols};
  };
  // Small vectors are used as F32; other storage types are converted once at load.
  auto vec = [&](const std::string& name, int64_t n, bool required) -> const float* {
    const gguf::TensorInfo* t = f.find_tensor(name);
    if (!t) {
      if (required) throw FormatError(path + ": missing tensor " + name);
      return nullptr;
    }
    if (t->n_elements() != n)
      throw FormatError(path + ": tensor " + name + " has shape " + shape_str(t->ne) + ", expected [" + std::to_string(n) + "]");
    if (t->type == kernels::DType::F32 && reinterpret_cast<uintptr_t>(t->data) % alignof(float) == 0)
      return reinterpret_cast<const float*>(t->data);
    m->owned_.emplace_back(static_cast<size_t>(n));
    kernels::dequantize_row(t->type, t->data, m->owned_.back().data(), n);
    return m->owned_.back().data();
  };

  const int d = hp.n_embd, qd = hp.n_q_dim(), kvd = hp.n_kv_dim();
  m->tok_embd = mat("token_embd.weight", hp.n_vocab, d);
  m->output_norm = vec("output_norm.weight", d, true);
  m->output = f.find_tensor("output.weight") ? mat("output.weight", hp.n_vocab, d) : m->tok_embd;
  m->rope_freqs = vec("rope_freqs.weight", hp.rope_dim / 2, false);
  m->layers.resize(hp.n_layer);
  for (int l = 0; l < hp.n_layer; ++l) {
    LayerWeights& L = m->layers[l];
    std::string p = "blk." + std::to_string(l) + ".";
    L.attn_norm = vec(p + "attn_norm.weight", d, true);
    L.wq = mat(p + "attn_q.weight", qd, d);
    L.wk = mat(p + "attn_k.weight", kvd, d);
    L.wv = mat(p + "attn_v.weight", kvd, d);
    L.wo = mat(p + "attn_output.weight", d, qd);
    L.bq = vec(p + "attn_q.bias", qd, false);
    L.bk = vec(p + "attn_k.bias", kvd, false);
    L.bv = vec(p + "attn_v.bias", kvd, false);
    L.q_norm = vec(p + "attn_q_norm.weight", hp.head_dim, hp.arch == Arch::Qwen3);
    L.k_norm = vec(p + "attn_k_norm.weight", hp.head_dim, hp.arch == Arch::Qwen3);
    L.ffn_norm = vec(p + "ffn_norm.weight", d, true);
    L.w_gate = mat(p + "ffn_gate.weight", hp.n_ff, d);
    L.w_up = mat(p + "ffn_up.weight", hp.n_ff, d);
    L.w_down = mat(p + "ffn_down.weight", d, hp.n_ff);
  }
  // Llama 3.x GGUFs carry their rope scaling as a rope_freqs tensor; metadata-only llama3 scaling
  // (as gen-model writes it) is turned into the same per-dimension factors here.
  if (!m->rope_freqs && hp.rope_scaling == RopeScaling::Llama3) {
    m->owned_.push_back(llama3_rope_freq_factors(hp.rope_theta, hp.rope_dim, hp.rope_scale_factor,
                                                 hp.rope_low_freq_factor, hp.rope_high_freq_factor, hp.rope_orig_ctx));
    m->rope_freqs = m->owned_.back().data();
  }
  // Matrices the CPU has a faster layout for are copied into it once. The token embedding keeps
  // its file layout (rows are looked up); a tied output matrix gets its own packed copy.
  // The file's copy of a packed layer matrix is not read again, so its pages are given back.
  if (kernels::pack_weight(m->output, m->packed_) && f.find_tensor("output.weight"))
    f.release_pages(m->output.data, kernels::row_bytes(m->output.type, m->output.cols) * static_cast<size_t>(m->output.rows));
  for (LayerWeights& L : m->layers)
    for (kernels::WeightRef* w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down})
      if (kernels::pack_weight(*w, m->packed_))
        f.release_pages(w->data, kernels::row_bytes(w->type, w->cols) * static_cast<size_t>(w->rows));
  return m;
}

std::string Model::chat_template() const { return file_->get_string("tokenizer.chat_template", ""); }

uint64_t Model::weight_bytes() const {
  auto b = [](const kernels::WeightRef& w) { return kernels::row_bytes(w.type, w.cols) * static_cast<uint64_t>(w.rows); };
  uint64_t total = b(output);
  for (const auto& L : layers) total += b(L.wq) + b(L.wk) + b(L.wv) + b(L.wo) + b(L.w_gate) + b(L.w_up) + b(L.w_down);
  return total;
}

}  // namespace kvscope
