// Issue 36's request- and data-level cases: bodies nested deep enough to overflow the stack, numbers
// beyond a double, /v1/embeddings under the same admission, hang-up and shutdown rules as
// generation, and session files (concurrent saves, a missing directory, FIFOs, directories and
// oversized files, races that must not leak internal names, and forged files).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "server_test_util.h"
#include "util/hash.h"
#include "util/sha256.h"

namespace server_hardening_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {

std::string fresh_dir(const std::string& name) {
  const auto d = temp_dir() / (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

// n levels of arrays around v: 2n + |v| bytes.
std::string nested(int n, const std::string& v = "1") { return std::string(n, '[') + v + std::string(n, ']'); }

void expect_too_deep(const HttpResponse& r, const std::string& what) {
  EXPECT_EQ(r.status, 400) << what << ": " << r.body.substr(0, 300);
  if (r.status != 400) return;
  const json e = r.j()["error"];
  EXPECT_EQ(e["code"], "json_too_deep") << what;
  EXPECT_NE(e["message"].get<std::string>().find("64"), std::string::npos) << what << ": the message names the limit";
}

}  // namespace

TEST(ServerHardening, DeepNestingIsRefusedOnEveryRoute) {
  auto srv = start_server();
  const int port = srv->port();
  const std::string deep = nested(75000);     // 150 KB: enough to crash json_schema and /v1/responses
  const std::string deeper = nested(150000);  // 300 KB: an unknown field on completions and chat
  const std::string schema_const = R"({"type":"json_schema","json_schema":{"name":"t","schema":{"const":)" + deep + "}}}";
  const std::string schema_enum = R"({"type":"json_schema","json_schema":{"name":"t","schema":{"enum":[)" + deep + "]}}}";
  const std::string schema_req = R"({"type":"json_schema","json_schema":{"name":"t","schema":{"type":"object","required":)" + deep + "}}}";
  expect_too_deep(http(port, "POST", "/v1/completions", R"({"prompt":"x","max_tokens":1,"junk":)" + deeper + "}"), "completions");
  expect_too_deep(http(port, "POST", "/v1/chat/completions",
                       R"({"messages":[{"role":"user","content":"x"}],"max_tokens":1,"junk":)" + deeper + "}"),
                  "chat");
  for (const auto& rf : {schema_const, schema_enum, schema_req})
    expect_too_deep(http(port, "POST", "/v1/chat/completions",
                         R"({"messages":[{"role":"user","content":"x"}],"max_tokens":1,"response_format":)" + rf + "}"),
                    "json_schema");
  expect_too_deep(http(port, "POST", "/v1/responses", R"({"input":"x","stop":)" + deep + "}"), "responses stop");
  expect_too_deep(http(port, "POST", "/v1/responses", R"({"input":"x","model":)" + deep + "}"), "responses model");
  expect_too_deep(http(port, "POST", "/v1/embeddings", R"({"input":)" + deep + "}"), "embeddings");
  expect_too_deep(http(port, "POST", "/v1/completions", std::string(150000, '[')), "unclosed arrays");
  // Objects count as levels too, and the field the nesting sits in is named.
  std::string objs;
  for (int i = 0; i < 100; ++i) objs += R"({"a":)";
  objs += "1" + std::string(100, '}');
  auto r = http(port, "POST", "/v1/completions", R"({"prompt":"x","max_tokens":1,"meta":)" + objs + "}");
  expect_too_deep(r, "objects");
  EXPECT_EQ(r.j()["error"]["param"].get<std::string>().rfind("meta.a", 0), 0u) << r.body;
  // Within the limit the body parses (the field is ignored or refused on its own terms, not for depth).
  r = http(port, "POST", "/v1/completions", R"({"prompt":"x","max_tokens":1,"temperature":0,"junk":)" + nested(60) + "}");
  EXPECT_EQ(r.body.find("json_too_deep"), std::string::npos) << r.body;
  EXPECT_EQ(http(port, "GET", "/health").status, 200);
  EXPECT_EQ(post(port, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 1}}).status, 200);
}

TEST(ServerHardening, NumberOverflowIsA400NamingTheField) {
  auto srv = start_server();
  const int port = srv->port();
  auto r = http(port, "POST", "/v1/completions", R"({"prompt":"x","max_tokens":1,"temperature":1e309})");
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.j()["error"]["param"], "temperature");
  EXPECT_NE(r.j()["error"]["message"].get<std::string>().find("'temperature'"), std::string::npos) << r.body;
  r = http(port, "POST", "/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"logit_bias":{"5":-1e400}})");
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.j()["error"]["param"], "logit_bias.5");
  r = http(port, "POST", "/v1/embeddings", R"({"input":"x","dimensions":[1e999]})");
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.j()["error"]["param"], "dimensions");
}

namespace {

// A long embeddings request on a raw connection: many inputs of many tokens.
std::string big_embedding_body(int inputs = 1300, int tokens = 100) {  // ~0.5 MB, under --max-body
  json in = json::array();
  std::vector<int> ids(static_cast<size_t>(tokens));
  for (int i = 0; i < tokens; ++i) ids[static_cast<size_t>(i)] = 1 + (i * 7) % 500;
  for (int i = 0; i < inputs; ++i) in.push_back(ids);
  return json{{"input", in}}.dump();
}

}  // namespace

TEST(ServerHardening, EmbeddingsAreAdmittedCancelledAndShutDownLikeGeneration) {
  auto o = test_options();
  o.max_queue = 1;
  o.shutdown_grace_s = 0.2;
  auto srv = std::make_unique<server::Server>(o);
  const int port = srv->start();
  ASSERT_TRUE(srv->wait_ready(60));
  const std::string body = big_embedding_body();
  auto in_flight = [&] { return metric(srv->metrics_text(), "kvscope_requests_in_flight"); };
  auto cancelled = [&] { return metric(srv->metrics_text(), "kvscope_requests_cancelled_total"); };
  const double cancelled0 = cancelled();
  {
    HttpConn c(port);
    ASSERT_TRUE(c.send("POST", "/v1/embeddings", body));
    ASSERT_TRUE(eventually([&] { return in_flight() == 1; }, 10));
    // The limit counts embeddings: a second request of either kind is refused while it runs.
    EXPECT_EQ(post(port, "/v1/embeddings", {{"input", "x"}}).status, 429);
    EXPECT_EQ(post(port, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 1}}).status, 429);
  }  // hang up
  // Abandoned work stops at its next heartbeat instead of running to the end.
  EXPECT_TRUE(eventually([&] { return in_flight() == 0; }, 5)) << in_flight();
  EXPECT_EQ(cancelled(), cancelled0 + 1);
  auto ok = post(port, "/v1/embeddings", {{"input", "the cat sat"}});
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(ok.j()["data"].size(), 1u);

  // Shutdown cancels a running embedding once the grace has passed.
  HttpConn c(port);
  ASSERT_TRUE(c.send("POST", "/v1/embeddings", body));
  HttpResponse head;
  ASSERT_TRUE(c.read_head(head));
  ASSERT_TRUE(eventually([&] { return in_flight() == 1; }, 10));
  const auto t0 = std::chrono::steady_clock::now();
  srv->shutdown();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 3.0) << "shutdown waited for the whole embedding";
  const std::string rest = c.read_body();
  EXPECT_NE(rest.find("shutting_down"), std::string::npos) << rest.substr(0, 200);
}

TEST(ServerHardening, SessionListWithoutTheDirectoryIsEmpty) {
  const std::string dir = (temp_dir() / ("sessions-absent-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  auto o = test_options();
  o.session_dir = dir;
  auto srv = start_server(o);
  auto r = http(srv->port(), "GET", "/v1/sessions");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.j()["data"].size(), 0u);
  std::filesystem::remove_all(dir);  // removed while serving
  r = http(srv->port(), "GET", "/v1/sessions");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.j()["data"].size(), 0u);
}

namespace {

json session_turn(int port, const std::string& id, const std::map<std::string, std::string>& h = {}) {
  auto r = post(port, "/v1/completions",
                {{"prompt", "Words to keep in a session for later"}, {"max_tokens", 4}, {"temperature", 0}, {"session_id", id}}, h);
  EXPECT_EQ(r.status, 200) << r.body;
  return r.status == 200 ? r.j() : json::object();
}

}  // namespace

TEST(ServerHardening, ConcurrentSavesAndLeftoverTempFiles) {
  const std::string dir = fresh_dir("sessions-tmp");
  // Leftovers of saves that never finished: an old-style name and one of a process that is gone.
  // A live process's temporary file (this one's pid) is left alone.
  const auto old_tmp = std::filesystem::path(dir) / "0-a.kvsession.tmp";
  const auto dead_tmp = std::filesystem::path(dir) / "0-a.kvsession.999999999.3.tmp";
  const auto live_tmp = std::filesystem::path(dir) / ("0-a.kvsession." + std::to_string(::getpid()) + ".0.tmp");
  for (const auto& p : {old_tmp, dead_tmp, live_tmp}) std::ofstream(p) << "partial";
  auto o = test_options();
  o.session_dir = dir;
  auto srv = start_server(o);
  const int port = srv->port();
  EXPECT_FALSE(std::filesystem::exists(old_tmp));
  EXPECT_FALSE(std::filesystem::exists(dead_tmp));
  EXPECT_TRUE(std::filesystem::exists(live_tmp));
  std::filesystem::remove(live_tmp);

  session_turn(port, "c");
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  std::mutex mu;
  std::vector<std::string> bad;
  for (int i = 0; i < 32; ++i)
    ts.emplace_back([&] {
      auto r = post(port, "/v1/sessions/c/save", json::object());
      if (r.status == 200) {
        ++ok;
      } else {
        std::lock_guard lk(mu);
        bad.push_back(std::to_string(r.status) + " " + r.body);
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(ok.load(), 32);
  for (const auto& b : bad) ADD_FAILURE() << b;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_NE(e.path().extension(), ".tmp") << "left behind: " << e.path();
  EXPECT_EQ(post(port, "/v1/sessions/c/restore", json::object()).status, 200);
}

TEST(ServerHardening, RestoreRefusesFifosDirectoriesAndOversizedFilesWithoutStalling) {
  const std::string dir = fresh_dir("sessions-special");
  auto o = test_options();
  o.session_dir = dir;
  o.session_max_bytes = 4096;
  auto srv = start_server(o);
  const int port = srv->port();
  // A FIFO under a session's name: opening it for reading would wait for a writer forever.
  ASSERT_EQ(::mkfifo((std::filesystem::path(dir) / "0-fifo.kvsession").c_str(), 0600), 0);
  std::atomic<int> fifo_status{0};
  std::thread t([&] { fifo_status = post(port, "/v1/sessions/fifo/restore", json::object()).status; });
  // Generation goes on meanwhile.
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(post(port, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 4}}).status, 200);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_TRUE(eventually([&] { return fifo_status != 0; }, 5)) << "restore of a FIFO blocked";
  if (fifo_status == 0) {  // unblock the reader so the test can end
    std::ofstream w(std::filesystem::path(dir) / "0-fifo.kvsession");
  }
  t.join();
  EXPECT_EQ(fifo_status.load(), 409);

  std::filesystem::create_directories(std::filesystem::path(dir) / "0-adir.kvsession");
  auto r = post(port, "/v1/sessions/adir/restore", json::object());
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("not a regular file"), std::string::npos) << r.body;

  session_turn(port, "big");
  ASSERT_EQ(post(port, "/v1/sessions/big/save", json::object()).status, 200);
  ASSERT_GT(std::filesystem::file_size(std::filesystem::path(dir) / "0-big.kvsession"), 4096u);
  r = post(port, "/v1/sessions/big/restore", json::object());
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("--session-max-mib"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find(dir), std::string::npos) << "the message shows a server path: " << r.body;
}

TEST(ServerHardening, SessionRacesAre404WithoutInternalNames) {
  const std::string dir = fresh_dir("sessions-race");
  auto o = test_options();
  o.session_dir = dir;
  o.api_keys = {"key-a"};
  auto srv = start_server(o);
  const int port = srv->port();
  const std::map<std::string, std::string> a = {{"Authorization", "Bearer key-a"}};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<std::string> bad;
  std::atomic<int> n{0};
  auto check = [&](const HttpResponse& r) {
    ++n;
    if (r.status == 200 || r.status == 404) {
      if (r.status == 404 && (r.body.find(dir) != std::string::npos || r.body.find("/r'") != std::string::npos)) {
        std::lock_guard lk(mu);
        bad.push_back(r.body);
      }
      return;
    }
    std::lock_guard lk(mu);
    bad.push_back(std::to_string(r.status) + " " + r.body);
  };
  std::vector<std::thread> ts;
  ts.emplace_back([&] {
    while (!stop) session_turn(port, "r", a);
  });
  ts.emplace_back([&] {
    while (!stop) check(http(port, "DELETE", "/v1/sessions/r", "", a));
  });
  for (int i = 0; i < 2; ++i) {
    ts.emplace_back([&] {
      while (!stop) check(post(port, "/v1/sessions/r/save", json::object(), a));
    });
    ts.emplace_back([&] {
      while (!stop) check(post(port, "/v1/sessions/r/restore", json::object(), a));
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(4));
  stop = true;
  for (auto& t : ts) t.join();
  EXPECT_GT(n.load(), 20);
  for (const auto& b : bad) ADD_FAILURE() << b;
}

TEST(ServerHardening, ForgedSessionFilesAreRefused) {
  const std::string dir = fresh_dir("sessions-forged");
  auto o = test_options();
  o.session_dir = dir;
  auto srv = start_server(o);
  const int port = srv->port();
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / ".session-secret"));
  session_turn(port, "s");
  ASSERT_EQ(post(port, "/v1/sessions/s/save", json::object()).status, 200);
  const auto file = std::filesystem::path(dir) / "0-s.kvsession";
  std::vector<uint8_t> b;
  {
    std::ifstream f(file, std::ios::binary);
    b.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(b.size(), 100u);
  EXPECT_EQ(post(port, "/v1/sessions/s/restore", json::object()).status, 200);
  // Change the first token (after magic, version, fingerprint, block size, layers, width, the
  // per-layer types and the token count) and redo the checksum, as a forger can.
  uint32_t n_layer;
  std::memcpy(&n_layer, b.data() + 8 + 4 + 8 + 4, 4);
  const size_t tok0 = 8 + 4 + 8 + 4 + 4 + 4 + 8 * size_t{n_layer} + 4;
  b[tok0] ^= 1;
  const size_t sum_at = b.size() - 32 - 8;
  const uint64_t sum = util::fnv1a(b.data(), sum_at);
  std::memcpy(b.data() + sum_at, &sum, 8);
  auto write = [&] {
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  };
  write();
  auto r = post(port, "/v1/sessions/s/restore", json::object());
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("signature"), std::string::npos) << r.body;
  // Also with the tag redone under a guessed key (the empty one the CLI uses).
  const auto tag = util::hmac_sha256("", b.data(), sum_at + 8);
  std::memcpy(b.data() + sum_at + 8, tag.data(), tag.size());
  write();
  r = post(port, "/v1/sessions/s/restore", json::object());
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("signature"), std::string::npos) << r.body;
}

TEST(ServerHardening, TenantsSeeOnlyTheirOwnStats) {
  auto o = test_options();
  o.api_keys = {"key-a", "key-b"};
  o.admin_keys = {"key-admin"};
  auto srv = start_server(o);
  const int port = srv->port();
  auto key = [](const std::string& k) { return std::map<std::string, std::string>{{"Authorization", "Bearer " + k}}; };
  const json body = {{"prompt", "A prompt long enough to fill a couple of blocks of the prefix cache, twice over."},
                     {"max_tokens", 3}, {"temperature", 0}};
  for (int i = 0; i < 2; ++i) ASSERT_EQ(post(port, "/v1/completions", body, key("key-a")).status, 200);

  const json a = http(port, "GET", "/v1/stats", "", key("key-a")).j();
  EXPECT_EQ(a["scope"], "tenant");
  EXPECT_EQ(a["requests"]["total"], 2);
  EXPECT_GT(a["tokens"]["prompt"].get<int>(), 0);
  EXPECT_EQ(a["tokens"]["generated"], 6);
  EXPECT_GT(a["tokens"]["prompt_cached"].get<int>(), 0) << "a's second request hit a's prefix cache";
  EXPECT_EQ(a["ttft_seconds"]["count"], 2);

  const json b = http(port, "GET", "/v1/stats", "", key("key-b")).j();
  EXPECT_EQ(b["scope"], "tenant");
  EXPECT_EQ(b["requests"]["total"], 0);
  EXPECT_EQ(b["tokens"]["prompt"], 0);
  EXPECT_EQ(b["tokens"]["generated"], 0);
  EXPECT_EQ(b["tokens"]["prompt_cached"], 0);
  EXPECT_FALSE(b.contains("prefix_cache")) << b.dump();
  EXPECT_FALSE(b.contains("kv")) << b.dump();
  const std::string bm = http(port, "GET", "/metrics", "", key("key-b")).body;
  EXPECT_EQ(metric(bm, "kvscope_requests_total"), 0) << bm;
  EXPECT_EQ(metric(bm, "kvscope_generation_tokens_total"), 0);
  EXPECT_EQ(bm.find("kvscope_prefix_cache_hits_total"), std::string::npos);
  EXPECT_EQ(bm.find("kvscope_kv_blocks_used"), std::string::npos);
  EXPECT_EQ(metric(http(port, "GET", "/metrics", "", key("key-a")).body, "kvscope_requests_total"), 2);

  // The admin key sees everything, and is a key like the others for the API.
  const json g = http(port, "GET", "/v1/stats", "", key("key-admin")).j();
  EXPECT_EQ(g["scope"], "global");
  EXPECT_EQ(g["requests"]["total"], 2);
  EXPECT_GT(g["prefix_cache"]["hits"].get<int>(), 0);
  const std::string gm = http(port, "GET", "/metrics", "", key("key-admin")).body;
  EXPECT_GT(metric(gm, "kvscope_prefix_cache_hits_total"), 0);
  EXPECT_EQ(post(port, "/v1/completions", body, key("key-admin")).status, 200);
  EXPECT_EQ(http(port, "GET", "/v1/stats", "", key("wrong")).status, 401);
}

}  // namespace server_hardening_test
