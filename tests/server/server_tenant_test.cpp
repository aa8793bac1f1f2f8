// Tenants cannot see each other through shared caches: the decision cache of adaptive reasoning
// (keyed by the tenant's salt, per API key or per cache_salt) and the prefix cache (another tenant's
// time to first token on a prompt one tenant sent is that of a fresh prompt; the sender's own
// repeat is faster). The timing half uses many paired, interleaved repetitions and a rank test, so a
// loaded machine shifts both samples alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "server_test_util.h"

namespace server_tenant_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {
const std::string kReasoner = std::string(KVSCOPE_SOURCE_DIR) + "/models/kvscope-reasoner-v1.gguf";
const std::string kQuestion = "Question: (1) Ann has 21 pens. (2) She gives away 5. How many pens does Ann have now?";

std::map<std::string, std::string> bearer(const std::string& key) { return {{"Authorization", "Bearer " + key}}; }

// Mann-Whitney U as a normal z score (ties get mid ranks; n >= 20 per side keeps the normal
// approximation sound). Negative: x tends to be smaller than y.
double mann_whitney_z(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<std::pair<double, int>> all;
  for (double v : x) all.push_back({v, 0});
  for (double v : y) all.push_back({v, 1});
  std::sort(all.begin(), all.end());
  std::vector<double> rank(all.size());
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    for (size_t k = i; k < j; ++k) rank[k] = (double(i + 1) + double(j)) / 2;
    i = j;
  }
  double rx = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].second == 0) rx += rank[i];
  const double n1 = double(x.size()), n2 = double(y.size());
  const double u = rx - n1 * (n1 + 1) / 2;
  return (u - n1 * n2 / 2) / std::sqrt(n1 * n2 * (n1 + n2 + 1) / 12);
}
}  // namespace

TEST(ServerTenants, DecisionCacheIsPerTenant) {
  if (!std::filesystem::exists(kReasoner)) GTEST_SKIP() << "no embedded reasoner";
  auto o = test_options();
  o.model_path = kReasoner;
  o.api_keys = {"key-a", "key-b"};
  auto srv = start_server(o);
  const int port = srv->port();
  const json body = {{"prompt", kQuestion}, {"reasoning", "auto"}, {"temperature", 0}, {"max_tokens", 8}};
  auto source = [&](const std::string& key) {
    auto r = post(port, "/v1/completions", body, bearer(key));
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.j()["kvscope"]["reasoning"] : json::object();
  };
  const json a1 = source("key-a");
  EXPECT_EQ(a1["source"], "estimate");
  EXPECT_EQ(source("key-a")["source"], "cache");  // the tenant's own repeat is served from the cache
  const json b1 = source("key-b");
  EXPECT_EQ(b1["source"], "estimate") << "tenant B was answered from tenant A's decision";
  EXPECT_GT(b1["estimate_ms"].get<double>(), 0);
  EXPECT_NE(b1["decision_key"], a1["decision_key"]);  // the Redis key differs as well
  EXPECT_EQ(b1["initial_mode"], a1["initial_mode"]);  // same question, same model: same decision
  EXPECT_EQ(source("key-b")["source"], "cache");

  // Without API keys, cache_salt separates decisions the same way.
  srv.reset();
  o.api_keys.clear();
  srv = start_server(o);
  const int p2 = srv->port();
  auto salted = [&](const std::string& salt) {
    json req = body;
    if (!salt.empty()) req["cache_salt"] = salt;
    auto r = post(p2, "/v1/completions", req);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.j()["kvscope"]["reasoning"]["source"].get<std::string>() : "";
  };
  EXPECT_EQ(salted("team-1"), "estimate");
  EXPECT_EQ(salted("team-1"), "cache");
  EXPECT_EQ(salted("team-2"), "estimate");
  EXPECT_EQ(salted(""), "estimate");
}

TEST(ServerTenants, PrefixCacheTimingDoesNotLeakAcrossKeys) {
  auto o = test_options();
  o.api_keys = {"key-a", "key-b"};
  auto srv = start_server(o);
  const int port = srv->port();
  std::mt19937 rng(20261205);
  std::uniform_int_distribution<int> tok(10, 500);
  auto prompt = [&] {
    json p = json::array();
    for (int i = 0; i < 384; ++i) p.push_back(tok(rng));
    return p;
  };
  // Seconds until the response (max_tokens 1: the prefill dominates) and its cached token count.
  auto timed = [&](const std::string& key, const json& p, int& cached) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = post(port, "/v1/completions", {{"prompt", p}, {"max_tokens", 1}, {"temperature", 0}}, bearer(key));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.status, 200) << r.body;
    cached = r.status == 200 ? r.j()["kvscope"]["prompt_tokens_cached"].get<int>() : -1;
    return s;
  };
  const int rounds = 40;
  std::vector<double> cross, fresh, own;
  for (int i = 0; i < rounds; ++i) {
    const json pa = prompt(), pf = prompt();
    int c = 0;
    timed("key-a", pa, c);  // A's prompt enters the prefix cache
    // The three measured requests in a rotating order, so drift and load hit each alike.
    for (int k = 0; k < 3; ++k) {
      switch ((i + k) % 3) {
        case 0:
          cross.push_back(timed("key-b", pa, c));
          EXPECT_EQ(c, 0) << "tenant B reused tenant A's cached prompt";
          break;
        case 1:
          fresh.push_back(timed("key-b", pf, c));
          EXPECT_EQ(c, 0);
          break;
        default:
          own.push_back(timed("key-a", pa, c));
          EXPECT_GT(c, 0);
          break;
      }
    }
  }
  const double z_cross = mann_whitney_z(cross, fresh), z_own = mann_whitney_z(own, fresh);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("[ tenants ] median ms: B on A's prompt %.2f, fresh %.2f, A's repeat %.2f; z(B vs fresh) %.2f, z(A vs fresh) %.2f\n",
              1e3 * median(cross), 1e3 * median(fresh), 1e3 * median(own), z_cross, z_own);
  // |z| < 3.29 is p > 0.001 two-sided: B on A's prompt is indistinguishable from a fresh prompt...
  EXPECT_LT(std::abs(z_cross), 3.29) << "B's time on A's prompt differs from a fresh prompt's";
  // ...while A's own repeat is clearly faster (the detector works on this machine right now).
  EXPECT_LT(z_own, -3.29) << "A's repeat was not faster: the timing test cannot see the prefix cache";
}

}  // namespace server_tenant_test
