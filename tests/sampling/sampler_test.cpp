#include "sampling/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "util/error.h"

namespace sampler_test {

using namespace kvscope;

namespace {
std::vector<float> logits_of(std::initializer_list<float> l) { return std::vector<float>(l); }
}  // namespace

TEST(Sampler, GreedyPicksArgmax) {
  SamplingParams p;
  p.temperature = 0;
  Sampler s(p);
  auto l = logits_of({0.1f, 2.0f, -1.0f, 1.9f});
  EXPECT_EQ(s.sample(l.data(), 4, {}), 1);
}

TEST(Sampler, SameSeedSameTokensDifferentSeedDiffers) {
  std::vector<float> l(100);
  for (int i = 0; i < 100; ++i) l[i] = static_cast<float>(i % 7) * 0.3f;
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0;
  auto draw = [&](uint64_t seed) {
    p.seed = seed;
    Sampler s(p);
    std::vector<int32_t> out;
    for (int i = 0; i < 50; ++i) out.push_back(s.sample(l.data(), 100, {}));
    return out;
  };
  EXPECT_EQ(draw(7), draw(7));
  EXPECT_NE(draw(7), draw(8));
}

TEST(Sampler, TopKOnlyReturnsTheKBest) {
  std::vector<float> l = {5, 4, 3, 2, 1, 0};
  SamplingParams p;
  p.temperature = 5.0f;  // nearly flat, so without top-k every token would appear
  p.top_k = 2;
  p.top_p = 1;
  p.min_p = 0;
  Sampler s(p);
  for (int i = 0; i < 500; ++i) EXPECT_LT(s.sample(l.data(), 6, {}), 2);
}

TEST(Sampler, TopPCutsTheTail) {
  // probs ~ 0.64, 0.24, 0.09, 0.03: top_p 0.8 keeps the first two
  std::vector<float> l = {3, 2, 1, 0};
  SamplingParams p;
  p.temperature = 1;
  p.top_k = 0;
  p.top_p = 0.8f;
  p.min_p = 0;
  Sampler s(p);
  std::map<int, int> seen;
  for (int i = 0; i < 2000; ++i) seen[s.sample(l.data(), 4, {})]++;
  EXPECT_EQ(seen.count(2), 0u);
  EXPECT_EQ(seen.count(3), 0u);
  EXPECT_GT(seen[1], 300);
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
  std::vector<float> l = {0, -1, -5, -6};  // p[2]/p[0] = e^-5 < 0.05
  SamplingParams p;
  p.temperature = 1;
  p.top_k = 0;
  p.top_p = 1;
  p.min_p = 0.05f;
  Sampler s(p);
  for (int i = 0; i < 2000; ++i) EXPECT_LT(s.sample(l.data(), 4, {}), 2);
}

TEST(Sampler, PenaltiesSteerAwayFromRepeats) {
  std::vector<float> l = {2.0f, 1.9f, 0.0f};
  SamplingParams p;
  p.temperature = 0;
  p.repeat_penalty = 1.5f;
  Sampler s(p);
  EXPECT_EQ(s.sample(l.data(), 3, {0}), 1);
  SamplingParams q;
  q.temperature = 0;
  q.presence_penalty = 0.5f;
  Sampler s2(q);
  EXPECT_EQ(s2.sample(l.data(), 3, {0}), 1);
  SamplingParams f;
  f.temperature = 0;
  f.frequency_penalty = 0.04f;
  Sampler s3(f);
  EXPECT_EQ(s3.sample(l.data(), 3, {0}), 0);          // one occurrence: 2.0 - 0.04 > 1.9
  EXPECT_EQ(s3.sample(l.data(), 3, {0, 0, 0, 0}), 1);  // four: 2.0 - 0.16 < 1.9
}

TEST(Sampler, BadParametersAreNamed) {
  auto bad = [](auto mutate, const char* word) {
    SamplingParams p;
    mutate(p);
    try {
      p.validate();
      ADD_FAILURE() << word;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  bad([](SamplingParams& p) { p.temperature = -1; }, "temperature");
  bad([](SamplingParams& p) { p.top_p = 0; }, "top_p");
  bad([](SamplingParams& p) { p.top_p = 1.5f; }, "top_p");
  bad([](SamplingParams& p) { p.min_p = 2; }, "min_p");
  bad([](SamplingParams& p) { p.top_k = -3; }, "top_k");
  bad([](SamplingParams& p) { p.repeat_penalty = 0; }, "repeat_penalty");
  bad([](SamplingParams& p) { p.presence_penalty = 3; }, "presence_penalty");
}

TEST(Sampler, UntruncatedDrawsFollowTheDistribution) {
  // No top-k, top-p or min-p (OpenAI's defaults) skips the sort; the draws must still follow
  // softmax(logits / T), as the sorted path's do.
  const auto l = logits_of({0.0f, std::log(2.0f), std::log(3.0f), -std::numeric_limits<float>::infinity(), std::log(4.0f)});
  for (const bool sorted : {false, true}) {
    SamplingParams p;
    p.temperature = 1.0f;
    p.top_k = 0;
    p.min_p = 0;
    p.top_p = sorted ? 0.99999f : 1.0f;
    p.seed = 9;
    Sampler s(p);
    std::map<int32_t, int> seen;
    const int n = 40000;
    for (int i = 0; i < n; ++i) seen[s.sample(l.data(), 5, {})]++;
    EXPECT_EQ(seen.count(3), 0u) << sorted;
    for (const auto& [id, want] : std::map<int32_t, double>{{0, 0.1}, {1, 0.2}, {2, 0.3}, {4, 0.4}})
      EXPECT_NEAR(seen[id] / double(n), want, 0.01) << "token " << id << (sorted ? " sorted" : " unsorted");
  }
  // Temperature still sharpens: at T = 0.5 the weights are squared (1, 4, 9, 16 over 30).
  SamplingParams p;
  p.temperature = 0.5f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0;
  Sampler s(p);
  int top = 0;
  for (int i = 0; i < 30000; ++i) top += s.sample(l.data(), 5, {}) == 4;
  EXPECT_NEAR(top / 30000.0, 16.0 / 30.0, 0.015);
}

TEST(Sampler, LogitBiasSteersBansAndIsChecked) {
  auto l = logits_of({0.1f, 2.0f, -1.0f, 1.9f});
  SamplingParams p;
  p.temperature = 0;
  p.logit_bias = {{2, 5.0f}};
  EXPECT_EQ(Sampler(p).sample(l.data(), 4, {}), 2);  // -1 + 5 beats 2.0
  p.logit_bias = {{1, -std::numeric_limits<float>::infinity()}};
  EXPECT_EQ(Sampler(p).sample(l.data(), 4, {}), 3);  // the argmax banned: the runner-up
  // Sampled, a banned token never comes out, however hot the temperature.
  p.temperature = 2.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0;
  p.logit_bias = {{1, -std::numeric_limits<float>::infinity()}, {3, -std::numeric_limits<float>::infinity()}};
  Sampler s(p);
  std::map<int32_t, int> seen;
  for (int i = 0; i < 500; ++i) seen[s.sample(l.data(), 4, {})]++;
  EXPECT_EQ(seen.count(1) + seen.count(3), 0u);
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[2], 0);
  // An id outside the vocabulary is named, on validation and when the sampler first meets the vocabulary.
  p.logit_bias = {{7, 1.0f}};
  EXPECT_THROW(p.validate_vocab(4), InputError);
  EXPECT_NO_THROW(p.validate_vocab(8));
  Sampler wide(p);
  try {
    wide.sample(l.data(), 4, {});
    ADD_FAILURE() << "an out-of-vocabulary bias was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("logit_bias token id 7"), std::string::npos) << e.what();
  }
  p.logit_bias = {{-1, 1.0f}};
  EXPECT_THROW(p.validate(), InputError);
  p.logit_bias = {{1, std::numeric_limits<float>::quiet_NaN()}};
  EXPECT_THROW(p.validate(), InputError);
}

TEST(Sampler, KeepOnlyLeavesTheAllowedTokens) {
  SamplingParams p;
  p.temperature = 1.5f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0;
  p.repeat_penalty = 1.3f;  // penalties must not bring a removed token back
  Sampler s(p);
  const std::vector<uint8_t> allowed = {0, 1, 0, 1, 0};
  for (int i = 0; i < 200; ++i) {
    auto l = logits_of({3.0f, -1.0f, 2.5f, 0.0f, -4.0f});
    keep_only(l.data(), 5, allowed);
    const int32_t t = s.sample(l.data(), 5, {0, 1, 2, 3, 4});
    ASSERT_TRUE(t == 1 || t == 3) << t;
  }
  auto l = logits_of({3.0f, -1.0f});
  keep_only(l.data(), 2, {});  // empty: nothing to restrict
  EXPECT_EQ(l, logits_of({3.0f, -1.0f}));
}

}  // namespace sampler_test
