// Scale-out on loopback: replicas of the kvscope binary sharing a KV tier in redis-server, behind
// nginx, all started by deploy/local-cluster.sh (so the test also runs the shipped config and
// script). Needs KVSCOPE_BIN, nginx and redis-server (scripts/install-deps.sh installs both).
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

#include "server/server_test_util.h"

namespace kvscope::test {
namespace {

bool have(const std::string& tool) {
  int st = 1;
  run_capture("command -v " + tool + " >/dev/null 2>&1 || test -x /usr/sbin/" + tool, &st);
  return st == 0;
}

// The model: a random-weight llama with a 2,048-token context (long shared prefixes), written once.
std::string cluster_model() {
  static std::string path = [] {
    const std::string p = (temp_dir() / "scaleout.gguf").string();
    if (!std::filesystem::exists(p))
      run_capture(kvscope_bin() + " gen-model --arch llama --dim 256 --layers 4 --heads 8 --kv-heads 4 --ffn 688 --vocab 512"
                                  " --ctx 2048 --type f32 --seed 7 -o " + p + " 2>&1");
    return p;
  }();
  return path;
}

class Cluster {
 public:
  // n replicas; extra: more `kvscope serve` arguments.
  Cluster(int n, const std::string& extra = "") {
    // Below the ephemeral range (32768+), where outgoing connections could hold a port; every port
    // the cluster needs is checked free.
    for (int tries = 0; tries < 50; ++tries) {
      port_ = 20000 + static_cast<int>((::getpid() + counter()++) % 150) * 80;
      bool free = true;
      for (int p : {port_, port_ + 100}) free = free && port_free(p);
      for (int i = 1; i <= n; ++i) free = free && port_free(port_ + i);
      if (free) break;
    }
    dir_ = (temp_dir() / ("cluster-" + std::to_string(port_))).string();
    const std::string cmd = std::string(KVSCOPE_SOURCE_DIR) + "/deploy/local-cluster.sh start -n " + std::to_string(n) +
                            " --port " + std::to_string(port_) + " --dir " + dir_ + " --model " + cluster_model() +
                            " --kvscope " + kvscope_bin() +
                            " -- --threads 1 --kv-mem 64 --signals off --shutdown-grace 2 " + extra + " 2>&1";
    int st = 1;
    log_ = run_capture(cmd, &st);
    ok_ = st == 0;
  }
  ~Cluster() { run_capture(std::string(KVSCOPE_SOURCE_DIR) + "/deploy/local-cluster.sh stop --dir " + dir_ + " 2>&1"); }
  bool ok() const { return ok_; }
  const std::string& log() const { return log_; }
  int router() const { return port_; }
  int replica(int i) const { return port_ + i; }  // 1-based
  int redis_port() const { return port_ + 100; }
  std::string replica_log(int i) const {
    std::ifstream f(dir_ + "/replica-" + std::to_string(i) + ".log");
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }
  pid_t pid(int i) const {
    std::ifstream f(dir_ + "/replica-" + std::to_string(i) + ".pid");
    pid_t p = 0;
    f >> p;
    return p;
  }
  // SIGKILL, then waits until the process is gone (or a zombie: local-cluster.sh's shell has exited,
  // so whoever adopted it reaps it).
  void kill_replica(int i) const {
    const pid_t p = pid(i);
    ::kill(p, SIGKILL);
    const std::string status = "/proc/" + std::to_string(p) + "/status";
    eventually([&] {
      std::ifstream f(status);
      std::string line;
      while (std::getline(f, line))
        if (line.rfind("State:", 0) == 0) return line.find('Z') != std::string::npos;
      return true;  // no such process
    }, 5);
  }
  std::string metrics(int i) const { return http(replica(i), "GET", "/metrics", "", auth_).body; }
  void set_metrics_auth(const std::string& key) { auth_ = {{"Authorization", "Bearer " + key}}; }
  // Waits until replica i has sent every queued tier write.
  bool drained(int i) const {
    return eventually([&] { return metric(metrics(i), "kvscope_kv_tier_pending_writes") == 0; }, 10);
  }

 private:
  static bool port_free(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
  }
  static int& counter() {
    static int c = 0;
    return c;
  }
  int port_ = 0;
  bool ok_ = false;
  std::string dir_, log_;
  std::map<std::string, std::string> auth_;
};

#define REQUIRE_CLUSTER_TOOLS()                                                                                \
  do {                                                                                                         \
    const std::string bin = kvscope_bin();                                                                     \
    if (bin.find('/') == std::string::npos || !std::filesystem::exists(bin))                                  \
      GTEST_SKIP() << "KVSCOPE_BIN not set to the built binary";                                               \
    if (!have("nginx") || !have("redis-server") || !have("curl"))                                              \
      GTEST_SKIP() << "nginx, redis-server or curl missing (scripts/install-deps.sh installs them)";           \
  } while (0)

// A prompt of n token ids, different for each seed.
std::vector<int> tokens(int n, int seed) {
  std::vector<int> t(n);
  uint64_t x = 0x9e3779b97f4a7c15ULL * (seed + 1);
  for (auto& v : t) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v = 3 + static_cast<int>(x % 500);
  }
  return t;
}

struct Answer {
  int status = 0;
  std::string text;
  int cached = -1, tier = -1;
  double ttft_s = -1;
  bool done = false;  // a stream ended with [DONE]
  std::string upstream;
  json error;
};

// A streamed completion: text, time to the first token, and the final chunk's kvscope fields.
Answer stream_completion(int port, const json& body, const std::map<std::string, std::string>& headers = {}) {
  Answer a;
  json b = body;
  b["stream"] = true;
  b["temperature"] = 0;
  HttpConn c(port);
  const auto t0 = std::chrono::steady_clock::now();
  HttpResponse r;
  if (!c.connected() || !c.send("POST", "/v1/completions", b.dump(), headers) || !c.read_head(r)) return a;
  a.status = r.status;
  a.upstream = r.headers["x-kvscope-upstream"];
  if (r.status != 200) {
    a.error = json::parse(c.read_body(), nullptr, false);
    return a;
  }
  for (;;) {
    const std::string ev = c.next_event();
    if (ev.empty()) break;
    if (ev == "[DONE]") {
      a.done = true;
      break;
    }
    const json j = json::parse(ev, nullptr, false);
    if (j.is_discarded()) break;
    if (j.contains("choices") && !j["choices"].empty()) {
      const std::string t = j["choices"][0].value("text", "");
      if (!t.empty() && a.ttft_s < 0) a.ttft_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      a.text += t;
    }
    if (j.contains("kvscope")) {
      a.cached = j["kvscope"].value("prompt_tokens_cached", -1);
      a.tier = j["kvscope"].value("prompt_tokens_tier", -1);
    }
  }
  return a;
}

// A prefix computed on replica A is served on replica B from the tier: B reports the prompt as
// cached (and from the tier) and answers exactly as A did. TTFT of a 1,500-token prefix fetched vs
// recomputed is measured and printed (not asserted: speed is for docs/results).
TEST(ScaleOut, PrefixComputedOnOneReplicaIsServedOnAnotherFromTheTier) {
  REQUIRE_CLUSTER_TOOLS();
  Cluster cl(2);
  ASSERT_TRUE(cl.ok()) << cl.log();
  std::vector<double> ratios;
  for (int round = 0; round < 3; ++round) {
    const auto prompt = tokens(1500, 100 + round);
    const json body = {{"prompt", prompt}, {"max_tokens", 8}};
    const Answer a = stream_completion(cl.replica(1), body);
    ASSERT_EQ(a.status, 200);
    ASSERT_TRUE(a.done);
    EXPECT_EQ(a.cached, 0) << "a fresh prompt cannot be cached yet";
    ASSERT_TRUE(cl.drained(1));
    const Answer b = stream_completion(cl.replica(2), body);
    ASSERT_EQ(b.status, 200);
    ASSERT_TRUE(b.done);
    EXPECT_EQ(b.text, a.text) << "the same greedy output from tier blocks";
    // 93 full blocks of 16 (1,488 tokens) come from the tier; the rest is computed.
    EXPECT_EQ(b.cached, 1488);
    EXPECT_EQ(b.tier, 1488);
    ratios.push_back(b.ttft_s / a.ttft_s);
    std::printf("[scale-out] round %d: TTFT of a 1,500-token prompt recomputed %.1f ms, fetched from the tier %.1f ms (%.0f%%)\n",
                round, a.ttft_s * 1e3, b.ttft_s * 1e3, 100 * b.ttft_s / a.ttft_s);
  }
  std::sort(ratios.begin(), ratios.end());
  std::printf("[scale-out] TTFT fetched/recomputed: median %.0f%% (range %.0f%%-%.0f%%)\n", 100 * ratios[1], 100 * ratios.front(),
              100 * ratios.back());
  const std::string m = cl.metrics(2);
  EXPECT_GE(metric(m, "kvscope_kv_tier_blocks_fetched_total"), 3 * 93);
  EXPECT_GE(metric(cl.metrics(1), "kvscope_kv_tier_blocks_written_total"), 3 * 93);
}

// A conversation pinned on one replica continues on another after its replica is killed between
// turns, with exactly the output of the same conversation run without interruption.
TEST(ScaleOut, SessionSurvivesItsReplicaBeingKilledBetweenTurns) {
  REQUIRE_CLUSTER_TOOLS();
  Cluster cl(3);
  ASSERT_TRUE(cl.ok()) << cl.log();
  const std::vector<std::string> user = {"Once upon a time there was a little robot who lived in a garden.",
                                         " The robot asked the gardener a question about the roses.",
                                         " Then the sun went down and the robot said goodnight."};
  // The prompt of turn k is the whole conversation so far: earlier prompts, answers, the new text.
  auto run_turns = [&](int port, const std::string& sid, int kill_after_turn, std::vector<Answer>& out) {
    std::string history;
    for (size_t k = 0; k < user.size(); ++k) {
      history += user[k];
      // Each run its own cache salt: the interrupted run cannot borrow the reference run's blocks.
      const json body = {{"prompt", history}, {"max_tokens", 12}, {"temperature", 0}, {"cache_salt", sid}};
      HttpResponse r = post(port, "/v1/completions", body, {{"X-Session-Id", sid}});
      Answer a;
      a.status = r.status;
      a.upstream = r.headers["x-kvscope-upstream"];
      if (r.status != 200) {
        out.push_back(a);
        return;
      }
      const json j = r.j();
      a.text = j["choices"][0]["text"];
      a.cached = j["kvscope"]["prompt_tokens_cached"];
      EXPECT_EQ(j["kvscope"]["session_id"], sid) << "the header names the session";
      out.push_back(a);
      history += a.text;
      if (static_cast<int>(k) == kill_after_turn) {
        const int idx = std::stoi(a.upstream.substr(a.upstream.rfind(':') + 1)) - cl.router();
        ASSERT_TRUE(idx >= 1 && idx <= 3) << a.upstream;
        EXPECT_TRUE(cl.drained(idx));
        cl.kill_replica(idx);
      }
    }
  };
  std::vector<Answer> ref, cut;
  run_turns(cl.router(), "reference-run", -1, ref);
  run_turns(cl.router(), "interrupted-run", 0, cut);
  ASSERT_EQ(ref.size(), user.size());
  ASSERT_EQ(cut.size(), user.size());
  for (size_t k = 0; k < user.size(); ++k) {
    EXPECT_EQ(cut[k].status, 200) << "turn " << k;
    EXPECT_EQ(cut[k].text, ref[k].text) << "turn " << k;
  }
  EXPECT_NE(cut[1].upstream, cut[0].upstream) << "turn 2 went to another replica";
  // Turn 2 ran on a replica that never saw turn 1: its history came from the tier.
  EXPECT_GT(cut[1].cached, 0);
  // ... pinned as a session from the tier's record (not just prefix blocks).
  const int turn2 = std::stoi(cut[1].upstream.substr(cut[1].upstream.rfind(':') + 1)) - cl.router();
  EXPECT_GE(metric(cl.metrics(turn2), "kvscope_kv_tier_sessions_restored_total"), 1);
  EXPECT_GT(cut[2].cached, cut[1].cached);
}

// One tenant's blocks are never served to another: the same prompt under another API key is
// computed from scratch on a replica that has the first tenant's blocks in the tier, while the first
// tenant gets them there.
TEST(ScaleOut, TenantsStayApartInTheTier) {
  REQUIRE_CLUSTER_TOOLS();
  // The tier's and the pool's gauges are global: only an admin key reads them.
  Cluster cl(2, "--api-key tenant-a-key --api-key tenant-b-key --admin-key ops-key");
  ASSERT_TRUE(cl.ok()) << cl.log();
  cl.set_metrics_auth("ops-key");
  const std::map<std::string, std::string> a_key = {{"Authorization", "Bearer tenant-a-key"}};
  const std::map<std::string, std::string> b_key = {{"Authorization", "Bearer tenant-b-key"}};
  const json body = {{"prompt", tokens(400, 42)}, {"max_tokens", 4}};
  const Answer a1 = stream_completion(cl.replica(1), body, a_key);
  ASSERT_EQ(a1.status, 200);
  EXPECT_EQ(a1.cached, 0);
  ASSERT_TRUE(cl.drained(1));
  const Answer b2 = stream_completion(cl.replica(2), body, b_key);
  ASSERT_EQ(b2.status, 200);
  EXPECT_EQ(b2.cached, 0) << "tenant B must not get tenant A's blocks";
  EXPECT_EQ(b2.tier, 0);
  EXPECT_EQ(b2.text, a1.text);
  ASSERT_TRUE(cl.drained(2));
  const Answer a2 = stream_completion(cl.replica(2), body, a_key);
  ASSERT_EQ(a2.status, 200);
  // 25 full blocks; the last prompt token is always recomputed.
  EXPECT_EQ(a2.tier, 399) << "tenant A gets its own blocks from the tier";
  EXPECT_EQ(a2.cached, 399);
  EXPECT_EQ(a2.text, a1.text);
  // Both tenants' blocks are in Redis, under different keys.
  int st = 1;
  const std::string n = run_capture("redis-cli -p " + std::to_string(cl.redis_port()) + " --scan --pattern 'kvscope:kv:*:b:*' | wc -l", &st);
  EXPECT_EQ(std::stoi(n), 2 * 25);
}

// 64 streaming clients through nginx while one of three replicas is killed: every request either
// completes with the text its prompt gives alone or fails with a retryable error (an HTTP 502/503/429
// with a JSON body, or a stream cut before [DONE]); with client retries every request completes, and
// the survivors hold no KV block afterwards.
TEST(ScaleOut, LoadThroughNginxSurvivesAReplicaKilledMidRun) {
  REQUIRE_CLUSTER_TOOLS();
  Cluster cl(3);
  ASSERT_TRUE(cl.ok()) << cl.log();
  constexpr int kClients = 64, kPrompts = 8;
  std::vector<json> bodies;
  std::vector<std::string> lone;
  for (int p = 0; p < kPrompts; ++p) {
    // Long enough that replica 2 is still streaming when it is killed, however fast it decodes.
    bodies.push_back({{"prompt", tokens(48 + 8 * p, 500 + p)}, {"max_tokens", 64}});
    const Answer a = stream_completion(cl.replica(1 + p % 3), bodies.back());
    ASSERT_EQ(a.status, 200);
    ASSERT_TRUE(a.done);
    lone.push_back(a.text);
  }
  std::mutex mu;
  std::vector<std::string> problems;
  std::atomic<int> started{0}, retried{0}, cut_streams{0}, error_replies{0}, completed{0};
  auto client = [&](int i) {
    const int p = i % kPrompts;
    for (int attempt = 0; attempt < 6; ++attempt) {
      started.fetch_add(1);
      const Answer a = stream_completion(cl.router(), bodies[p]);
      if (a.status == 200 && a.done) {
        if (a.text != lone[p]) {
          std::lock_guard lk(mu);
          problems.push_back("client " + std::to_string(i) + ": completed with another text than the lone run");
        }
        completed.fetch_add(1);
        return;
      }
      // What a failure may look like: a cut stream, or an error status with an OpenAI error body.
      const bool cut = a.status == 200 && !a.done;
      const bool clean_error = (a.status == 502 || a.status == 503 || a.status == 429 || a.status == 504) &&
                               (a.status == 502 || a.status == 504 || (a.error.is_object() && a.error.contains("error")));
      if (cut) cut_streams.fetch_add(1);
      else if (clean_error) error_replies.fetch_add(1);
      if (!cut && !clean_error) {
        std::lock_guard lk(mu);
        problems.push_back("client " + std::to_string(i) + ": unclean failure, status " + std::to_string(a.status));
        return;
      }
      retried.fetch_add(1);
    }
    std::lock_guard lk(mu);
    problems.push_back("client " + std::to_string(i) + ": no success in 6 attempts");
  };
  const double before = metric(cl.metrics(2), "kvscope_generation_tokens_total");
  std::vector<std::thread> ts;
  for (int i = 0; i < kClients; ++i) ts.emplace_back(client, i);
  // Kill replica 2 once its streams are under way (about 10 tokens into each).
  EXPECT_TRUE(eventually([&] { return metric(cl.metrics(2), "kvscope_generation_tokens_total") >= before + 200; }, 30));
  cl.kill_replica(2);
  for (auto& t : ts) t.join();
  std::printf("[scale-out] 64 streaming clients, replica 2 killed mid-run: %d completed, %d retries (%d cut streams, %d error replies)\n",
              completed.load(), retried.load(), cut_streams.load(), error_replies.load());
  EXPECT_TRUE(problems.empty()) << problems.front();
  EXPECT_EQ(completed.load(), kClients);
  EXPECT_GE(retried.load(), 1) << "the kill came after replica 2 had finished its streams";
  // No KV block leaked on the survivors: with every request finished, none is referenced.
  for (int i : {1, 3}) {
    EXPECT_TRUE(eventually([&] { return metric(cl.metrics(i), "kvscope_kv_blocks_used") == 0; }, 10))
        << "replica " << i << " holds blocks: " << metric(cl.metrics(i), "kvscope_kv_blocks_used");
    EXPECT_EQ(metric(cl.metrics(i), "kvscope_requests_running"), 0);
  }
}

// Redis gone: replicas keep serving (locally), warn once per outage, and use the tier again when it
// is back.
TEST(ScaleOut, ServingGoesOnWhenRedisIsDown) {
  REQUIRE_CLUSTER_TOOLS();
  Cluster cl(1);
  ASSERT_TRUE(cl.ok()) << cl.log();
  run_capture("redis-cli -p " + std::to_string(cl.redis_port()) + " shutdown nosave 2>&1");
  for (int i = 0; i < 3; ++i) {
    const Answer a = stream_completion(cl.router(), {{"prompt", tokens(100, 900 + i)}, {"max_tokens", 4}});
    EXPECT_EQ(a.status, 200);
    EXPECT_TRUE(a.done);
  }
  EXPECT_TRUE(eventually([&] { return metric(cl.metrics(1), "kvscope_kv_tier_up") == 0; }, 5));
  // One warning for the outage, however many requests met it.
  const std::string log = cl.replica_log(1);
  int warnings = 0;
  for (size_t at = 0; (at = log.find("warning: kv tier", at)) != std::string::npos; ++at) ++warnings;
  EXPECT_EQ(warnings, 1) << log;
}

}  // namespace
}  // namespace kvscope::test

namespace kvscope::test {
namespace {

// What cannot run here is at least checked: the Kubernetes manifests (parse, required fields,
// selectors, /health probes, scrape annotations, the router's nginx.conf through `nginx -t`), the
// systemd layout's nginx site, and the cluster script's shell syntax.
TEST(ScaleOut, DeployFilesAreValid) {
  int st = 1;
  const std::string src = KVSCOPE_SOURCE_DIR;
  const std::string bash_out = run_capture("bash -n " + src + "/deploy/local-cluster.sh 2>&1", &st);
  EXPECT_EQ(st, 0) << bash_out;
  if (run_capture("python3 -c 'import yaml' 2>&1", &st), st != 0) GTEST_SKIP() << "python3-yaml missing";
  const std::string k8s = run_capture("python3 " + src + "/deploy/k8s/check.py 2>&1", &st);
  EXPECT_EQ(st, 0) << k8s;
  if (!have("nginx")) GTEST_SKIP() << "nginx missing";
  const auto dir = temp_dir() / "nginx-site";
  std::filesystem::create_directories(dir);
  {
    std::ifstream in(src + "/deploy/nginx/kvscope-site.conf");
    std::string site((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Loopback only: a check, not a router.
    for (size_t at; (at = site.find("listen 8080;")) != std::string::npos;) site.replace(at, 12, "listen 127.0.0.1:18080;");
    std::ofstream out(dir / "nginx.conf");
    out << "pid " << (dir / "nginx.pid").string() << ";\nevents {}\nhttp {\n" << site << "}\n";
  }
  const std::string t = run_capture("PATH=$PATH:/usr/sbin nginx -t -q -p " + dir.string() + " -c " + (dir / "nginx.conf").string() +
                                        " -e " + (dir / "error.log").string() + " 2>&1",
                                    &st);
  EXPECT_EQ(st, 0) << t;
}

}  // namespace
}  // namespace kvscope::test
