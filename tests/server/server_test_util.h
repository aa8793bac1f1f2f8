// Helpers for the server tests: the default model, an in-process server on an ephemeral port, and
// a raw HTTP/1.1 client over loopback (so tests control framing, timing and hang-ups exactly).
#pragma once
#include <arpa/inet.h>
#include <signal.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <map>
#include <regex>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "model/random_model.h"
#include "server/server.h"
#include "fixtures.h"
#include "test_util.h"

namespace kvscope::test {

using json = nlohmann::json;

// The build's default model (build/<dir>/models/default.gguf next to the test binary); when absent,
// one with the same shape is written.
inline std::string server_model_path() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    buf[n] = 0;
    auto p = std::filesystem::path(buf).parent_path() / "models" / "default.gguf";
    if (std::filesystem::exists(p)) return p.string();
  }
  static std::string written = [] {
    return fixtures::model_file(fixtures::tiny_spec(256, 4, 8, 4, 688, 512, 512, 1), "default");
  }();
  return written;
}

inline server::ServerOptions test_options() {
  server::ServerOptions o;
  o.port = 0;
  o.model_path = server_model_path();
  o.engine.n_threads = 2;
  o.engine.kv_mem_bytes = size_t{32} << 20;
  o.max_queue = 128;
  o.heartbeat_s = 0.05;  // hang-ups are noticed quickly
  o.shutdown_grace_s = 5;
  return o;
}

inline std::unique_ptr<server::Server> start_server(server::ServerOptions o = test_options()) {
  auto s = std::make_unique<server::Server>(std::move(o));
  s->start();
  EXPECT_TRUE(s->wait_ready(60));
  return s;
}

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  json j() const { return json::parse(body); }
};

// One connection, one request (Connection: close).
class HttpConn {
 public:
  explicit HttpConn(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{60, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~HttpConn() { close(); }
  HttpConn(const HttpConn&) = delete;
  HttpConn& operator=(const HttpConn&) = delete;
  bool connected() const { return ok_; }
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  bool send_raw(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  bool send(const std::string& method, const std::string& path, const std::string& body = "",
            const std::map<std::string, std::string>& headers = {}) {
    std::string r = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
    if (!body.empty() || method == "POST")
      r += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    for (const auto& [k, v] : headers) r += k + ": " + v + "\r\n";
    return send_raw(r + "\r\n" + body);
  }

  // Reads the status line and headers.
  bool read_head(HttpResponse& r) {
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos)
      if (!fill()) return false;
    std::string head = buf_.substr(0, end);
    buf_.erase(0, end + 4);
    size_t sp = head.find(' ');
    r.status = std::stoi(head.substr(sp + 1, 3));
    size_t pos = head.find("\r\n");
    while (pos != std::string::npos && pos < head.size()) {
      size_t next = head.find("\r\n", pos + 2);
      std::string line = head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
      size_t c = line.find(':');
      if (c != std::string::npos) {
        std::string k = line.substr(0, c);
        for (auto& ch : k) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        std::string v = line.substr(c + 1);
        while (!v.empty() && v.front() == ' ') v.erase(0, 1);
        r.headers[k] = v;
      }
      pos = next;
    }
    chunked_ = r.headers["transfer-encoding"] == "chunked";
    done_ = false;  // the next answer on a kept-alive connection
    remaining_ = r.headers.count("content-length") ? std::stoll(r.headers["content-length"]) : -1;
    return true;
  }
  // Some body bytes as they arrive (one chunk of a chunked body); false at the end.
  bool read_some(std::string& out) {
    out.clear();
    if (done_) return false;
    if (chunked_) {
      size_t eol;
      while ((eol = buf_.find("\r\n")) == std::string::npos)
        if (!fill()) return done_ = true, false;
      const size_t n = std::stoul(buf_.substr(0, eol), nullptr, 16);
      while (buf_.size() < eol + 2 + n + 2)
        if (!fill()) return done_ = true, false;
      out = buf_.substr(eol + 2, n);
      buf_.erase(0, eol + 2 + n + 2);
      if (n == 0) return done_ = true, false;
      return true;
    }
    if (remaining_ == 0) return done_ = true, false;
    if (buf_.empty() && !fill()) return done_ = true, false;
    size_t take = remaining_ < 0 ? buf_.size() : std::min<size_t>(buf_.size(), static_cast<size_t>(remaining_));
    out = buf_.substr(0, take);
    buf_.erase(0, take);
    if (remaining_ > 0) remaining_ -= static_cast<long long>(take);
    return true;
  }
  std::string read_body() {
    std::string all, part;
    while (read_some(part)) all += part;
    return all;
  }
  // The next SSE event's data ("" at the end of the stream). Comments (heartbeats) are skipped.
  std::string next_event() {
    for (;;) {
      size_t e;
      while ((e = sse_.find("\n\n")) != std::string::npos) {
        std::string ev = sse_.substr(0, e);
        sse_.erase(0, e + 2);
        if (ev.rfind("data: ", 0) == 0) return ev.substr(6);
      }
      std::string part;
      if (!read_some(part)) return "";
      sse_ += part;
    }
  }

 private:
  bool fill() {
    char b[65536];
    ssize_t n = ::recv(fd_, b, sizeof b, 0);
    if (n <= 0) return false;
    buf_.append(b, static_cast<size_t>(n));
    return true;
  }
  int fd_ = -1;
  bool ok_ = false, chunked_ = false, done_ = false;
  long long remaining_ = -1;
  std::string buf_, sse_;
};

inline HttpResponse http(int port, const std::string& method, const std::string& path, const std::string& body = "",
                         const std::map<std::string, std::string>& headers = {}) {
  HttpConn c(port);
  HttpResponse r;
  if (!c.connected() || !c.send(method, path, body, headers) || !c.read_head(r)) return r;
  r.body = c.read_body();
  return r;
}

inline HttpResponse post(int port, const std::string& path, const json& body, const std::map<std::string, std::string>& headers = {}) {
  return http(port, "POST", path, body.dump(), headers);
}

// A metric's value from the Prometheus text (-1 when absent).
inline double metric(const std::string& text, const std::string& name) {
  size_t pos = 0;
  while ((pos = text.find(name + " ", pos)) != std::string::npos) {
    if (pos == 0 || text[pos - 1] == '\n') return std::stod(text.substr(pos + name.size() + 1));
    pos += name.size();
  }
  return -1;
}

// Polls until pred() holds or the timeout passes; returns pred()'s last value.
template <class F>
bool eventually(F pred, double timeout_s = 10) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

// `kvscope serve ARGS --port 0` as a child process; the port is read from its first stderr line.
struct ServeProcess {
  pid_t pid = -1;
  int port = 0, err = -1;
  explicit ServeProcess(const std::vector<std::string>& args) {
    std::vector<std::string> all = {kvscope_bin(), "serve"};
    all.insert(all.end(), args.begin(), args.end());
    for (const char* a : {"--port", "0", "-t", "2", "--kv-mem", "32"}) all.push_back(a);
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    int p[2];
    if (::pipe(p) != 0) return;
    pid = ::fork();
    if (pid == 0) {
      ::dup2(p[1], 2);
      ::close(p[0]);
      ::close(p[1]);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(p[1]);
    err = p[0];
    std::string line;
    char c;
    // Notes (e.g. about -ngl) may come first: read until the line naming the port.
    std::smatch m;
    while (true) {
      line.clear();
      while (::read(err, &c, 1) == 1 && c != '\n') line += c;
      if (line.empty()) break;
      if (std::regex_search(line, m, std::regex(R"(http://127\.0\.0\.1:(\d+)/v1)"))) {
        port = std::stoi(m[1]);
        break;
      }
      notes += line + "\n";
    }
    if (port) eventually([&] { return http(port, "GET", "/health").status == 200; }, 60);
  }
  ~ServeProcess() {
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      int st;
      ::waitpid(pid, &st, 0);
    }
    if (err >= 0) ::close(err);
  }
  std::string notes;
};

}  // namespace kvscope::test
