// Model loading: hyper-parameters from GGUF metadata, shape-checked weight views into the mapping.
#include "model/model.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "util/error.h"

namespace kvscope {

const char* arch_name(Arch a) {
  switch (a) {
    case Arch::Llama: return "llama";
    case Arch::Mistral: return "mistral";
    case Arch::Qwen2: return "qwen2";
    case Arch::Qwen3: return "qwen3";
    case Arch::Gemma2: return "gemma2";
    case Arch::Gemma3: return "gemma3";
    case Arch::Phi3: return "phi3";
    case Arch::Qwen2Moe: return "qwen2moe";
    case Arch::Qwen3Moe: return "qwen3moe";
    case Arch::Olmoe: return "olmoe";
  }
  return "?";
}

namespace {

constexpr const char* kSupportedArchs = "llama, mistral, qwen2, qwen3, gemma2, gemma3, phi3, qwen2moe, qwen3moe, olmoe";

Arch parse_arch(const std::string& path, const std::string& name) {
  if (name == "llama") return Arch::Llama;
  if (name == "mistral") return Arch::Mistral;
  if (name == "qwen2") return Arch::Qwen2;
  if (name == "qwen3") return Arch::Qwen3;
  if (name == "gemma2") return Arch::Gemma2;
  if (name == "gemma3") return Arch::Gemma3;
  if (name == "phi3") return Arch::Phi3;
  if (name == "qwen2moe") return Arch::Qwen2Moe;
  if (name == "qwen3moe") return Arch::Qwen3Moe;
  if (name == "olmoe") return Arch::Olmoe;
  throw FormatError(path + ": unknown architecture '" + name + "' (supported: " + kSupportedArchs + ")");
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

std::unique_ptr<Model> Model::load(const std::string& path, int threads) {
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
  const bool gemma = hp.arch == Arch::Gemma2 || hp.arch == Arch::Gemma3;
  hp.rope_neox = hp.arch != Arch::Llama && hp.arch != Arch::Mistral;

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
  hp.rope_attn_factor = static_cast<float>(f.get_float(key("rope.scaling.attn_factor"), 1.0));
  if (hp.arch == Arch::Phi3)
    hp.rope_orig_ctx = static_cast<int>(f.get_int(key("rope.scaling.original_context_length"), hp.n_ctx_train));

  if (gemma) {
    // Gemma's reference scales queries by 1/sqrt(head_dim), except its 27B sizes (46 and 62 layers),
    // which use 1/sqrt(n_embd / n_head); GGUF carries no key for it, so this follows the layer count
    // as llama.cpp does.
    const bool is_27b = (hp.arch == Arch::Gemma2 && hp.n_layer == 46) || (hp.arch == Arch::Gemma3 && hp.n_layer == 62);
    hp.attn_scale = 1.0f / std::sqrt(static_cast<float>(is_27b ? hp.n_embd / hp.n_head : hp.head_dim));
    hp.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
    hp.ffn_gelu = true;
    const bool g2 = hp.arch == Arch::Gemma2;
    hp.attn_softcap = g2 ? static_cast<float>(f.get_float(key("attn_logit_softcapping"), 50.0)) : 0.0f;
    hp.final_softcap = static_cast<float>(f.get_float(key("final_logit_softcapping"), g2 ? 30.0 : 0.0));
    if (hp.attn_softcap < 0 || hp.final_softcap < 0) throw FormatError(path + ": negative logit soft-capping");
    // gemma2 always slides (4096 unless stated); gemma3 only when the file gives a window.
    hp.n_swa = static_cast<int>(f.get_int(key("attention.sliding_window"), g2 ? 4096 : 0));
    if (hp.n_swa < 0) throw FormatError(path + ": invalid attention.sliding_window " + std::to_string(hp.n_swa));
    const int64_t period = f.get_int(key("attention.sliding_window_pattern"), g2 ? 2 : 6);
    if (period < 0 || period > 1 << 20) throw FormatError(path + ": invalid attention.sliding_window_pattern");
    // Of every `period` layers all but the last slide (period 0: all of them).
    hp.layer_swa.assign(hp.n_layer, 0);
    for (int l = 0; l < hp.n_layer; ++l) hp.layer_swa[l] = period == 0 || l % period < period - 1;
    hp.rope_theta_swa = static_cast<float>(f.get_float(key("rope.freq_base_swa"), g2 ? hp.rope_theta : 10000.0));
    hp.rope_scale_swa = g2 && hp.rope_scaling == RopeScaling::Linear ? hp.rope_scale_factor : 1.0f;
  }

  hp.n_expert = static_cast<int>(f.get_int(key("expert_count"), 0));
  hp.n_expert_used = static_cast<int>(f.get_int(key("expert_used_count"), 0));
  const bool moe_arch = hp.arch == Arch::Qwen2Moe || hp.arch == Arch::Qwen3Moe || hp.arch == Arch::Olmoe;
  if (moe_arch && hp.n_expert <= 0) throw FormatError(path + ": " + arch + " needs " + key("expert_count") + " > 0");
  if (hp.n_expert < 0 || hp.n_expert > 4096) throw FormatError(path + ": invalid " + key("expert_count") + " " + std::to_string(hp.n_expert));
  if (hp.n_expert > 0) {
    if (hp.arch != Arch::Llama && hp.arch != Arch::Mistral && !moe_arch)
      throw FormatError(path + ": experts are not supported for " + arch);
    if (hp.n_expert_used <= 0 || hp.n_expert_used > hp.n_expert)
      throw FormatError(path + ": " + key("expert_used_count") + " " + std::to_string(hp.n_expert_used) +
                        " must be between 1 and " + key("expert_count") + " " + std::to_string(hp.n_expert));
    hp.n_ff_exp = static_cast<int>(f.get_int(key("expert_feed_forward_length"), 0));
    if (hp.n_ff_exp == 0) hp.n_ff_exp = hp.arch == Arch::Qwen2Moe || hp.arch == Arch::Qwen3Moe ? hp.n_ff / hp.n_expert_used : hp.n_ff;
    hp.n_ff_shexp = hp.arch == Arch::Qwen2Moe ? static_cast<int>(f.get_int(key("expert_shared_feed_forward_length"), hp.n_ff)) : 0;
    if (hp.n_ff_exp <= 0 || hp.n_ff_shexp < 0) throw FormatError(path + ": invalid expert feed-forward length");
    // Which families renormalize the chosen experts' probabilities (as their reference code does).
    hp.expert_norm = hp.arch == Arch::Qwen3Moe || hp.arch == Arch::Llama || hp.arch == Arch::Mistral;
    hp.expert_weights_scale = static_cast<float>(f.get_float(key("expert_weights_scale"), 0.0));
  }

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
  m->rope_factors_long = vec("rope_factors_long.weight", hp.rope_dim / 2, false);
  m->rope_factors_short = vec("rope_factors_short.weight", hp.rope_dim / 2, false);
  // A fused matrix's parts are consecutive row ranges of it, so each part is a view.
  auto rows_of = [](const kernels::WeightRef& w, int64_t r0, int64_t n) {
    kernels::WeightRef v = w;
    v.data = static_cast<const uint8_t*>(w.data) + kernels::row_bytes(w.type, w.cols) * static_cast<size_t>(r0);
    v.rows = n;
    return v;
  };
  m->layers.resize(hp.n_layer);
  for (int l = 0; l < hp.n_layer; ++l) {
    LayerWeights& L = m->layers[l];
    std::string p = "blk." + std::to_string(l) + ".";
    L.attn_norm = vec(p + "attn_norm.weight", d, true);
    if (f.find_tensor(p + "attn_qkv.weight")) {  // phi3: Q, K and V rows in one matrix
      const kernels::WeightRef qkv = mat(p + "attn_qkv.weight", qd + 2 * kvd, d);
      L.wq = rows_of(qkv, 0, qd);
      L.wk = rows_of(qkv, qd, kvd);
      L.wv = rows_of(qkv, qd + kvd, kvd);
    } else {
      L.wq = mat(p + "attn_q.weight", qd, d);
      L.wk = mat(p + "attn_k.weight", kvd, d);
      L.wv = mat(p + "attn_v.weight", kvd, d);
    }
    L.wo = mat(p + "attn_output.weight", d, qd);
    L.bq = vec(p + "attn_q.bias", qd, false);
    L.bk = vec(p + "attn_k.bias", kvd, false);
    L.bv = vec(p + "attn_v.bias", kvd, false);
    const bool qk_norm = hp.arch == Arch::Qwen3 || hp.arch == Arch::Gemma3 || hp.arch == Arch::Qwen3Moe;
    hp.qk_norm_full = hp.arch == Arch::Olmoe;
    if (hp.arch == Arch::Olmoe) {  // OLMoE normalizes the whole Q and K rows, not each head
      L.q_norm = vec(p + "attn_q_norm.weight", qd, true);
      L.k_norm = vec(p + "attn_k_norm.weight", kvd, true);
    } else {
      L.q_norm = vec(p + "attn_q_norm.weight", hp.head_dim, qk_norm);
      L.k_norm = vec(p + "attn_k_norm.weight", hp.head_dim, qk_norm);
    }
    L.attn_post_norm = vec(p + "post_attention_norm.weight", d, gemma);
    L.ffn_norm = vec(p + "ffn_norm.weight", d, true);
    if (hp.is_moe()) {
      L.router = mat(p + "ffn_gate_inp.weight", hp.n_expert, d);
      auto experts = [&](const std::string& name, int64_t rows, int64_t cols) {
        const gguf::TensorInfo* t = f.find_tensor(name);
        if (!t) throw FormatError(path + ": missing expert tensor " + name);
        if (t->ne.size() != 3 || t->ne[0] != cols || t->ne[1] != rows || t->ne[2] != hp.n_expert)
          throw FormatError(path + ": tensor " + name + " has shape " + shape_str(t->ne) + ", expected [" +
                            std::to_string(cols) + ", " + std::to_string(rows) + ", " + std::to_string(hp.n_expert) + "]");
        const kernels::WeightRef all{t->data, t->type, rows * hp.n_expert, cols};
        std::vector<kernels::WeightRef> v;
        for (int e = 0; e < hp.n_expert; ++e) v.push_back(rows_of(all, e * rows, rows));
        return v;
      };
      L.gate_exps = experts(p + "ffn_gate_exps.weight", hp.n_ff_exp, d);
      L.up_exps = experts(p + "ffn_up_exps.weight", hp.n_ff_exp, d);
      L.down_exps = experts(p + "ffn_down_exps.weight", d, hp.n_ff_exp);
      if (hp.arch == Arch::Qwen2Moe) {
        L.shexp_gate = vec(p + "ffn_gate_inp_shexp.weight", d, true);
        L.w_gate_sh = mat(p + "ffn_gate_shexp.weight", hp.n_ff_shexp, d);
        L.w_up_sh = mat(p + "ffn_up_shexp.weight", hp.n_ff_shexp, d);
        L.w_down_sh = mat(p + "ffn_down_shexp.weight", d, hp.n_ff_shexp);
      }
      continue;
    }
    if (hp.arch == Arch::Phi3 && !f.find_tensor(p + "ffn_gate.weight")) {
      // phi3's ffn_up holds the gate rows, then the up rows (SwiGLU on the two halves).
      const kernels::WeightRef gu = mat(p + "ffn_up.weight", 2 * static_cast<int64_t>(hp.n_ff), d);
      L.w_gate = rows_of(gu, 0, hp.n_ff);
      L.w_up = rows_of(gu, hp.n_ff, hp.n_ff);
    } else {
      L.w_gate = mat(p + "ffn_gate.weight", hp.n_ff, d);
      L.w_up = mat(p + "ffn_up.weight", hp.n_ff, d);
    }
    L.w_down = mat(p + "ffn_down.weight", d, hp.n_ff);
    L.ffn_post_norm = vec(p + "post_ffw_norm.weight", d, gemma);
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
  // Each matrix's row groups are split over a pool (a 1B Q4_K_M file took 2-3 s in one thread);
  // matrices go one at a time, so the file's pages are given back as soon as they are packed.
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  kernels::ThreadPool pool(threads);
  if (kernels::pack_weight(m->output, m->packed_, &pool) && f.find_tensor("output.weight"))
    f.release_pages(m->output.data, kernels::row_bytes(m->output.type, m->output.cols) * static_cast<size_t>(m->output.rows));
  for (LayerWeights& L : m->layers) {
    std::vector<kernels::WeightRef*> ws = {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down,
                                           &L.router, &L.w_gate_sh, &L.w_up_sh, &L.w_down_sh};
    for (auto* v : {&L.gate_exps, &L.up_exps, &L.down_exps})
      for (auto& w : *v) ws.push_back(&w);
    for (kernels::WeightRef* w : ws)
      if (w->data && kernels::pack_weight(*w, m->packed_, &pool))
        f.release_pages(w->data, kernels::row_bytes(w->type, w->cols) * static_cast<size_t>(w->rows));
  }
  return m;
}

const float* Model::rope_freqs_for(int n_ctx) const {
  if (rope_freqs) return rope_freqs;
  if (rope_factors_long && n_ctx > hp_.rope_orig_ctx) return rope_factors_long;
  return rope_factors_short;
}

std::string Model::chat_template() const { return file_->get_string("tokenizer.chat_template", ""); }

uint64_t Model::weight_bytes() const {
  auto b = [](const kernels::WeightRef& w) { return kernels::row_bytes(w.type, w.cols) * static_cast<uint64_t>(w.rows); };
  uint64_t total = b(output);
  for (const auto& L : layers) {
    total += b(L.wq) + b(L.wk) + b(L.wv) + b(L.wo) + b(L.w_gate) + b(L.w_up) + b(L.w_down);
    total += b(L.router) + b(L.w_gate_sh) + b(L.w_up_sh) + b(L.w_down_sh);
    if (!L.gate_exps.empty())
      total += static_cast<uint64_t>(hp_.n_expert_used) * (b(L.gate_exps[0]) + b(L.up_exps[0]) + b(L.down_exps[0]));
  }
  return total;
}

}  // namespace kvscope
