// Load over loopback: 64 concurrent streaming clients with mixed prompt lengths send a fixed number
// of greedy requests; each must produce exactly the text of a lone greedy run, and afterwards no KV
// block may still be in use. Prints latency percentiles. Scaled down under sanitizers.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>

#include "context_generate.h"
#include "engine/context.h"
#include "server_test_util.h"

namespace server_load_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kRequests = 64, kGenTokens = 4, kMaxRepeat = 3, kPrompts = 8;
#else
constexpr int kRequests = 256, kGenTokens = 24, kMaxRepeat = 20, kPrompts = 16;
#endif
constexpr int kClients = 64;

double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

TEST(ServerLoad, ConcurrentStreamingClientsGetTheirLoneGreedyText) {
  auto o = test_options();
  o.engine.kv_mem_bytes = size_t{64} << 20;
  auto srv = start_server(o);
  const int port = srv->port();
  auto model = Model::load(server_model_path());

  // Mixed lengths: from a few tokens to a few hundred.
  std::vector<std::string> prompts;
  std::vector<std::string> expected;
  SamplingParams greedy;
  greedy.temperature = 0;
  for (int k = 0; k < kPrompts; ++k) {
    std::string p = "Request " + std::to_string(k) + ":";
    const int repeat = 1 + (k * 7919) % kMaxRepeat;
    for (int r = 0; r < repeat; ++r) p += " the story of number " + std::to_string(r);
    Context ctx(*model, {0, 2, 512});
    expected.push_back(generate(ctx, model->tokenizer().encode(p, true, false), greedy, kGenTokens).text);
    prompts.push_back(std::move(p));
  }

  std::atomic<int> next{0};
  std::mutex mu;
  std::vector<double> latency, ttft;
  std::vector<std::string> failures;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c)
    clients.emplace_back([&] {
      for (int i; (i = next.fetch_add(1)) < kRequests;) {
        const int k = i % kPrompts;
        const auto start = std::chrono::steady_clock::now();
        HttpConn conn(port);
        HttpResponse head;
        std::string text, err;
        double first = -1;
        const json body = {{"prompt", prompts[k]}, {"max_tokens", kGenTokens}, {"temperature", 0}, {"stream", true}};
        if (!conn.send("POST", "/v1/completions", body.dump()) || !conn.read_head(head) || head.status != 200) {
          err = "request " + std::to_string(i) + ": status " + std::to_string(head.status);
        } else {
          bool done = false;
          for (std::string ev; !(ev = conn.next_event()).empty();) {
            if (ev == "[DONE]") {
              done = true;
              break;
            }
            if (first < 0) first = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            text += json::parse(ev)["choices"][0]["text"].get<std::string>();
          }
          if (!done) err = "request " + std::to_string(i) + ": stream ended without [DONE]";
          else if (text != expected[k]) err = "request " + std::to_string(i) + ": got '" + text + "', lone run gave '" + expected[k] + "'";
        }
        const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::lock_guard lk(mu);
        if (!err.empty()) failures.push_back(err);
        latency.push_back(total);
        if (first >= 0) ttft.push_back(first);
      }
    });
  for (auto& t : clients) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  EXPECT_TRUE(failures.empty()) << failures.size() << " failed, first: " << failures.front();
  ASSERT_EQ(latency.size(), static_cast<size_t>(kRequests));
  EXPECT_TRUE(eventually([&] {
    const std::string m = srv->metrics_text();
    return metric(m, "kvscope_kv_blocks_used") == 0 && metric(m, "kvscope_requests_running") == 0 &&
           metric(m, "kvscope_requests_in_flight") == 0;
  })) << srv->metrics_text();
  const std::string m = srv->metrics_text();
  EXPECT_EQ(metric(m, "kvscope_requests_total"), kRequests);
  std::printf("[ load ] %d requests from %d streaming clients, %d tokens each, in %.2f s (%.1f req/s); "
              "latency p50 %.0f ms p99 %.0f ms; first token p50 %.0f ms p99 %.0f ms; preemptions %.0f, prefix hit rate %.2f\n",
              kRequests, kClients, kGenTokens, wall, kRequests / wall, 1e3 * pct(latency, 0.5), 1e3 * pct(latency, 0.99),
              1e3 * pct(ttft, 0.5), 1e3 * pct(ttft, 0.99), metric(m, "kvscope_preemptions_total"),
              metric(m, "kvscope_prefix_cache_hit_rate"));
}

}  // namespace server_load_test
