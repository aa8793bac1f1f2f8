// kvscope-reasoner: the engine's greedy outputs equal the PyTorch model's (tools/train) on a sample
// of test problems in every mode, and its tokenizer gives the prompt ids the trainer used.
// Fixture: tests/tinygsm/reasoner_greedy.jsonl, written by tools/train/make_parity_fixture.py.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "context_generate.h"
#include "engine/context.h"
#include "tinygsm/tinygsm.h"

namespace reasoner_parity_test {

using namespace kvscope;

namespace {
const std::string kModel = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.gguf";
const std::string kFixture = std::string(KVSCOPE_SOURCE_DIR) + "/tests/tinygsm/reasoner_greedy.jsonl";
}  // namespace

TEST(ReasonerParity, GreedyMatchesPyTorch) {
  if (!std::filesystem::exists(kModel) || !std::filesystem::exists(kFixture))
    GTEST_SKIP() << "no models/kvscope-reasoner.gguf or fixture";
  auto model = Model::load(kModel);
  Context ctx(*model, ContextParams{0, 1, 512});
  SamplingParams sp;
  sp.temperature = 0.0f;
  std::ifstream in(kFixture);
  std::string line;
  int total = 0, same = 0, prompt_same = 0, correct_engine = 0, correct_torch = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    auto mode = tinygsm::parse_mode(j["mode"].get<std::string>());
    ASSERT_TRUE(mode);
    auto item = tinygsm::generate_item(tinygsm::Split::Test, tinygsm::kDefaultSeed, j["index"].get<uint64_t>());
    const std::string prompt = tinygsm::format_prompt(item, *mode);
    ASSERT_EQ(prompt, j["prompt"].get<std::string>()) << "the generator changed since the fixture was written";
    auto ids = model->tokenizer().encode(prompt, true, false);
    auto want_prompt = j["prompt_ids"].get<std::vector<int32_t>>();
    prompt_same += ids == want_prompt;
    EXPECT_EQ(ids, want_prompt) << prompt;
    auto want = j["tokens"].get<std::vector<int32_t>>();
    GenerateResult r = generate(ctx, ids, sp, static_cast<int>(want.size()) + 8);
    const bool eq = r.tokens == want;
    if (!eq)
      std::printf("differs [%s] %s\n engine: %s\n torch:  %s\n", j["mode"].get<std::string>().c_str(), prompt.c_str(),
                  r.text.c_str(), j["text"].get<std::string>().c_str());
    same += eq;
    correct_engine += tinygsm::parse_answer(r.text) == item.answer;
    correct_torch += tinygsm::parse_answer(j["text"].get<std::string>()) == item.answer;
    ++total;
  }
  ASSERT_GT(total, 0);
  EXPECT_EQ(prompt_same, total);
  EXPECT_GE(same, total * 99 / 100) << same << "/" << total << " identical";
  EXPECT_NEAR(correct_engine, correct_torch, total / 100 + 0.5);
}

}  // namespace reasoner_parity_test
