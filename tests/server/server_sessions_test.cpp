// /v1/sessions with --session-dir: a conversation saved by one server process is restored by a
// restarted one and its next turn is the same (text and log-probabilities) as without the restart;
// ids are validated (no client path reaches the file system); damaged, mismatched and missing files
// are 4xx with a clear message; under --api-key each tenant sees only its own sessions.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>

#include "server_test_util.h"

namespace server_sessions_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {

std::string fresh_dir(const std::string& name) {
  const auto d = temp_dir() / (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

// Servers of these tests share one session secret, so a file saved by one is signed for another.
std::string shared_secret() {
  static const std::string path = [] {
    const auto p = temp_dir() / ("session-secret-" + std::to_string(::getpid()));
    std::ofstream(p) << "0123456789abcdef-test-secret\n";
    return p.string();
  }();
  return path;
}

server::ServerOptions with_dir(const std::string& dir) {
  auto o = test_options();
  o.session_dir = dir;
  o.session_secret_file = shared_secret();
  return o;
}

json turn(int port, const std::string& prompt, const std::map<std::string, std::string>& h = {}) {
  auto r = post(port, "/v1/completions",
                {{"prompt", prompt}, {"max_tokens", 10}, {"temperature", 0}, {"logprobs", 3}, {"session_id", "conv-1"}}, h);
  EXPECT_EQ(r.status, 200) << r.body;
  return r.status == 200 ? r.j() : json::object();
}

}  // namespace

TEST(ServerSessions, SaveRestartRestoreContinuesExactly) {
  const std::string dir = fresh_dir("sessions-restart");
  const std::string p1 = "The history of the city begins with a small harbour where fishermen";
  json first, uninterrupted;
  {
    auto srv = start_server(with_dir(dir));
    first = turn(srv->port(), p1);
    auto s = post(srv->port(), "/v1/sessions/conv-1/save", json::object());
    ASSERT_EQ(s.status, 200) << s.body;
    EXPECT_GT(s.j()["bytes"].get<double>(), 0);
    uninterrupted = turn(srv->port(), p1 + first["choices"][0]["text"].get<std::string>() + " Later, the");
  }
  auto srv = start_server(with_dir(dir));  // a new process state: nothing in memory
  const int port = srv->port();
  auto list = http(port, "GET", "/v1/sessions");
  ASSERT_EQ(list.status, 200) << list.body;
  ASSERT_EQ(list.j()["data"].size(), 1u);
  EXPECT_EQ(list.j()["data"][0]["id"], "conv-1");
  auto r = post(port, "/v1/sessions/conv-1/restore", json::object());
  ASSERT_EQ(r.status, 200) << r.body;
  const json resumed = turn(port, p1 + first["choices"][0]["text"].get<std::string>() + " Later, the");
  EXPECT_EQ(resumed["choices"][0]["text"], uninterrupted["choices"][0]["text"]);
  EXPECT_GT(resumed["kvscope"]["prompt_tokens_cached"].get<int>(), 0) << "the restored KV was not used";
  const auto& a = uninterrupted["choices"][0]["logprobs"]["token_logprobs"];
  const auto& b = resumed["choices"][0]["logprobs"]["token_logprobs"];
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i].get<double>(), b[i].get<double>(), 1e-5) << i;

  auto d = http(port, "DELETE", "/v1/sessions/conv-1");
  EXPECT_EQ(d.status, 200) << d.body;
  EXPECT_EQ(http(port, "GET", "/v1/sessions").j()["data"].size(), 0u);
  EXPECT_EQ(http(port, "DELETE", "/v1/sessions/conv-1").status, 404);
}

TEST(ServerSessions, HostileIdsAndBadFiles) {
  const std::string dir = fresh_dir("sessions-bad");
  auto srv = start_server(with_dir(dir));
  const int port = srv->port();
  for (const std::string& id : std::vector<std::string>{"..", ".hidden", "a%2F..%2F..%2Fetc", "%2E%2E", std::string(65, 'x')}) {
    auto r = post(port, "/v1/sessions/" + id + "/save", json::object());
    EXPECT_TRUE(r.status == 400 || r.status == 404) << id << ": " << r.status << " " << r.body;
    EXPECT_TRUE(r.j().contains("error")) << r.body;
  }
  for (const auto& e : std::filesystem::directory_iterator(dir)) ADD_FAILURE() << "unexpected file " << e.path();
  auto bad = post(port, "/v1/sessions/..%2Fx/restore", json::object());
  EXPECT_TRUE(bad.status == 400 || bad.status == 404) << bad.body;

  auto missing = post(port, "/v1/sessions/nope/restore", json::object());
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.j()["error"]["message"].get<std::string>().find("no saved session 'nope'"), std::string::npos);
  auto unsaved = post(port, "/v1/sessions/never-used/save", json::object());
  EXPECT_EQ(unsaved.status, 404) << unsaved.body;

  // A damaged file (tenant 0 without --api-key).
  { std::ofstream(std::filesystem::path(dir) / "0-broken.kvsession") << "definitely not a session"; }
  auto dmg = post(port, "/v1/sessions/broken/restore", json::object());
  EXPECT_EQ(dmg.status, 409) << dmg.body;
  EXPECT_NE(dmg.j()["error"]["message"].get<std::string>().find("cannot restore session 'broken'"), std::string::npos);

  // A file of other KV types: refused, naming the types.
  const std::string qdir = fresh_dir("sessions-int8");
  {
    auto o = with_dir(qdir);
    o.engine.kv_type = KVCacheTypes(KVType::INT8, KVType::INT8);
    auto q = start_server(o);
    turn(q->port(), "Some words to remember in a session");
    ASSERT_EQ(post(q->port(), "/v1/sessions/conv-1/save", json::object()).status, 200);
  }
  std::filesystem::copy_file(std::filesystem::path(qdir) / "0-conv-1.kvsession", std::filesystem::path(dir) / "0-q.kvsession");
  auto mm = post(port, "/v1/sessions/q/restore", json::object());
  EXPECT_EQ(mm.status, 409) << mm.body;
  EXPECT_NE(mm.j()["error"]["message"].get<std::string>().find("cache-type"), std::string::npos) << mm.body;

  // Without --session-dir the routes say how to enable them.
  auto plain = start_server();
  auto off = http(plain->port(), "GET", "/v1/sessions");
  EXPECT_EQ(off.status, 404);
  EXPECT_NE(off.body.find("--session-dir"), std::string::npos);
}

TEST(ServerSessions, TenantsSeeOnlyTheirOwn) {
  const std::string dir = fresh_dir("sessions-tenants");
  auto o = with_dir(dir);
  o.api_keys = {"key-a", "key-b"};
  auto srv = start_server(o);
  const int port = srv->port();
  const std::map<std::string, std::string> a = {{"Authorization", "Bearer key-a"}}, b = {{"Authorization", "Bearer key-b"}};
  turn(port, "Tenant A's private conversation about", a);
  ASSERT_EQ(post(port, "/v1/sessions/conv-1/save", json::object(), a).status, 200);
  EXPECT_EQ(http(port, "GET", "/v1/sessions", "", a).j()["data"].size(), 1u);
  EXPECT_EQ(http(port, "GET", "/v1/sessions", "", b).j()["data"].size(), 0u);
  EXPECT_EQ(post(port, "/v1/sessions/conv-1/restore", json::object(), b).status, 404);
  EXPECT_EQ(http(port, "DELETE", "/v1/sessions/conv-1", "", b).status, 404);
  EXPECT_EQ(post(port, "/v1/sessions/conv-1/restore", json::object(), a).status, 200);
}

}  // namespace server_sessions_test
