// Constrained decoding: a TokenConstraint decides, before each draw, which tokens may come next
// (structured output such as OpenAI's response_format), and follows the tokens drawn.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sampling/json_prefix.h"

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

// JSON output (a JSON object with object_only, as OpenAI's json_object mode asks): a token is
// allowed when its bytes keep the text a prefix of some JSON text. Tokens without bytes (control
// tokens, end of generation) are never allowed: the request ends when the value is complete.
// pieces: each token id's bytes as the detokenizer writes them (shared: built once per model).
class JsonConstraint final : public TokenConstraint {
 public:
  JsonConstraint(std::shared_ptr<const std::vector<std::string>> pieces, bool object_only);
  bool mask(float* logits, int n_vocab) override;
  void accept(int32_t token) override;
  bool done() const override { return state_.ended(); }
  const JsonPrefix& state() const { return state_; }

 private:
  std::shared_ptr<const std::vector<std::string>> pieces_;
  JsonPrefix state_;
};

}  // namespace kvscope
