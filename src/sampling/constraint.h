// Constrained decoding: a TokenConstraint decides, before each draw, which tokens may come next
// (structured output such as OpenAI's response_format), and follows the tokens drawn.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sampling/json_prefix.h"
#include "sampling/json_schema.h"

namespace kvscope {

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // Pushes every token that may not come next to -infinity. False: no token may (the request ends).
  virtual bool mask(float* logits, int n_vocab) = 0;
  // The token that was drawn (one mask allowed).
  virtual void accept(int32_t token) = 0;
  // The output is whole: the request ends here, as at a stop string.
  virtual bool done() const = 0;
};

// Each token's bytes as the detokenizer writes them, grouped by first byte so that a mask tries
// one byte for a whole group before it tries the group's tokens. Built once per model. Tokens
// without bytes (control tokens, end of generation) are never allowed.
struct TokenPieces {
  explicit TokenPieces(std::vector<std::string> pieces);
  std::vector<std::string> pieces;
  std::array<std::vector<int32_t>, 256> by_first_byte;
  std::vector<int32_t> without_bytes;  // never allowed
};

// JSON output (a JSON object with object_only, as OpenAI's json_object mode asks): a token is
// allowed when its bytes keep the text a prefix of some JSON text. The request ends when the
// value is complete.
class JsonConstraint final : public TokenConstraint {
 public:
  JsonConstraint(std::shared_ptr<const TokenPieces> pieces, bool object_only);
  bool mask(float* logits, int n_vocab) override;
  void accept(int32_t token) override;
  bool done() const override { return state_.ended(); }

 private:
  std::shared_ptr<const TokenPieces> pieces_;
  JsonPrefix state_;
};

// JSON that a JSON schema describes (OpenAI's json_schema response format); see json_schema.h.
class SchemaConstraint final : public TokenConstraint {
 public:
  SchemaConstraint(std::shared_ptr<const TokenPieces> pieces, std::shared_ptr<const JsonSchema> schema);
  bool mask(float* logits, int n_vocab) override;
  void accept(int32_t token) override;
  bool done() const override { return state_.ended(); }

 private:
  std::shared_ptr<const TokenPieces> pieces_;
  std::shared_ptr<const JsonSchema> schema_;
  SchemaCursor state_;
};

}  // namespace kvscope
