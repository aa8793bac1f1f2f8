// Internal tokenizer machinery shared by the SPM and byte-level BPE implementations.
#pragma once
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace kvscope::tok::detail {

// Pre-tokenizer families (the regex sets llama.cpp uses for each tokenizer.ggml.pre).
enum class PreType { Default, Gpt2, Llama3, Qwen2, Starcoder };

// Maps tokenizer.ggml.pre to a family; throws FormatError naming unknown types.
// ignore_merges: a whole pre-token that is itself in the vocab is emitted without merging.
PreType pre_type_from_name(const std::string& pre, bool* ignore_merges);

// Splits text into pre-tokens (UTF-8, not yet byte-mapped) following the family's regexes.
std::vector<std::string> pre_tokenize(PreType type, const std::string& text);

struct Fragment {
  bool is_token;
  TokenId id;        // when is_token
  size_t off, len;   // range in the text otherwise
};

class TokenizerBase : public Tokenizer {
 public:
  std::vector<TokenId> encode(const std::string& text, bool add_special, bool parse_special) const override;
  std::string token_to_piece(TokenId id, bool render_special) const override;

 protected:
  explicit TokenizerBase(Vocab v);
  TokenType type_of(TokenId id) const { return vocab_.types[static_cast<size_t>(id)]; }
  TokenId find(std::string_view text) const {
    auto it = token_to_id_.find(std::string(text));
    return it == token_to_id_.end() ? -1 : it->second;
  }
  // Splits out special token texts (control/unknown only when parse_special; user-defined always).
  std::vector<Fragment> partition(const std::string& text, bool parse_special) const;
  // Tokenizes one plain-text fragment; `after_special` is true at the start and after a special token.
  virtual void encode_fragment(const std::string& text, bool after_special, std::vector<TokenId>& out) const = 0;
  virtual std::string normal_piece(TokenId id) const = 0;  // piece of a Normal token
  int byte_value(TokenId id) const;                       // value of a <0xNN> token, -1 if none

  std::unordered_map<std::string, TokenId> token_to_id_;
  std::vector<TokenId> special_;  // control/user-defined/unknown tokens, longest text first
  bool is_spm_ = false;
};

std::unique_ptr<Tokenizer> make_spm(Vocab v);
std::unique_ptr<Tokenizer> make_bpe(Vocab v);

}  // namespace kvscope::tok::detail
