// kvscope bench-serve end to end on a tiny generated model.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

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
