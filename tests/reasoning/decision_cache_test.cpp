// Decision cache: the LRU, the request hash, the JSON form, and how it behaves against a real
// redis-server that the tests start, kill, pause and restart (plus a listener that never answers).
#include "reasoning/decision_cache.h"

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
#include <sstream>
#include <thread>

#include "util/error.h"

namespace kvscope::reasoning {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
constexpr const char* kRedisBin = "/usr/bin/redis-server";

Decision make(Mode mode, double d, double c = 0.9) { return {mode, d, c, "d=" + std::to_string(d)}; }

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

int count_warnings(const std::string& text) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.rfind("warning:", 0) == 0;
  return n;
}

// Options spelled out in full: designated initializers that leave members out trip -Wextra.
DecisionCacheOptions opts(std::string url, int reconnect_after_ms = 5000, int timeout_ms = 50, int ttl_s = 3600) {
  DecisionCacheOptions o;
  o.redis_url = std::move(url);
  o.reconnect_after_ms = reconnect_after_ms;
  o.timeout_ms = timeout_ms;
  o.ttl_s = ttl_s;
  return o;
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// A command sent straight to Redis with hiredis, to check what the cache really stored.
struct Direct {
  explicit Direct(int port) : c(redisConnectWithTimeout("127.0.0.1", port, {1, 0})) {}
  ~Direct() { if (c) redisFree(c); }
  bool ok() const { return c && !c->err; }
  redisReply* cmd(const std::string& command) { return ok() ? static_cast<redisReply*>(redisCommand(c, command.c_str())) : nullptr; }
  redisContext* c;
};

// A redis-server child process; killed in the destructor so a failed assertion never leaks one.
class RedisProcess {
 public:
  explicit RedisProcess(int port) : port_(port) {}
  ~RedisProcess() { stop(); }
  bool start() {
    std::string port = std::to_string(port_);
    pid_ = ::fork();
    if (pid_ == 0) {
      int null = ::open("/dev/null", O_RDWR);  // keep its log out of the captured stderr
      ::dup2(null, 0), ::dup2(null, 1), ::dup2(null, 2);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with the test binary, even on a crash
      ::execl(kRedisBin, kRedisBin, "--port", port.c_str(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
              "--daemonize", "no", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (auto t0 = Clock::now(); Clock::now() - t0 < 10s; std::this_thread::sleep_for(20ms)) {
      Direct d(port_);
      if (redisReply* r = d.cmd("PING")) {
        bool pong = r->type == REDIS_REPLY_STATUS && std::string(r->str) == "PONG";
        freeReplyObject(r);
        if (pong) return true;
      }
    }
    return false;
  }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  void signal(int sig) { ::kill(pid_, sig); }
  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

 private:
  int port_;
  pid_t pid_ = -1;
};

TEST(DecisionCache, LruKeepsTheLastCapacityDecisions) {
  DecisionCache cache;  // default: memory only, 100 entries
  for (uint64_t h = 0; h < 100; ++h) cache.put(h, make(Mode::Fast, double(h)));
  ASSERT_TRUE(cache.get(0));  // 0 becomes the most recently used, so 1 is now the oldest
  cache.put(100, make(Mode::Slow, 99));
  EXPECT_FALSE(cache.get(1)) << "the 101st decision evicts the least recently used";
  for (uint64_t h : {0, 2, 50, 99, 100}) EXPECT_TRUE(cache.get(h)) << h;
  EXPECT_EQ(cache.get(100)->mode, Mode::Slow);
  cache.put(2, make(Mode::Mixed, 40));  // a put of a known hash replaces it and does not grow the cache
  EXPECT_EQ(cache.get(2)->mode, Mode::Mixed);
  auto s = cache.stats();
  EXPECT_EQ(s.backend, "memory");
  EXPECT_FALSE(s.redis_connected);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, s.memory_hits);
  EXPECT_EQ(s.puts, 102u);
}

TEST(DecisionCache, RequestHashIsStableAndSeesEveryInput) {
  const std::vector<int32_t> p{1, 2, 3, -1};
  const std::string params = "temperature=0.7;max_tokens=64";
  // Fixed values: the hash must not change between runs, builds or platforms (Redis keys outlive them).
  EXPECT_EQ(request_hash(0, {}, ""), 0x81d23fd7003c2305ull);
  EXPECT_EQ(request_hash(0x1234, p, params), 0x583b909d749ecbffull);
  EXPECT_EQ(request_hash(0x1234, p, params), request_hash(0x1234, std::vector<int32_t>(p), std::string(params)));
  EXPECT_NE(request_hash(0x1234, p, params), request_hash(0x1235, p, params));
  EXPECT_NE(request_hash(0x1234, p, params), request_hash(0x1234, {1, 2, 3, -2}, params));
  EXPECT_NE(request_hash(0x1234, p, params), request_hash(0x1234, {1, 2, 3}, params));
  EXPECT_NE(request_hash(0x1234, p, params), request_hash(0x1234, p, "temperature=0.8;max_tokens=64"));
  EXPECT_NE(request_hash(7, {1, 2}, "3"), request_hash(7, {1}, "23"));
  EXPECT_EQ(DecisionCache::redis_key(0xabcULL), "kv_pattern:0000000000000abc");
}

TEST(DecisionCache, DecisionJsonRoundTripAndMalformedObjects) {
  Decision d{Mode::Mixed, 37.5, 0.41, "confidence 0.41 < 0.60"};
  Decision back = Decision::from_json(nlohmann::json::parse(d.to_json().dump()));
  EXPECT_EQ(back.mode, d.mode);
  EXPECT_DOUBLE_EQ(back.difficulty, d.difficulty);
  EXPECT_DOUBLE_EQ(back.confidence, d.confidence);
  EXPECT_EQ(back.reason, d.reason);
  for (const char* bad : {R"([1,2])", R"({"mode":"fast","difficulty":1,"confidence":0.5})",
                          R"({"mode":"medium","difficulty":1,"confidence":0.5,"reason":""})",
                          R"({"mode":"fast","difficulty":"1","confidence":0.5,"reason":""})",
                          R"({"mode":"fast","difficulty":101,"confidence":0.5,"reason":""})",
                          R"({"mode":"slow","difficulty":1,"confidence":1.5,"reason":""})"})
    EXPECT_THROW(Decision::from_json(nlohmann::json::parse(bad)), InputError) << bad;
}

TEST(DecisionCache, BadUrlIsAnInputErrorNamingIt) {
  for (const char* url : {"http://x", "redis://host:notaport", "redis://:6379", "redis://h:70000", "redis://h:1/x",
                          "redis://u:@h:1"}) {
    try {
      DecisionCache c(opts(url));
      ADD_FAILURE() << url << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(url), std::string::npos) << e.what();
    }
  }
}

TEST(DecisionCache, UnreachableRedisWarnsOnceAndServesFromMemory) {
  testing::internal::CaptureStderr();
  DecisionCache cache(opts("redis://127.0.0.1:" + std::to_string(free_port()), 0));
  for (uint64_t h = 0; h < 20; ++h) {
    cache.put(h, make(Mode::Fast, 1));
    EXPECT_TRUE(cache.get(h));
    EXPECT_FALSE(cache.get(h + 1000));
  }
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_warnings(err), 1) << err;
  EXPECT_NE(err.find("unavailable ("), std::string::npos) << err;
  auto s = cache.stats();
  EXPECT_EQ(s.backend, "redis");
  EXPECT_FALSE(s.redis_connected);
  EXPECT_GE(s.redis_errors, 20u);  // reconnect_after_ms = 0: every call retried, and failed
}

TEST(DecisionCache, ListenerThatNeverRepliesCostsOnlyTheTimeout) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 128), 0);  // the kernel completes the handshake; nobody ever reads
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const int timeout_ms = 50;
  testing::internal::CaptureStderr();
  auto t0 = Clock::now();
  DecisionCache cache(opts("redis://127.0.0.1:" + std::to_string(ntohs(a.sin_port)), 0, timeout_ms));
  EXPECT_LT(ms_since(t0), 10 * timeout_ms);
  cache.put(1, make(Mode::Slow, 80));
  for (int i = 0; i < 3; ++i) {
    t0 = Clock::now();
    EXPECT_FALSE(cache.get(2 + i));
    EXPECT_LT(ms_since(t0), 10 * timeout_ms) << "a miss waits on the slow Redis once, bounded by the timeout";
  }
  auto hit = cache.get(1);
  std::string err = testing::internal::GetCapturedStderr();
  ::close(fd);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->mode, Mode::Slow);
  EXPECT_EQ(count_warnings(err), 1) << err;
  EXPECT_NE(err.find("no reply within 50 ms"), std::string::npos) << err;
  EXPECT_FALSE(cache.stats().redis_connected);
}

TEST(DecisionCache, ConcurrentUseFromManyThreads) {
  DecisionCacheOptions small;
  small.capacity = 64;
  DecisionCache cache(small);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (uint64_t i = 0; i < 2000; ++i) {
        cache.put(i % 97 + 1000 * t, make(Mode::Fast, 1));
        (void)cache.get(i % 89 + 1000 * t);
      }
    });
  for (auto& th : threads) th.join();
  auto s = cache.stats();
  EXPECT_EQ(s.puts, 8000u);
  EXPECT_EQ(s.hits + s.misses, 8000u);
}

class DecisionCacheRedis : public testing::Test {
 protected:
  void SetUp() override {
    if (::access(kRedisBin, X_OK) != 0) GTEST_SKIP() << kRedisBin << " is not installed";
    ASSERT_TRUE(redis.start()) << "redis-server did not come up on port " << redis.port();
  }
  bool in_redis(uint64_t hash) {
    Direct d(redis.port());
    redisReply* r = d.cmd("EXISTS " + DecisionCache::redis_key(hash));
    bool yes = r && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    if (r) freeReplyObject(r);
    return yes;
  }
  RedisProcess redis{free_port()};
};

TEST_F(DecisionCacheRedis, PutReachesRedisWithTtlAndAFreshCacheReadsIt) {
  const uint64_t h = request_hash(42, {5, 6, 7}, "t=0");
  {
    DecisionCache writer(opts(redis.url(), 5000, 50, 120));
    EXPECT_TRUE(writer.stats().redis_connected);
    writer.put(h, Decision{Mode::Slow, 88, 0.3, "d=88.0 > 70"});
  }
  Direct d(redis.port());
  redisReply* ttl = d.cmd("TTL " + DecisionCache::redis_key(h));
  ASSERT_TRUE(ttl && ttl->type == REDIS_REPLY_INTEGER);
  EXPECT_GT(ttl->integer, 0);
  EXPECT_LE(ttl->integer, 120);
  freeReplyObject(ttl);

  DecisionCache reader(opts(redis.url() + "/0"));  // fresh memory: only Redis knows h
  auto got = reader.get(h);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->mode, Mode::Slow);
  EXPECT_EQ(got->reason, "d=88.0 > 70");
  EXPECT_TRUE(reader.get(h));  // copied into memory by the first get
  auto s = reader.stats();
  EXPECT_EQ(s.redis_hits, 1u);
  EXPECT_EQ(s.memory_hits, 1u);
  EXPECT_EQ(s.redis_errors, 0u);
}

// Credentials in the URL (redis/url.h, the KV tier's parser too): the connection authenticates first.
TEST_F(DecisionCacheRedis, PasswordInTheUrlAuthenticates) {
  const std::string at = "127.0.0.1:" + std::to_string(redis.port());
  {
    Direct d(redis.port());
    redisReply* r = d.cmd("CONFIG SET requirepass s3cret");
    ASSERT_TRUE(r && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
  }
  testing::internal::CaptureStderr();
  DecisionCache wrong(opts("redis://:nope@" + at));
  DecisionCache none(opts("redis://" + at));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(wrong.stats().redis_connected);
  EXPECT_FALSE(none.stats().redis_connected) << "NOAUTH is a failure, not a connection";
  EXPECT_NE(err.find("127.0.0.1"), std::string::npos) << err;
  EXPECT_EQ(err.find("s3cret"), std::string::npos) << "the warning never shows a password";
  DecisionCache right(opts("redis://default:s3cret@" + at));
  EXPECT_TRUE(right.stats().redis_connected);
  const uint64_t h = request_hash(7, {1}, "auth");
  right.put(h, Decision{Mode::Fast, 5, 0.9, "d=5"});
  DecisionCache reader(opts("redis://s3cret@" + at));  // redis-cli -u's password-only form
  EXPECT_TRUE(reader.get(h));
  EXPECT_EQ(right.stats().redis_errors, 0u);
}

TEST_F(DecisionCacheRedis, BadValuesInRedisAreMissesNotCrashes) {
  Direct d(redis.port());
  for (const char* c : {"SET kv_pattern:0000000000000001 not-json", "SET kv_pattern:0000000000000002 [1,2]",
                        "RPUSH kv_pattern:0000000000000003 x"})
    freeReplyObject(d.cmd(c));
  DecisionCache cache(opts(redis.url()));
  testing::internal::CaptureStderr();
  for (uint64_t h : {1, 2, 3}) EXPECT_FALSE(cache.get(h)) << h;
  EXPECT_EQ(count_warnings(testing::internal::GetCapturedStderr()), 0);
  auto s = cache.stats();
  EXPECT_EQ(s.redis_errors, 3u);
  EXPECT_EQ(s.misses, 3u);
  EXPECT_TRUE(s.redis_connected);  // a bad value is not an outage
}

TEST_F(DecisionCacheRedis, KilledRedisFallsBackToMemoryWarnsOnceAndReconnects) {
  DecisionCache cache(opts(redis.url(), 200));
  cache.put(1, make(Mode::Fast, 5));
  ASSERT_TRUE(in_redis(1));

  redis.stop();
  testing::internal::CaptureStderr();
  // A big first write into the dead socket draws a RST, and the next write() a SIGPIPE, which would
  // kill the whole server if the cache did not block it.
  Decision big = make(Mode::Slow, 99);
  big.reason.assign(8 << 20, 'x');
  EXPECT_NO_THROW(cache.put(9, big));
  for (uint64_t h = 10; h < 60; ++h) {
    EXPECT_NO_THROW(cache.put(h, make(Mode::Mixed, 50)));
    EXPECT_TRUE(cache.get(h));
    EXPECT_TRUE(cache.get(1));
    EXPECT_FALSE(cache.get(h + 1000));
    if (h % 10 == 0) std::this_thread::sleep_for(60ms);  // crosses the back-off: retries fail quietly
  }
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_warnings(err), 1) << err;
  EXPECT_NE(err.find("redis at 127.0.0.1:" + std::to_string(redis.port()) + " unavailable"), std::string::npos) << err;
  EXPECT_NE(err.find("retrying every 0.2 s"), std::string::npos) << err;
  auto s = cache.stats();
  EXPECT_FALSE(s.redis_connected);
  EXPECT_GE(s.redis_errors, 2u);

  ASSERT_TRUE(redis.start());  // same port, empty data
  std::this_thread::sleep_for(250ms);
  testing::internal::CaptureStderr();
  cache.put(2, make(Mode::Slow, 90));
  err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(in_redis(2)) << "puts reach Redis again after reconnect_after_ms";
  EXPECT_NE(err.find("decision cache: reconnected to redis at 127.0.0.1:"), std::string::npos) << err;
  EXPECT_TRUE(cache.stats().redis_connected);
}

TEST_F(DecisionCacheRedis, PausedRedisTimesOutThenComesBack) {
  const int timeout_ms = 50;
  DecisionCache cache(opts(redis.url(), 200, timeout_ms));
  cache.put(1, make(Mode::Fast, 3));
  redis.signal(SIGSTOP);  // connection stays open, nothing answers: a slow Redis mid-way
  testing::internal::CaptureStderr();
  auto t0 = Clock::now();
  EXPECT_FALSE(cache.get(2));
  EXPECT_LT(ms_since(t0), 10 * timeout_ms);
  EXPECT_TRUE(cache.get(1));
  cache.put(3, make(Mode::Mixed, 30));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_warnings(err), 1) << err;
  redis.signal(SIGCONT);
  std::this_thread::sleep_for(250ms);
  testing::internal::CaptureStderr();
  cache.put(4, make(Mode::Slow, 75));
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("reconnected"), std::string::npos) << err;
  EXPECT_TRUE(in_redis(4));
  EXPECT_FALSE(in_redis(3)) << "put 3 happened during the outage: memory only";
}

}  // namespace
}  // namespace kvscope::reasoning
