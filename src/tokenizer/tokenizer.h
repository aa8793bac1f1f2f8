// Tokenizers read from GGUF metadata (tokenizer.ggml.*):
//  - "llama": SentencePiece-style BPE over scores, with byte fallback (<0xNN> tokens)
//  - "gpt2":  byte-level BPE over merges, with the pre-tokenizer named by tokenizer.ggml.pre
//             (llama3/llama-bpe, qwen2, default gpt2 rules, ...)
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kvscope::gguf { class File; }

namespace kvscope::tok {

using TokenId = int32_t;

// tokenizer.ggml.token_type values
enum class TokenType : int32_t { Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

struct Vocab {
  std::string model;  // "llama" | "gpt2"
  std::string pre;    // tokenizer.ggml.pre ("" when absent)
  std::vector<std::string> tokens;
  std::vector<float> scores;          // may be empty
  std::vector<TokenType> types;       // may be empty (then all Normal)
  std::vector<std::string> merges;    // "a b" pairs, gpt2 only
  TokenId bos = -1, eos = -1, unk = -1, pad = -1, eot = -1;
  TokenId eom = -1;                   // tokenizer.ggml.eom_token_id (Llama 3.1 <|eom_id|>)
  bool add_bos = false, add_eos = false;
  bool add_space_prefix = true;       // tokenizer.ggml.add_space_prefix (llama model)

  static Vocab from_gguf(const gguf::File& f);  // throws FormatError naming the missing/bad key
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // parse_special: control/user-defined token texts in `text` (e.g. "<|im_start|>") become their
  // ids instead of being split as plain text. add_bos follows the vocab's add_bos when true.
  virtual std::vector<TokenId> encode(const std::string& text, bool add_special, bool parse_special) const = 0;
  // Raw bytes of one token as it contributes to output text (byte tokens give one byte; SPM's
  // U+2581 becomes a space; gpt2's byte-to-unicode mapping is undone). Control tokens give "" unless
  // render_special.
  virtual std::string token_to_piece(TokenId id, bool render_special = false) const = 0;
  std::string decode(const std::vector<TokenId>& ids, bool render_special = false) const;

  const Vocab& vocab() const { return vocab_; }
  int32_t n_vocab() const { return static_cast<int32_t>(vocab_.tokens.size()); }
  bool is_eog(TokenId id) const;  // eos, eot or other end-of-generation tokens
  // 1 for each token whose text, leading spaces aside, starts with a digit or a minus sign (what may
  // open a number); empty when the vocabulary has none. Built on first use, then shared.
  const std::vector<uint8_t>& number_start_mask() const;
  // 1 for each token made of digits only (no space): what may go on with a number already begun;
  // empty when the vocabulary has none.
  const std::vector<uint8_t>& number_continue_mask() const;

  static std::unique_ptr<Tokenizer> create(Vocab vocab);  // throws FormatError for unknown model/pre
  static std::unique_ptr<Tokenizer> from_gguf(const gguf::File& f);

 protected:
  explicit Tokenizer(Vocab v) : vocab_(std::move(v)) {}
  Vocab vocab_;

 private:
  mutable std::once_flag number_start_once_, number_continue_once_;
  mutable std::vector<uint8_t> number_start_, number_continue_;
};

// Streams decoded text: holds back incomplete UTF-8 sequences until they complete, so every
// string it returns is valid UTF-8.
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& t) : tok_(t) {}
  std::string push(TokenId id);  // newly completed text (may be empty)
  std::string flush();           // remaining bytes (invalid tails replaced with U+FFFD)
 private:
  const Tokenizer& tok_;
  std::string pending_;
  bool first_ = true;
};

// True when s is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool is_valid_utf8(const std::string& s);

}  // namespace kvscope::tok
