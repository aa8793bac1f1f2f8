// The KV tier against a real redis-server (a child process of the test): two engines on one model
// stand for two replicas.
#include "kvtier/kv_tier.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "fixtures.h"
#include "util/error.h"

namespace kvscope::kvtier {
namespace {

using namespace std::chrono_literals;
constexpr const char* kRedisBin = "/usr/bin/redis-server";

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// A plain hiredis connection for looking at and tampering with what the tier stored.
class Direct {
 public:
  explicit Direct(int port, const char* password = nullptr) {
    c_ = redisConnect("127.0.0.1", port);
    if (c_ && password) freeReplyObject(redisCommand(c_, "AUTH %s", password));
  }
  ~Direct() {
    if (c_) redisFree(c_);
  }
  redisReply* cmd(const char* fmt, ...) {
    if (!c_ || c_->err) return nullptr;
    va_list ap;
    va_start(ap, fmt);
    void* r = redisvCommand(c_, fmt, ap);
    va_end(ap);
    return static_cast<redisReply*>(r);
  }
  long long integer(const char* fmt, const std::string& a = "") {
    redisReply* r = a.empty() ? cmd(fmt) : cmd(fmt, a.c_str());
    const long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r) freeReplyObject(r);
    return v;
  }
  std::vector<std::string> keys(const std::string& pattern) {
    std::vector<std::string> out;
    redisReply* r = cmd("KEYS %s", pattern.c_str());
    if (r && r->type == REDIS_REPLY_ARRAY)
      for (size_t i = 0; i < r->elements; ++i) out.emplace_back(r->element[i]->str, r->element[i]->len);
    if (r) freeReplyObject(r);
    return out;
  }

 private:
  redisContext* c_ = nullptr;
};

class RedisProcess {
 public:
  explicit RedisProcess(std::vector<std::string> extra = {}, int port = 0)
      : port_(port ? port : free_port()), extra_(std::move(extra)) {}
  ~RedisProcess() {
    if (pid_ > 0) ::kill(pid_, SIGKILL), ::waitpid(pid_, nullptr, 0);
  }
  bool start() {
    std::vector<std::string> args = {kRedisBin, "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "",
                                     "--appendonly", "no", "--daemonize", "no"};
    args.insert(args.end(), extra_.begin(), extra_.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 0), ::dup2(null, 1), ::dup2(null, 2);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(kRedisBin, argv.data());
      ::_exit(127);
    }
    for (int i = 0; i < 500; ++i, std::this_thread::sleep_for(20ms)) {
      redisContext* c = redisConnect("127.0.0.1", port_);
      const bool up = c && !c->err;
      if (c) redisFree(c);
      if (up) return true;
    }
    return false;
  }
  int port() const { return port_; }
  void signal(int sig) { ::kill(pid_, sig); }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

 private:
  int port_;
  std::vector<std::string> extra_;
  pid_t pid_ = -1;
};

#define REQUIRE_REDIS() \
  if (!std::filesystem::exists(kRedisBin)) GTEST_SKIP() << "redis-server missing (scripts/install-deps.sh installs it)"

const Model& model() {
  auto s = fixtures::tiny_spec();
  s.ctx = 256;
  s.seed = 31;
  return fixtures::model(s, "kvtier");
}

EngineParams params() {
  EngineParams p;
  p.n_threads = 1;
  p.n_blocks = 64;
  return p;
}

KvTierOptions options(const std::string& url, int64_t max_blocks = 65536) {
  KvTierOptions o;
  o.url = url;
  o.max_blocks = max_blocks;
  o.timeout_ms = 500;
  o.reconnect_after_ms = 100;
  return o;
}

std::vector<int32_t> prompt(int n, int seed) {
  std::vector<int32_t> t(n);
  for (int i = 0; i < n; ++i) t[i] = 1 + (i * 37 + seed * 101) % 390;
  return t;
}

Completion run(Engine& e, const std::vector<int32_t>& p, uint64_t salt = 0, const std::string& session = "", int n = 8) {
  Request r;
  r.prompt = p;
  r.max_tokens = n;
  r.sampling.temperature = 0;
  r.cache_salt = salt;
  r.session_id = session;
  r.ignore_eos = true;
  return e.wait(e.submit(std::move(r)));
}

TEST(KvTierUrl, ParsesCredentialsDatabaseAndRefusesJunk) {
  auto u = RedisUrl::parse("redis://alice:p%40ss@10.0.0.2:6380/3");
  EXPECT_EQ(u.user, "alice");
  EXPECT_EQ(u.password, "p@ss");
  EXPECT_EQ(u.host, "10.0.0.2");
  EXPECT_EQ(u.port, 6380);
  EXPECT_EQ(u.db, 3);
  EXPECT_EQ(u.display(), "10.0.0.2:6380/3") << "never the password";
  u = RedisUrl::parse("redis://:secret@localhost");
  EXPECT_EQ(u.user, "");
  EXPECT_EQ(u.password, "secret");
  EXPECT_EQ(u.port, 6379);
  EXPECT_EQ(RedisUrl::parse("redis://[::1]:7000").host, "::1");
  for (const char* bad : {"http://x:1", "redis://", "redis://h:0", "redis://h:99999", "redis://h:x", "redis://h:1/db",
                          "redis://user:@h:1", "redis://a:%zz@h:1", "redis://[::1:1"}) {
    try {
      RedisUrl::parse(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("bad redis URL"), std::string::npos) << e.what();
    }
  }
}

// Blocks computed by one engine are fetched into another, which then serves the prompt from its
// prefix cache with the same greedy tokens.
TEST(KvTier, BlocksOfOneEngineServeAnother) {
  REQUIRE_REDIS();
  RedisProcess redis;
  ASSERT_TRUE(redis.start());
  Engine a(model(), params()), b(model(), params());
  KvTier ta(options(redis.url())), tb(options(redis.url()));
  ta.attach(a);
  tb.attach(b);
  const auto p = prompt(100, 1);
  const Completion ca = run(a, p);
  EXPECT_EQ(ca.n_cached, 0);
  ASSERT_TRUE(ta.flush(5));
  EXPECT_EQ(ta.stats().blocks_written, 6u) << "100 prompt + 7 generated tokens with K/V: 6 full blocks";
  int computing = -1;
  EXPECT_EQ(tb.prefetch(p, 0, &computing), 96);
  EXPECT_EQ(computing, 4);
  const Completion cb = run(b, p);
  EXPECT_EQ(cb.n_cached, 96);
  EXPECT_EQ(cb.tokens, ca.tokens);
  EXPECT_EQ(tb.stats().blocks_fetched, 6u);
  // A prompt the local cache already holds costs no fetch.
  EXPECT_EQ(tb.prefetch(p, 0), 0);
  EXPECT_EQ(tb.stats().fetches, 1u);
}

// Another tenant's salt finds nothing, even for the same tokens; a damaged value is refused and the
// blocks are recomputed with the same result.
TEST(KvTier, TenantsAndDamagedValuesAreRefused) {
  REQUIRE_REDIS();
  RedisProcess redis;
  ASSERT_TRUE(redis.start());
  Engine a(model(), params()), b(model(), params());
  KvTier ta(options(redis.url())), tb(options(redis.url()));
  ta.attach(a);
  tb.attach(b);
  const auto p = prompt(80, 2);
  const Completion ca = run(a, p, /*salt=*/111);
  ASSERT_TRUE(ta.flush(5));
  EXPECT_EQ(tb.prefetch(p, /*salt=*/222), 0) << "another tenant's salt";
  EXPECT_EQ(tb.prefetch(p, /*salt=*/0), 0) << "no salt";
  EXPECT_EQ(tb.stats().blocks_fetched, 0u);
  // Damage the third block's value: the first two come in, the rest is recomputed.
  Direct d(redis.port());
  BlockHash h = 0;
  for (int i = 0; i < 3; ++i) h = hash_block(h, p.data() + i * 16, 16, 111);
  const std::string key = tb.block_key(111, h);
  redisReply* r = d.cmd("SETRANGE %s 200 %b", key.c_str(), "\x01\x02\x03", size_t{3});
  ASSERT_TRUE(r && r->type == REDIS_REPLY_INTEGER);
  freeReplyObject(r);
  EXPECT_EQ(tb.prefetch(p, 111), 32);
  EXPECT_EQ(tb.stats().bad_values, 1u);
  const Completion cb = run(b, p, 111);
  EXPECT_EQ(cb.n_cached, 32);
  EXPECT_EQ(cb.tokens, ca.tokens);
  // Keys carry the salt: a key under another tenant's salt holding tenant 111's bytes is refused too.
  const std::string stolen = tb.block_key(222, hash_block(0, p.data(), 16, 222));
  r = d.cmd("COPY %s %s", tb.block_key(111, hash_block(0, p.data(), 16, 111)).c_str(), stolen.c_str());
  if (r) freeReplyObject(r);
  Engine c(model(), params());
  KvTier tc(options(redis.url()));
  tc.attach(c);
  EXPECT_EQ(tc.prefetch(p, 222), 0);
  EXPECT_EQ(tc.stats().bad_values, 1u);
}

// A session pinned on one engine is restored on another, and its next turn gives exactly the
// tokens the first engine gives for it.
TEST(KvTier, SessionContinuesOnAnotherEngine) {
  REQUIRE_REDIS();
  RedisProcess redis;
  ASSERT_TRUE(redis.start());
  Engine a(model(), params()), b(model(), params());
  KvTier ta(options(redis.url())), tb(options(redis.url()));
  ta.attach(a);
  tb.attach(b);
  auto turn1 = prompt(45, 3);
  const Completion c1 = run(a, turn1, 7, "tenant/s1", 10);
  ASSERT_TRUE(ta.flush(5));
  EXPECT_EQ(ta.stats().sessions_written, 1u);
  auto turn2 = turn1;
  turn2.insert(turn2.end(), c1.tokens.begin(), c1.tokens.end());
  for (int32_t t : prompt(9, 4)) turn2.push_back(t);
  EXPECT_EQ(tb.restore_session("tenant/s2"), 0) << "no such session";
  EXPECT_EQ(tb.restore_session("tenant/s1"), 54) << "45 prompt + 9 generated tokens have K/V";
  EXPECT_TRUE(b.has_session("tenant/s1"));
  const Completion b2 = run(b, turn2, 7, "tenant/s1", 10);
  const Completion a2 = run(a, turn2, 7, "tenant/s1", 10);
  EXPECT_EQ(b2.n_cached, 54);
  EXPECT_EQ(a2.n_cached, 54);
  EXPECT_EQ(b2.tokens, a2.tokens);
  EXPECT_EQ(tb.stats().sessions_restored, 1u);
}

// The LRU bound: at most max_blocks block keys stay, the least recently used go.
TEST(KvTier, KeepsAtMostMaxBlocks) {
  REQUIRE_REDIS();
  RedisProcess redis;
  ASSERT_TRUE(redis.start());
  Engine a(model(), params());
  KvTier ta(options(redis.url(), /*max_blocks=*/10));
  ta.attach(a);
  for (int i = 0; i < 6; ++i) run(a, prompt(64, 10 + i), 0, "", 1);
  ASSERT_TRUE(ta.flush(5));
  Direct d(redis.port());
  EXPECT_EQ(ta.stats().blocks_written, 24u);
  EXPECT_EQ(d.keys(ta.prefix() + ":b:*").size(), 10u);
  EXPECT_EQ(ta.stats().evicted, 14u);
  EXPECT_EQ(d.integer("ZCARD %s", ta.prefix() + ":lru"), 10);
  // TTL on every key.
  for (const auto& k : d.keys(ta.prefix() + ":b:*")) EXPECT_GT(d.integer("TTL %s", k), 0) << k;
}

// AUTH and ACL users are honoured; a wrong password is an outage (serving goes on, nothing written).
TEST(KvTier, RedisAuthAndAclAreHonoured) {
  REQUIRE_REDIS();
  RedisProcess redis({"--requirepass", "s3cret"});
  ASSERT_TRUE(redis.start());
  {
    Direct d(redis.port(), "s3cret");
    redisReply* r = d.cmd("ACL SETUSER alice on >alice-pw ~kvscope:* +@all");
    ASSERT_TRUE(r && r->type == REDIS_REPLY_STATUS) << (r && r->str ? r->str : "no reply");
    freeReplyObject(r);
  }
  const std::string host = "127.0.0.1:" + std::to_string(redis.port());
  for (const std::string& url : {"redis://:s3cret@" + host, "redis://alice:alice-pw@" + host}) {
    Engine a(model(), params());
    KvTier t(options(url));
    t.attach(a);
    run(a, prompt(40, 20 + static_cast<int>(url.size())), 0, "", 1);
    ASSERT_TRUE(t.flush(5));
    EXPECT_EQ(t.stats().blocks_written, 2u) << url;
    EXPECT_TRUE(t.stats().connected) << url;
  }
  Engine a(model(), params());
  KvTier t(options("redis://alice:wrong@" + host));
  t.attach(a);
  const Completion c = run(a, prompt(40, 30), 0, "", 4);
  EXPECT_EQ(c.tokens.size(), 4u) << "serving goes on";
  ASSERT_TRUE(t.flush(5));
  EXPECT_EQ(t.stats().blocks_written, 0u);
  EXPECT_FALSE(t.stats().connected);
  EXPECT_EQ(t.prefetch(prompt(40, 31), 0), 0);
}

// Redis down: prefetch answers at once with nothing; writes are dropped, not queued forever; when
// Redis comes back the tier reconnects.
TEST(KvTier, RedisDownThenBack) {
  REQUIRE_REDIS();
  const int port = free_port();
  Engine a(model(), params());
  KvTier t(options("redis://127.0.0.1:" + std::to_string(port)));
  t.attach(a);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(t.prefetch(prompt(64, 40), 0), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  run(a, prompt(64, 41), 0, "", 1);
  ASSERT_TRUE(t.flush(5));
  EXPECT_FALSE(t.stats().connected);
  EXPECT_GE(t.stats().writes_dropped, 1u);
  EXPECT_EQ(t.stats().blocks_written, 0u);
  // Back: after the back-off the tier reconnects and writes land again.
  RedisProcess redis({}, port);
  ASSERT_TRUE(redis.start());
  std::this_thread::sleep_for(150ms);
  run(a, prompt(64, 42), 0, "", 1);
  ASSERT_TRUE(t.flush(5));
  EXPECT_TRUE(t.stats().connected);
  EXPECT_EQ(t.stats().blocks_written, 4u);
}

// The fetch is made only when it is estimated to beat recomputing: with a measured prefill far
// cheaper per block than the measured fetch, the blocks are recomputed (counted as skipped).
TEST(KvTier, RecomputesWhenThatIsCheaperThanFetching) {
  REQUIRE_REDIS();
  RedisProcess redis;
  ASSERT_TRUE(redis.start());
  Engine a(model(), params()), b(model(), params());
  KvTier ta(options(redis.url())), tb(options(redis.url()));
  ta.attach(a);
  tb.attach(b);
  const auto p1 = prompt(64, 60), p2 = prompt(64, 61);
  run(a, p1, 0, "", 1);
  run(a, p2, 0, "", 1);
  ASSERT_TRUE(ta.flush(5));
  EXPECT_EQ(tb.prefetch(p1, 0), 63);  // measures the fetch
  EXPECT_GT(tb.stats().fetch_s_per_block, 0);
  // A first token 1,000 tokens of prefill after submission, at once: prefill looks ~free.
  Request r;
  tb.watch_prefill(r, 1000);
  r.on_token(TokenEvent{1, 5, false, StopReason::None});
  ASSERT_GT(tb.stats().prefill_s_per_token, 0);
  ASSERT_LT(tb.stats().prefill_s_per_token * 16, tb.stats().fetch_s_per_block);
  EXPECT_EQ(tb.prefetch(p2, 0), 0);
  EXPECT_EQ(tb.stats().fetch_skipped, 1u);
  EXPECT_EQ(tb.stats().fetches, 1u);
}

// A Redis that stops answering (SIGSTOP) is an outage after one timeout: the fetch gives up within
// it, later ones do not wait at all during the back-off, and serving is unaffected.
TEST(KvTier, SlowRedisCostsOneTimeout) {
  REQUIRE_REDIS();
  RedisProcess redis;
  ASSERT_TRUE(redis.start());
  Engine a(model(), params()), b(model(), params());
  KvTierOptions o = options(redis.url());
  o.timeout_ms = 150;
  o.reconnect_after_ms = 5000;
  KvTier ta(o), tb(o);
  ta.attach(a);
  tb.attach(b);
  const auto p = prompt(64, 50);
  const Completion ca = run(a, p);
  ASSERT_TRUE(ta.flush(5));
  redis.signal(SIGSTOP);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(tb.prefetch(p, 0), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_FALSE(tb.stats().connected);
  t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(tb.prefetch(prompt(64, 51), 0), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 50ms) << "no second timeout during the back-off";
  EXPECT_EQ(run(b, p).tokens, ca.tokens) << "served locally";
  redis.signal(SIGCONT);
}

}  // namespace
}  // namespace kvscope::kvtier
