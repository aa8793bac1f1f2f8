// kvscope bench-serve end to end on a tiny generated model.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace bench_serve_test {

using namespace kvscope;

TEST(CliBenchServe, PrintsOneResultPerConcurrencyLevel) {
  auto model = (test::temp_dir() / "bench_serve.gguf").string();
  int st = 0;
  std::string out = test::run_capture(test::kvscope_bin() + " gen-model --dim 64 --layers 1 --heads 2 --kv-heads 1 --ffn 64 " +
                                          "--vocab 320 --ctx 64 -o " + model + " 2>&1",
                                      &st);
  ASSERT_EQ(st, 0) << out;
  out = test::run_capture(test::kvscope_bin() + " bench-serve -m " + model +
                              " -t 1 --concurrency 1,3 --prompt-len 8 --gen-len 4 --json 2>&1",
                          &st);
  ASSERT_EQ(st, 0) << out;
  auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["results"][1]["concurrency"], 3);
  EXPECT_GT(j["results"][1]["gen_tok_s"].get<double>(), 0);
  out = test::run_capture(test::kvscope_bin() + " bench-serve -m " + model + " --concurrency 0 2>&1", &st);
  EXPECT_EQ(st, 1) << out;
  EXPECT_EQ(out.rfind("error:", 0), 0u) << out;
}

TEST(CliBenchServe, MixedLengthsAndSessionTurnTwo) {
  auto model = (test::temp_dir() / "bench_serve_mixed.gguf").string();
  int st = 0;
  std::string out = test::run_capture(test::kvscope_bin() + " gen-model --dim 64 --layers 1 --heads 2 --kv-heads 1 --ffn 64 " +
                                          "--vocab 320 --ctx 256 -o " + model + " 2>&1",
                                      &st);
  ASSERT_EQ(st, 0) << out;
  out = test::run_capture(test::kvscope_bin() + " bench-serve -m " + model +
                              " -t 1 --concurrency 4 --prompt-len 4 --prompt-len-max 40 --gen-len 2 --gen-len-max 9 --json 2>&1",
                          &st);
  ASSERT_EQ(st, 0) << out;
  auto j = nlohmann::json::parse(out);
  const auto& r = j["results"][0];
  EXPECT_EQ(r["preemptions"], 0);
  EXPECT_GE(r["kv_waste"].get<double>(), 0.0);
  EXPECT_LT(r["kv_waste"].get<double>(), 1.0);
  // Turn 2 extends the session's history: everything but the new user turn comes from the pinned KV.
  out = test::run_capture(test::kvscope_bin() + " bench-serve -m " + model + " -t 1 --session-history 100 --gen-len 4 --json 2>&1", &st);
  ASSERT_EQ(st, 0) << out;
  j = nlohmann::json::parse(out);
  EXPECT_EQ(j["turn2_prompt_tokens"], 100 + 4 + 32);
  EXPECT_GE(j["turn2_cached_tokens"].get<int>(), 100);
  EXPECT_GT(j["ttft_recompute_ms"].get<double>(), 0);
  out = test::run_capture(test::kvscope_bin() + " bench-serve -m " + model + " --session-history 250 2>&1", &st);
  EXPECT_EQ(st, 1) << out;
  EXPECT_NE(out.find("context"), std::string::npos) << out;
}

}  // namespace bench_serve_test
