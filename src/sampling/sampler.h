// Token sampling from logits: logit bias, greedy, temperature, top-k, top-p, min-p, repetition /
// presence / frequency penalties, seeded RNG (same seed and inputs give the same tokens).
#pragma once
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace kvscope {

struct SamplingParams {
  float temperature = 0.8f;   // <= 0 means greedy
  int top_k = 40;             // <= 0 disables
  float top_p = 0.95f;        // >= 1 disables
  float min_p = 0.05f;        // <= 0 disables
  float repeat_penalty = 1.0f;     // llama.cpp style: divide positive logits, multiply negative
  float presence_penalty = 0.0f;   // OpenAI style
  float frequency_penalty = 0.0f;
  int penalty_last_n = 64;         // window for penalties (-1 = whole history)
  uint64_t seed = 0xC0FFEE;
  // Added to a token's logit before anything else (OpenAI's logit_bias, llama.cpp's --logit-bias);
  // -infinity bans the token. Ids are checked against the vocabulary by validate_vocab.
  std::vector<std::pair<int32_t, float>> logit_bias;
  void validate() const;           // throws InputError naming the bad parameter
  // Throws InputError naming a logit_bias id outside [0, n_vocab).
  void validate_vocab(int n_vocab) const;
};

class Sampler {
 public:
  explicit Sampler(SamplingParams p);
  // history: previously generated/prompt tokens used for penalties.
  int32_t sample(const float* logits, int n_vocab, const std::vector<int32_t>& history);
  const SamplingParams& params() const { return p_; }

 private:
  SamplingParams p_;
  std::vector<float> bias_;  // n_vocab values once a logit_bias is set (built on the first call)
  std::mt19937_64 rng_;
  std::vector<std::pair<float, int32_t>> cand_;
  std::vector<float> scratch_;  // the adjusted logits, when nothing is truncated
};

int32_t argmax(const float* logits, int n);

// Pushes every token not marked in `allowed` out of reach (-inf); a no-op when `allowed` is empty.
void keep_only(float* logits, int n_vocab, const std::vector<uint8_t>& allowed);

}  // namespace kvscope
