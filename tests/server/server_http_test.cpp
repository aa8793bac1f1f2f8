// The connection layer under hostile or unusual clients (issue 36): slowloris, per-address caps,
// header and body limits (chunked bodies included), a taken port, form content types, requests
// without a length, pipelining, HTTP/1.0 and a shutdown bounded under slow readers. Loopback only;
// every test is bounded in time.
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <memory>
#include <vector>

#include "server_test_util.h"
#include "util/error.h"

namespace server_http_test {

using namespace kvscope;
using namespace kvscope::test;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string error_message(const HttpResponse& r) {
  try {
    return r.j()["error"]["message"].get<std::string>();
  } catch (const std::exception&) {
    return "(not an error object: " + r.body.substr(0, 200) + ")";
  }
}

// Sends raw bytes on a fresh connection and reads one answer.
HttpResponse raw(int port, const std::string& bytes) {
  HttpConn c(port);
  HttpResponse r;
  if (!c.connected() || !c.send_raw(bytes) || !c.read_head(r)) return r;
  r.body = c.read_body();
  return r;
}

std::string chunked(const std::string& body, size_t piece) {
  std::string out;
  char hex[32];
  for (size_t i = 0; i < body.size(); i += piece) {
    const size_t n = std::min(piece, body.size() - i);
    std::snprintf(hex, sizeof hex, "%zx\r\n", n);
    out += hex + body.substr(i, n) + "\r\n";
  }
  return out + "0\r\n\r\n";
}

const std::string kCompletion = R"({"prompt": "Hello", "max_tokens": 2, "temperature": 0})";

// A connected socket that is left open (a slow or idle client), from the given loopback address.
int open_socket(int port, const char* from = "127.0.0.1") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in src{};
  src.sin_family = AF_INET;
  ::inet_pton(AF_INET, from, &src.sin_addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

// ~300 connections sending one header byte every 2 s must not make /health unreachable (before the
// front stage each one held a worker thread until all were taken).
TEST(ServerHttp, SlowlorisKeepsHealthReachable) {
  auto o = test_options();
  o.max_conns_per_ip = 1000;  // all from 127.0.0.1: the front stage itself must hold them
  o.header_timeout_s = 30;
  o.http_threads = 16;  // far fewer workers than slow connections: they must hold none
  auto s = start_server(o);
  const int port = s->port();
  std::vector<int> slow;
  for (int i = 0; i < 300; ++i) {
    const int fd = open_socket(port);
    ASSERT_GE(fd, 0) << "connection " << i;
    slow.push_back(fd);
  }
  const std::string req = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
  int ok = 0, tried = 0;
  double worst = 0;
  for (size_t byte = 0; byte < 4; ++byte) {
    for (int fd : slow) [[maybe_unused]] auto n = ::send(fd, &req[byte], 1, MSG_NOSIGNAL);
    for (int k = 0; k < 2; ++k) {
      // /health on a fresh connection, with a 2 s read timeout (the slow ones get 30 s).
      const auto t0 = Clock::now();
      HttpConn c(port);
      timeval tv{2, 0};
      ::setsockopt(c.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      HttpResponse r;
      ++tried;
      if (c.send("GET", "/health") && c.read_head(r) && r.status == 200) ++ok;
      worst = std::max(worst, since(t0));
      std::this_thread::sleep_for(std::chrono::milliseconds(900));
    }
  }
  EXPECT_EQ(ok, tried) << "/health answered " << ok << "/" << tried << " under 300 slow connections";
  EXPECT_LT(worst, 1.0) << "slowest /health " << worst << " s";
  for (int fd : slow) ::close(fd);
}

TEST(ServerHttp, ConnectionsPerAddressAreCapped) {
  auto o = test_options();
  o.max_conns_per_ip = 8;
  auto s = start_server(o);
  const int port = s->port();
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) idle.push_back(open_socket(port));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the front has accepted them
  auto r = http(port, "GET", "/health");
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_NE(error_message(r).find("--max-conns-per-ip"), std::string::npos) << r.body;
  // Another client address is not affected.
  const int other = open_socket(port, "127.0.0.2");
  ASSERT_GE(other, 0);
  const std::string get = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(other, get.data(), get.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get.size()));
  char head[16] = {0};
  timeval tv{5, 0};
  ::setsockopt(other, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  EXPECT_GT(::recv(other, head, 12, MSG_WAITALL), 0);
  EXPECT_EQ(std::string(head).substr(0, 12), "HTTP/1.1 200");
  ::close(other);
  ::close(idle.back());
  idle.pop_back();
  EXPECT_TRUE(eventually([&] { return http(port, "GET", "/health").status == 200; }, 5));
  for (int fd : idle) ::close(fd);
}

TEST(ServerHttp, HeaderAndBodyTimeouts) {
  auto o = test_options();
  o.header_timeout_s = 0.5;
  o.body_timeout_s = 0.5;
  auto s = start_server(o);
  {
    HttpConn c(s->port());
    const auto t0 = Clock::now();
    ASSERT_TRUE(c.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n"));  // never ends the headers
    HttpResponse r;
    ASSERT_TRUE(c.read_head(r));
    EXPECT_EQ(r.status, 408);
    EXPECT_NE(c.read_body().find("--header-timeout"), std::string::npos);
    EXPECT_LT(since(t0), 3.0);
  }
  {
    HttpConn c(s->port());
    ASSERT_TRUE(c.send_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"prompt\""));
    HttpResponse r;
    ASSERT_TRUE(c.read_head(r));
    EXPECT_EQ(r.status, 408);
    EXPECT_NE(c.read_body().find("--body-timeout"), std::string::npos);
  }
}

// --max-body holds for chunked bodies too, counted decoded; the server stops reading at the limit.
TEST(ServerHttp, ChunkedBodiesAreLimited) {
  auto o = test_options();
  o.max_body_bytes = 64 << 10;
  auto s = start_server(o);
  const std::string head = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
  // A valid request with padding past the limit.
  std::string big = kCompletion;
  big.insert(1, "\"pad\": \"" + std::string(100 << 10, 'a') + "\", ");
  auto r = raw(s->port(), head + chunked(big, 4096));
  EXPECT_EQ(r.status, 413) << r.body.substr(0, 300);
  EXPECT_NE(error_message(r).find("65536 bytes"), std::string::npos) << r.body;
  // One huge chunk announced is refused from its size line.
  r = raw(s->port(), head + "10000000\r\n" + std::string(1000, 'a'));
  EXPECT_EQ(r.status, 413) << r.body;
  // Within the limit, decoded correctly.
  r = raw(s->port(), head + chunked(kCompletion, 7));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.j()["object"], "text_completion") << r.body;
  // Malformed framing is a 400 naming it.
  r = raw(s->port(), head + "zz\r\nabc\r\n0\r\n\r\n");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(error_message(r).find("chunk size"), std::string::npos) << r.body;
}

TEST(ServerHttp, HeaderCountAndSizeAreLimited) {
  auto s = start_server();
  const int port = s->port();
  std::string many = "GET /health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 101; ++i) many += "X-H" + std::to_string(i) + ": 1\r\n";
  auto r = raw(port, many + "\r\n");
  EXPECT_EQ(r.status, 431) << r.body;
  EXPECT_NE(error_message(r).find("--max-headers"), std::string::npos) << r.body;
  // 100 fields in all are fine.
  std::string ok = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
  for (int i = 0; i < 98; ++i) ok += "X-H" + std::to_string(i) + ": 1\r\n";
  EXPECT_EQ(raw(port, ok + "\r\n").status, 200);
  // One long header past 16 KiB.
  r = raw(port, "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(17 << 10, 'a') + "\r\n\r\n");
  EXPECT_EQ(r.status, 431) << r.body;
  EXPECT_NE(error_message(r).find("--max-header-bytes"), std::string::npos) << r.body;
  // A flood of header lines is cut off at the limit: the answer comes before the client has sent it all.
  HttpConn c(port);
  std::atomic<bool> stop{false};
  std::thread flood([&] {
    std::string lines;
    for (int i = 0; i < 1000; ++i) lines += "X-Flood: 0123456789012345678901234567890123456789\r\n";
    c.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n");
    for (int i = 0; i < 2000 && !stop.load(); ++i)
      if (!c.send_raw(lines)) break;  // 100 MB if it were all read
  });
  HttpResponse fr;
  EXPECT_TRUE(c.read_head(fr));
  stop = true;
  flood.join();
  EXPECT_EQ(fr.status, 431);
  EXPECT_EQ(http(port, "GET", "/health").status, 200);
}

TEST(ServerHttp, TakenPortIsRefusedUnlessShared) {
  auto a = start_server();
  auto o = test_options();
  o.port = a->port();
  server::Server b(o);
  try {
    b.start();
    FAIL() << "a second server started on a taken port";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("Address already in use"), std::string::npos) << m;
    EXPECT_NE(m.find("--reuse-port"), std::string::npos) << m;
  }
  // Asked for on both sides, sharing works.
  auto o1 = test_options();
  o1.reuse_port = true;
  auto c = start_server(o1);
  auto o2 = test_options();
  o2.reuse_port = true;
  o2.port = c->port();
  server::Server d(o2);
  EXPECT_EQ(d.start(), c->port());
  d.shutdown();
}

// curl -d sends application/x-www-form-urlencoded: the body is still JSON, at any size.
TEST(ServerHttp, FormContentTypeBodiesAreJson) {
  auto s = start_server();
  std::string body = kCompletion;
  body.insert(1, "\"user\": \"" + std::string(20000, 'u') + "\", ");
  auto r = http(s->port(), "POST", "/v1/completions", body, {{"Content-Type", "application/x-www-form-urlencoded"}});
  // HttpConn::send adds its own Content-Type first; send one with only the form type as well.
  EXPECT_EQ(r.status, 200) << r.body.substr(0, 300);
  r = raw(s->port(), "POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
                         std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_EQ(r.status, 200) << r.body.substr(0, 300);
}

// A POST without Content-Length has an empty body: answered at once, not after a read timeout.
TEST(ServerHttp, PostWithoutLengthIsAnsweredAtOnce) {
  const auto dir = std::filesystem::temp_directory_path() / ("kvscope-http-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto o = test_options();
  o.session_dir = dir.string();
  auto s = start_server(o);
  auto t0 = Clock::now();
  auto r = raw(s->port(), "POST /v1/sessions/never-used/save HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_LT(since(t0), 1.0);
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(error_message(r).find("HTTP error"), std::string::npos) << r.body;
  t0 = Clock::now();
  r = raw(s->port(), "POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_LT(since(t0), 1.0);
  EXPECT_EQ(r.status, 400) << r.body;
  std::filesystem::remove_all(dir);
}

TEST(ServerHttp, PipelinedRequestsAreAnsweredInOrder) {
  auto s = start_server();
  HttpConn c(s->port());
  const std::string post = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(kCompletion.size()) + "\r\n\r\n" + kCompletion;
  ASSERT_TRUE(c.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n\r\n" + post + "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n" +
                         post + "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::vector<std::string> want = {"health", "completion", "models", "completion", "404"};
  for (size_t i = 0; i < want.size(); ++i) {
    HttpResponse r;
    ASSERT_TRUE(c.read_head(r)) << "answer " << i << " of " << want.size() << " missing";
    r.body = c.read_body();
    if (want[i] == "404") {
      EXPECT_EQ(r.status, 404);
      continue;
    }
    const std::string key = want[i] == "health" ? "status" : "object";
    const std::string value = want[i] == "health" ? "ok" : want[i] == "models" ? "list" : "text_completion";
    EXPECT_EQ(r.j()[key], value) << "answer " << i << ": " << r.body;
  }
}

// HTTP/1.0 has no chunked coding: answers are close-delimited (or carry a length).
TEST(ServerHttp, Http10ClientsGetNoChunkedAnswers) {
  auto s = start_server();
  for (const bool stream : {false, true}) {
    std::string body = kCompletion;
    if (stream) body.insert(1, "\"stream\": true, ");
    HttpConn c(s->port());
    ASSERT_TRUE(c.send_raw("POST /v1/completions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body));
    HttpResponse r;
    ASSERT_TRUE(c.read_head(r));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.headers["transfer-encoding"], "") << "stream " << stream;  // (read_head lists it, empty, when absent)
    EXPECT_EQ(r.headers["connection"], "close");
    const std::string all = c.read_body();  // until the server closes
    if (stream) {
      EXPECT_NE(all.find("data: [DONE]"), std::string::npos) << all;
      EXPECT_EQ(all.find("\r\n0\r\n"), std::string::npos) << all;
    } else {
      EXPECT_EQ(json::parse(all)["object"], "text_completion") << all;
    }
  }
  auto r = raw(s->port(), "GET /health HTTP/1.0\r\n\r\n");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.j()["status"], "ok");
}

// Clients that read slowly cannot hold the shutdown past --shutdown-grace (plus the short period
// cancelled streams get to write their end).
TEST(ServerHttp, ShutdownIsBoundedUnderSlowReaders) {
  auto o = test_options();
  o.shutdown_grace_s = 1;
  auto s = start_server(o);
  const int port = s->port();
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  for (int i = 0; i < 8; ++i)
    readers.emplace_back([&, i] {
      HttpConn c(port);
      const int small = 2048;
      ::setsockopt(c.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
      const std::string body = R"({"prompt": "Hello)" + std::to_string(i) +
                               R"(", "max_tokens": 400, "n": 16, "temperature": 1, "stream": true})";
      c.send("POST", "/v1/completions", body);
      char b[64];
      while (!done.load()) {  // 64 bytes every 0.5 s: each write gets through, eventually
        if (::recv(c.fd(), b, sizeof b, 0) <= 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    });
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto t0 = Clock::now();
  s->shutdown();
  const double took = since(t0);
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_LT(took, o.shutdown_grace_s + 4) << "shutdown took " << took << " s with grace " << o.shutdown_grace_s << " s";
}

}  // namespace server_http_test
