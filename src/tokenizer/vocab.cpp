// Vocab loading (tokenizer.ggml.* metadata), the shared Tokenizer machinery (special-token
// splitting, pieces, decode, end-of-generation), and the factory.
#include <algorithm>
#include <cstdio>

#include "gguf/gguf.h"
#include "tokenizer/internal.h"
#include "util/error.h"

namespace kvscope::tok {
namespace {

const gguf::Array& get_array(const gguf::File& f, const std::string& key, gguf::ValueType elem,
                             bool required, bool* found) {
  static const gguf::Array empty;
  const gguf::Value* v = f.find(key);
  *found = v != nullptr;
  if (!v) {
    if (required) throw FormatError("missing tokenizer metadata key " + key);
    return empty;
  }
  if (v->type != gguf::ValueType::ARRAY) throw FormatError(key + " must be an array");
  const gguf::Array& a = v->as_array();
  if (elem == gguf::ValueType::ARRAY) return a;  // any element type
  if (a.elem_type != elem)
    throw FormatError(key + " has element type " + gguf::value_type_name(a.elem_type) + ", expected " +
                      gguf::value_type_name(elem));
  return a;
}

// Optional token id: absent keeps `def`; -1 / 0xFFFFFFFF means none; out of range keeps `def` (as
// llama.cpp does).
TokenId read_id(const gguf::File& f, const std::string& key, TokenId def, size_t n_tokens) {
  const gguf::Value* v = f.find(key);
  if (!v) return def;
  if (!v->is_integer()) throw FormatError(key + " must be an integer");
  const int64_t x = v->as_int();
  if (x == -1 || x == 0xFFFFFFFFll) return -1;
  if (x < 0 || static_cast<uint64_t>(x) >= n_tokens) return def;
  return static_cast<TokenId>(x);
}

// DeepSeek's end of sentence: fullwidth vertical bars around "end▁of▁sentence" (U+FF5C, U+2581).
constexpr const char* kDeepseekEos = "<\uFF5Cend\u2581of\u2581sentence\uFF5C>";

// Token texts llama.cpp treats as end of generation (and forces to control type).
bool is_eog_text(const std::string& t) {
  static const char* const kNames[] = {
      "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
      "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
      "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
      kDeepseekEos, "[e~[",
  };
  for (const char* n : kNames)
    if (t == n) return true;
  return false;
}
// Texts llama.cpp picks the EOT token from when tokenizer.ggml.eot_token_id is absent; returns the
// priority (lower wins, so "<|eot_id|>" beats "<|end_of_text|>"), or -1.
int eot_priority(const std::string& t) {
  static const char* const kNames[] = {
      "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
      "_<EOT>", "[EOT]", kDeepseekEos, "<end_of_utterance>",
  };
  for (int i = 0; i < static_cast<int>(sizeof(kNames) / sizeof(kNames[0])); ++i)
    if (t == kNames[i]) return i;
  return -1;
}

}  // namespace

Vocab Vocab::from_gguf(const gguf::File& f) {
  Vocab v;
  const gguf::Value* model = f.find("tokenizer.ggml.model");
  if (!model) throw FormatError("missing tokenizer metadata key tokenizer.ggml.model");
  if (model->type != gguf::ValueType::STRING) throw FormatError("tokenizer.ggml.model must be a string");
  v.model = model->as_string();
  v.pre = f.get_string("tokenizer.ggml.pre", "");

  bool found = false;
  const auto& toks = get_array(f, "tokenizer.ggml.tokens", gguf::ValueType::STRING, true, &found);
  const size_t n = toks.items.size();
  if (n == 0) throw FormatError("tokenizer.ggml.tokens is empty");
  v.tokens.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string s = toks.items[i].as_string();
    if (s.empty()) s = "[EMPTY_" + std::to_string(i) + "]";  // as llama.cpp
    v.tokens.push_back(std::move(s));
  }

  const auto& scores = get_array(f, "tokenizer.ggml.scores", gguf::ValueType::ARRAY, false, &found);
  if (found) {
    if (scores.elem_type != gguf::ValueType::FLOAT32 && scores.elem_type != gguf::ValueType::INT32)
      throw FormatError("tokenizer.ggml.scores must be a float32 or int32 array");
    if (scores.items.size() < n)
      throw FormatError("tokenizer.ggml.scores has " + std::to_string(scores.items.size()) + " entries for " +
                        std::to_string(n) + " tokens");
    v.scores.reserve(n);
    for (size_t i = 0; i < n; ++i) v.scores.push_back(static_cast<float>(scores.items[i].as_float()));
  }

  const auto& types = get_array(f, "tokenizer.ggml.token_type", gguf::ValueType::INT32, false, &found);
  if (found) {
    if (types.items.size() < n)
      throw FormatError("tokenizer.ggml.token_type has " + std::to_string(types.items.size()) + " entries for " +
                        std::to_string(n) + " tokens");
    v.types.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t t = types.items[i].as_int();
      v.types.push_back(t >= 0 && t <= 6 ? static_cast<TokenType>(t) : TokenType::Undefined);
    }
  }

  const bool spm = v.model == "llama";
  if (v.model == "gpt2") {
    const auto& merges = get_array(f, "tokenizer.ggml.merges", gguf::ValueType::STRING, true, &found);
    v.merges.reserve(merges.items.size());
    for (const auto& m : merges.items) v.merges.push_back(m.as_string());
  }

  // Defaults as llama.cpp: SPM bos=1 eos=2 unk=0 add_bos; BPE bos=eos=11 (when in range).
  auto def_id = [&](TokenId id) { return static_cast<size_t>(id) < n ? id : -1; };
  TokenId bos = -1, eos = -1, unk = -1;
  if (spm) {
    bos = def_id(1), eos = def_id(2), unk = def_id(0);
  } else if (v.model == "gpt2") {
    bos = def_id(11), eos = def_id(11);
  }
  v.bos = read_id(f, "tokenizer.ggml.bos_token_id", bos, n);
  v.eos = read_id(f, "tokenizer.ggml.eos_token_id", eos, n);
  v.unk = read_id(f, "tokenizer.ggml.unknown_token_id", unk, n);
  v.pad = read_id(f, "tokenizer.ggml.padding_token_id", -1, n);
  v.eot = read_id(f, "tokenizer.ggml.eot_token_id", -1, n);
  v.eom = read_id(f, "tokenizer.ggml.eom_token_id", -1, n);
  v.add_bos = f.get_bool("tokenizer.ggml.add_bos_token", spm);
  v.add_eos = f.get_bool("tokenizer.ggml.add_eos_token", false);
  v.add_space_prefix = f.get_bool("tokenizer.ggml.add_space_prefix", spm);
  return v;
}

std::unique_ptr<Tokenizer> Tokenizer::create(Vocab v) {
  const size_t n = v.tokens.size();
  if (n == 0) throw FormatError("tokenizer has no tokens");
  if (!v.scores.empty() && v.scores.size() < n) throw FormatError("tokenizer scores shorter than the vocabulary");
  if (!v.types.empty() && v.types.size() < n) throw FormatError("tokenizer token types shorter than the vocabulary");
  if (v.types.empty()) v.types.assign(n, TokenType::Normal);
  if (v.scores.empty()) v.scores.assign(n, 0.0f);
  for (TokenId* id : {&v.bos, &v.eos, &v.unk, &v.pad, &v.eot, &v.eom})
    if (*id < -1 || *id >= static_cast<TokenId>(n)) *id = -1;
  // End-of-generation tokens found by name are forced to control type (llama.cpp does the same,
  // so "<|im_end|>" in text is only parsed as a token with parse_special).
  TokenId end_id = -1, s_id = -1;
  const bool find_eot = v.eot < 0;
  int eot_best = 1 << 30;
  bool has_return = false, has_call = false, has_flush = false, has_tool_response = false;
  for (size_t i = 0; i < n; ++i) {
    const std::string& t = v.tokens[i];
    const auto id = static_cast<TokenId>(i);
    if (const int p = eot_priority(t); find_eot && p >= 0 && p < eot_best) {
      eot_best = p;
      v.eot = id;
    }
    if (v.eom < 0 && t == "<|eom_id|>") v.eom = id;
    if (is_eog_text(t)) v.types[i] = TokenType::Control;
    if (t == "<|channel|>" || t == "<|message|>" || t == "<|start|>" || t == "<|constrain|>")
      v.types[i] = TokenType::UserDefined;  // gpt-oss: always rendered
    has_return |= t == "<|return|>";
    has_call |= t == "<|call|>" || t == "<|calls|>";
    has_flush |= t == "<|flush|>";
    has_tool_response |= t == "<|tool_response>";
    if (t == "<|end|>") end_id = id;
    if (t == "</s>") s_id = id;
  }
  // llama.cpp's workarounds: harmony-style vocabs end turns with <|return|>/<|call|>, not <|end|>;
  // gemma4 does not end on </s>.
  if (end_id >= 0 && has_call && (has_return || has_flush)) {
    v.types[static_cast<size_t>(end_id)] = TokenType::UserDefined;
  }
  if (s_id >= 0 && has_tool_response) {
    v.types[static_cast<size_t>(s_id)] = TokenType::Normal;
  }
  if (v.model == "llama") return detail::make_spm(std::move(v));
  if (v.model == "gpt2") return detail::make_bpe(std::move(v));
  throw FormatError("unsupported tokenizer model '" + v.model + "' (supported: llama, gpt2)");
}

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const gguf::File& f) { return create(Vocab::from_gguf(f)); }

bool Tokenizer::is_eog(TokenId id) const {
  if (id < 0 || id >= n_vocab()) return false;
  if (id == vocab_.eos || id == vocab_.eot || id == vocab_.eom) return true;
  const auto i = static_cast<size_t>(id);
  return vocab_.types[i] == TokenType::Control && is_eog_text(vocab_.tokens[i]);
}

const std::vector<uint8_t>& Tokenizer::number_start_mask() const {
  std::call_once(number_start_once_, [this] {
    std::vector<uint8_t> mask(static_cast<size_t>(n_vocab()), 0);
    bool any = false;
    for (TokenId id = 0; id < n_vocab(); ++id) {
      const std::string piece = token_to_piece(id);  // SPM's U+2581 is already a space here
      const size_t i = piece.find_first_not_of(' ');
      if (i != std::string::npos && ((piece[i] >= '0' && piece[i] <= '9') || piece[i] == '-'))
        mask[static_cast<size_t>(id)] = 1, any = true;
    }
    if (any) number_start_ = std::move(mask);
  });
  return number_start_;
}

const std::vector<uint8_t>& Tokenizer::number_continue_mask() const {
  std::call_once(number_continue_once_, [this] {
    std::vector<uint8_t> mask(static_cast<size_t>(n_vocab()), 0);
    bool any = false;
    for (TokenId id = 0; id < n_vocab(); ++id) {
      const std::string piece = token_to_piece(id);
      if (!piece.empty() && piece.find_first_not_of("0123456789") == std::string::npos)
        mask[static_cast<size_t>(id)] = 1, any = true;
    }
    if (any) number_continue_ = std::move(mask);
  });
  return number_continue_;
}

std::string Tokenizer::decode(const std::vector<TokenId>& ids, bool render_special) const {
  std::string out;
  // SPM inserts a space before the text at the start; drop it again so decode(encode(x)) == x.
  bool strip = vocab_.model == "llama" && vocab_.add_space_prefix;
  for (TokenId id : ids) {
    std::string p = token_to_piece(id, render_special);
    if (p.empty()) continue;
    if (strip && p[0] == ' ') p.erase(0, 1);
    strip = false;
    out += p;
  }
  return out;
}

namespace detail {

TokenizerBase::TokenizerBase(Vocab v) : Tokenizer(std::move(v)) {
  const size_t n = vocab_.tokens.size();
  token_to_id_.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) token_to_id_[vocab_.tokens[i]] = static_cast<TokenId>(i);  // last wins
  for (size_t i = 0; i < n; ++i) {
    const TokenType t = vocab_.types[i];
    if (t == TokenType::Control || t == TokenType::UserDefined || t == TokenType::Unknown)
      special_.push_back(static_cast<TokenId>(i));
  }
  std::stable_sort(special_.begin(), special_.end(), [&](TokenId a, TokenId b) {
    return vocab_.tokens[static_cast<size_t>(a)].size() > vocab_.tokens[static_cast<size_t>(b)].size();
  });
}

std::vector<Fragment> TokenizerBase::partition(const std::string& text, bool parse_special) const {
  std::vector<Fragment> frags;
  if (text.empty()) return frags;
  frags.push_back({false, -1, 0, text.size()});
  std::vector<Fragment> next;
  for (TokenId id : special_) {
    const TokenType t = type_of(id);
    if (!parse_special && t != TokenType::UserDefined) continue;
    const std::string& s = vocab_.tokens[static_cast<size_t>(id)];
    next.clear();
    bool changed = false;
    for (const Fragment& fr : frags) {
      if (fr.is_token) {
        next.push_back(fr);
        continue;
      }
      size_t pos = fr.off;
      const size_t end = fr.off + fr.len;
      const std::string_view hay(text.data(), end);
      while (pos < end) {
        const size_t m = hay.find(s, pos);
        if (m == std::string_view::npos) break;
        changed = true;
        if (m > pos) next.push_back({false, -1, pos, m - pos});
        next.push_back({true, id, 0, 0});
        pos = m + s.size();
      }
      if (pos < end) next.push_back({false, -1, pos, end - pos});
    }
    if (changed) frags.swap(next);
  }
  return frags;
}

std::vector<TokenId> TokenizerBase::encode(const std::string& text, bool add_special, bool parse_special) const {
  std::vector<TokenId> out;
  if (add_special && vocab_.add_bos) {
    if (vocab_.bos < 0) throw FormatError("tokenizer wants a BOS token but has none");
    out.push_back(vocab_.bos);
  }
  bool after_special = true;
  for (const Fragment& fr : partition(text, parse_special)) {
    if (fr.is_token) {
      out.push_back(fr.id);
      after_special = true;
    } else {
      encode_fragment(text.substr(fr.off, fr.len), after_special, out);
      after_special = false;
    }
  }
  if (add_special && vocab_.add_eos) {
    if (vocab_.eos < 0) throw FormatError("tokenizer wants an EOS token but has none");
    out.push_back(vocab_.eos);
  }
  return out;
}

int TokenizerBase::byte_value(TokenId id) const {
  const std::string& t = vocab_.tokens[static_cast<size_t>(id)];
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  unsigned v = 0;
  for (int k = 3; k < 5; ++k) {
    const char c = t[static_cast<size_t>(k)];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
    else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
    else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
    else return -1;
  }
  return static_cast<int>(v);
}

std::string TokenizerBase::token_to_piece(TokenId id, bool render_special) const {
  if (id < 0 || id >= n_vocab()) throw InputError("token id " + std::to_string(id) + " out of range [0, " +
                                                  std::to_string(n_vocab()) + ")");
  const std::string& text = vocab_.tokens[static_cast<size_t>(id)];
  switch (type_of(id)) {
    case TokenType::Control:
    case TokenType::Unknown:
      return render_special ? text : std::string();
    case TokenType::UserDefined:
      return text;
    case TokenType::Normal:
      return normal_piece(id);
    case TokenType::Byte: {
      const int b = byte_value(id);
      if (b >= 0) return std::string(1, static_cast<char>(b));
      return normal_piece(id);
    }
    default:  // undefined / unused: suppressed like llama.cpp
      return std::string();
  }
}

}  // namespace detail
}  // namespace kvscope::tok
