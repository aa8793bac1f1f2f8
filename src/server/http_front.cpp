// The connection layer (http_front.h): an epoll thread reads whole requests, workers answer them.
#include "server/http_front.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace kvscope::server {

namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point after(double s) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

std::string kib(size_t n) { return n % 1024 ? std::to_string(n) + " bytes" : std::to_string(n / 1024) + " KiB"; }

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

}  // namespace

// One client connection and the request being read on it.
struct HttpFront::Conn {
  int fd = -1;
  std::string ip;
  std::string in;  // bytes read and not yet parsed (pipelined requests wait here in order)
  Clock::time_point deadline;
  enum class Phase { Idle, Head, Body, Draining } phase = Phase::Head;
  int served = 0;
  // The request being read.
  std::string method, target, version;
  std::vector<std::pair<std::string, std::string>> headers;
  bool chunked = false, expect_continue = false, keep_alive = true;
  size_t content_length = 0;
  std::string body;  // decoded
  enum class Chunk { Size, Data, DataEnd, Trailer } chunk = Chunk::Size;
  size_t chunk_left = 0;
  size_t trailer_bytes = 0;
  size_t drained = 0;

  void reset_request() {
    method.clear(), target.clear(), version.clear(), headers.clear(), body.clear();
    chunked = expect_continue = false;
    keep_alive = true;
    content_length = 0;
    chunk = Chunk::Size;
    chunk_left = trailer_bytes = 0;
  }
};

// A complete request for a worker: the connection and the request re-framed for httplib.
struct HttpFront::Job {
  std::unique_ptr<Conn> conn;
  std::string request;  // request line, headers with Content-Length, decoded body
  bool http10 = false;
};

// The stream httplib's process_request reads the request from and writes the answer to. For an
// HTTP/1.0 client a chunked answer is unwrapped on the way out and ends with the connection.
class ConnStream : public httplib::Stream {
 public:
  ConnStream(HttpFront& f, int fd, const std::string& req, bool http10) : f_(f), fd_(fd), req_(req), dechunk_(http10) {}

  bool is_readable() const override { return off_ < req_.size(); }
  bool is_writable() const override { return !failed_ && f_.wait_writable(fd_); }
  ssize_t read(char* p, size_t n) override {
    n = std::min(n, req_.size() - off_);
    std::memcpy(p, req_.data() + off_, n);
    off_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* p, size_t n) override {
    if (failed_) return -1;
    bool ok;
    if (!dechunk_) {
      ok = f_.write_all(fd_, p, n);
    } else {
      std::string out;
      unwrap(p, n, out);
      ok = out.empty() || f_.write_all(fd_, out.data(), out.size());
    }
    if (!ok) failed_ = true;
    return ok ? static_cast<ssize_t>(n) : -1;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { addr(false, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { addr(true, ip, port); }
  socket_t socket() const override { return fd_; }
  bool failed() const { return failed_; }

 private:
  void addr(bool local, std::string& ip, int& port) const {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    ip.clear(), port = 0;
    if ((local ? ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len)
               : ::getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &len)) != 0)
      return;
    char b[INET6_ADDRSTRLEN] = {0};
    if (a.ss_family == AF_INET) {
      auto* s = reinterpret_cast<sockaddr_in*>(&a);
      ::inet_ntop(AF_INET, &s->sin_addr, b, sizeof b);
      port = ntohs(s->sin_port);
    } else if (a.ss_family == AF_INET6) {
      auto* s = reinterpret_cast<sockaddr_in6*>(&a);
      ::inet_ntop(AF_INET6, &s->sin6_addr, b, sizeof b);
      port = ntohs(s->sin6_port);
    }
    ip = b;
  }

  // HTTP/1.0 has no chunked coding: drop the Transfer-Encoding header, pass only the chunks' data
  // and let the end of the connection end the body.
  void unwrap(const char* p, size_t n, std::string& out) {
    size_t i = 0;
    while (i < n) {
      switch (st_) {
        case St::Head: {
          acc_.append(p + i, n - i);
          i = n;
          const size_t e = acc_.find("\r\n\r\n");
          if (e == std::string::npos) break;
          std::string rest = acc_.substr(e + 4), head = acc_.substr(0, e + 2);
          acc_.clear();
          std::string kept;
          bool chunked = false;
          for (size_t pos = 0; pos < head.size();) {
            const size_t eol = head.find("\r\n", pos);
            const std::string line = head.substr(pos, eol - pos);
            pos = eol + 2;
            const std::string l = lower(line);
            if (l.rfind("transfer-encoding:", 0) == 0) {
              chunked = lower(trim(line.substr(18))) == "chunked";
              continue;
            }
            if (l.rfind("connection:", 0) == 0 || l.rfind("keep-alive:", 0) == 0) continue;
            kept += line + "\r\n";
          }
          out += kept + "Connection: close\r\n\r\n";
          st_ = chunked ? St::Size : St::Pass;
          if (!rest.empty()) unwrap(rest.data(), rest.size(), out);
          return;
        }
        case St::Pass:
          out.append(p + i, n - i);
          return;
        case St::Size: {
          const char c = p[i++];
          if (c != '\n') {
            if (acc_.size() < 64) acc_ += c;
            break;
          }
          left_ = std::strtoull(acc_.c_str(), nullptr, 16);
          acc_.clear();
          st_ = left_ ? St::Data : St::Done;
          break;
        }
        case St::Data: {
          const size_t take = std::min<size_t>(left_, n - i);
          out.append(p + i, take);
          i += take;
          left_ -= take;
          if (!left_) st_ = St::DataEnd;
          break;
        }
        case St::DataEnd:
          if (p[i++] == '\n') st_ = St::Size;
          break;
        case St::Done:
          return;
      }
    }
  }

  HttpFront& f_;
  int fd_;
  const std::string& req_;
  size_t off_ = 0;
  bool dechunk_, failed_ = false;
  enum class St { Head, Pass, Size, Data, DataEnd, Done } st_ = St::Head;
  std::string acc_;
  size_t left_ = 0;
};

HttpFront::HttpFront(RoutedServer& app, FrontLimits lim, ErrorBody error_body, std::function<void()> on_refused)
    : app_(app), lim_(lim), error_body_(std::move(error_body)), on_refused_(std::move(on_refused)),
      write_deadline_ns_(INT64_MAX) {}

HttpFront::~HttpFront() {
  stop();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

int HttpFront::bind(const std::string& host, int port) {
  const std::string where = host + ":" + std::to_string(port);
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0)
    throw InputError("cannot listen on " + where + ": " + ::gai_strerror(rc));
  int err = 0;
  for (addrinfo* a = res; a && listen_fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    // SO_REUSEADDR only lets a restart bind over connections in TIME_WAIT; a second live server on
    // the port is refused unless sharing it was asked for.
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (lim_.reuse_port) ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) {
      listen_fd_ = fd;
    } else {
      err = errno;
      ::close(fd);
    }
  }
  ::freeaddrinfo(res);
  if (listen_fd_ < 0) {
    std::string msg = "cannot listen on " + where + ": " + std::strerror(err);
    if (err == EADDRINUSE) msg += " (another server holds the port; --reuse-port shares it on purpose)";
    throw InputError(msg);
  }
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  const int bound = a.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&a)->sin6_port)
                                            : ntohs(reinterpret_cast<sockaddr_in*>(&a)->sin_port);
  // Every connection is a descriptor: make room for the connection cap when the hard limit allows.
  rlimit rl{};
  const rlim_t want = static_cast<rlim_t>(lim_.max_connections) * 2 + 256;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
    rl.rlim_cur = std::min(want, rl.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
  return bound;
}

void HttpFront::start() {
  set_nonblocking(listen_fd_);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = listen_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  ev.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  app_.set_listening(listen_fd_);
  app_.set_keep_alive_timeout(static_cast<time_t>(lim_.keep_alive_s + 0.5));
  app_.set_keep_alive_max_count(1000);
  for (int i = 0; i < std::max(1, lim_.workers); ++i) workers_.emplace_back([this] { worker_loop(); });
  front_ = std::thread([this] { front_loop(); });
}

void HttpFront::set_write_deadline(Clock::time_point t) {
  // Writers waiting on a socket poll in short slices and see the new deadline within 200 ms.
  write_deadline_ns_.store(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

void HttpFront::stop(double linger_s) {
  if (stopping_.exchange(true)) return;
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  }
  if (front_.joinable()) front_.join();
  {
    // Answers being written get linger_s to finish; then httplib's chunked writers stop at their
    // next step and sockets of slow or stalled readers are broken.
    std::unique_lock lk(mu_);
    idle_cv_.wait_for(lk, std::chrono::duration<double>(linger_s), [&] { return busy_fds_.empty(); });
    app_.set_listening(-1);
    // Answers still being written to slow or stalled readers end now.
    write_deadline_ns_.store(0);
    for (int fd : busy_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  jobs_cv_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  std::deque<std::unique_ptr<Job>> left;
  std::vector<std::unique_ptr<Conn>> back;
  {
    std::lock_guard lk(mu_);
    left.swap(jobs_);
    back.swap(returned_);
  }
  for (auto& j : left) release(std::move(j->conn));
  for (auto& c : back) release(std::move(c));
  for (auto& [fd, c] : conns_) release(std::move(c));
  conns_.clear();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
}

void HttpFront::release(std::unique_ptr<Conn> c) {
  if (!c) return;
  ::close(c->fd);
  std::lock_guard lk(mu_);
  if (c->phase != Conn::Phase::Draining) {  // a draining connection gave its slot back already
    auto it = per_ip_.find(c->ip);
    if (it != per_ip_.end() && --it->second <= 0) per_ip_.erase(it);
  }
  open_.fetch_sub(1);
}

void HttpFront::close_conn(int fd) {
  auto it = conns_.find(fd);
  if (it == conns_.end()) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  auto c = std::move(it->second);
  conns_.erase(it);
  release(std::move(c));
}

void HttpFront::front_loop() {
  epoll_event evs[256];
  auto last_scan = Clock::now();
  while (!stopping_.load()) {
    const int n = ::epoll_wait(epoll_fd_, evs, 256, 100);
    for (int i = 0; i < n && !stopping_.load(); ++i) {
      const int fd = evs[i].data.fd;
      if (fd == listen_fd_) {
        accept_all();
      } else if (fd == wake_fd_) {
        uint64_t v;
        [[maybe_unused]] auto r = ::read(wake_fd_, &v, sizeof v);
        take_back();
      } else if (auto it = conns_.find(fd); it != conns_.end()) {
        on_readable(*it->second);
      }
    }
    if (Clock::now() - last_scan >= std::chrono::milliseconds(100)) {
      check_deadlines();
      last_scan = Clock::now();
    }
  }
}

void HttpFront::accept_all() {
  for (;;) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN; or out of descriptors, retried on the next event
    }
    char b[INET6_ADDRSTRLEN] = {0};
    if (a.ss_family == AF_INET)
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&a)->sin_addr, b, sizeof b);
    else if (a.ss_family == AF_INET6)
      ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&a)->sin6_addr, b, sizeof b);
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->ip = b;
    c->deadline = after(lim_.header_timeout_s);
    int status = 0;
    std::string msg, code;
    {
      std::lock_guard lk(mu_);
      const int total = open_.load();
      if (total >= lim_.max_connections * 2) {
        ::close(fd);  // far over the cap: not even an answer
        continue;
      }
      if (total >= lim_.max_connections) {
        status = 503, code = "too_many_connections";
        msg = "the server has " + std::to_string(total) + " connections open, its limit (--max-connections " +
              std::to_string(lim_.max_connections) + "); retry shortly";
      } else if (per_ip_[c->ip] >= lim_.max_conns_per_ip) {
        status = 429, code = "too_many_connections";
        msg = "too many connections from " + c->ip + " (the limit is " + std::to_string(lim_.max_conns_per_ip) +
              " per client address, --max-conns-per-ip)";
      } else {
        ++per_ip_[c->ip];
      }
      open_.fetch_add(1);
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    Conn& ref = *c;
    conns_[fd] = std::move(c);
    if (status) {
      ref.phase = Conn::Phase::Draining;  // holds no address slot
      {
        std::lock_guard lk(mu_);
        auto it = per_ip_.find(ref.ip);
        if (it != per_ip_.end() && it->second <= 0) per_ip_.erase(it);
      }
      refuse(ref, status, msg, code);
    }
  }
}

void HttpFront::refuse(Conn& c, int status, const std::string& message, const std::string& code) {
  const std::string body = error_body_(status, message, code);
  const std::string r = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
                        "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                        "\r\nConnection: close\r\n\r\n" + body;
  // Best effort, never blocking the front thread: these answers are small.
  [[maybe_unused]] auto n = ::send(c.fd, r.data(), r.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (on_refused_) on_refused_();
  // Read and drop what the client still sends for a moment before closing: closing with unread
  // data resets the connection, and the client could lose the answer.
  ::shutdown(c.fd, SHUT_WR);
  if (c.phase != Conn::Phase::Draining) {
    std::lock_guard lk(mu_);
    auto it = per_ip_.find(c.ip);
    if (it != per_ip_.end() && --it->second <= 0) per_ip_.erase(it);
  }
  c.phase = Conn::Phase::Draining;
  c.in.clear();
  c.in.shrink_to_fit();
  c.deadline = after(2);
}

void HttpFront::on_readable(Conn& c) {
  char buf[65536];
  const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return close_conn(c.fd);
  if (n < 0) return;
  if (c.phase == Conn::Phase::Draining) {
    c.drained += static_cast<size_t>(n);
    if (c.drained > (size_t{64} << 20)) close_conn(c.fd);
    return;
  }
  if (c.phase == Conn::Phase::Idle) {
    c.phase = Conn::Phase::Head;
    c.deadline = after(lim_.header_timeout_s);
  }
  c.in.append(buf, static_cast<size_t>(n));
  advance(c);
}

bool HttpFront::advance(Conn& c) {
  if (c.phase == Conn::Phase::Idle && !c.in.empty()) {
    c.phase = Conn::Phase::Head;  // a pipelined request already buffered
    c.deadline = after(lim_.header_timeout_s);
  }
  if (c.phase == Conn::Phase::Head) {
    // The header block ends at the first empty line (CRLF or a bare LF, as httplib reads lines).
    size_t end = std::string::npos, skip = 0;
    for (size_t pos = c.in.find('\n'); pos != std::string::npos; pos = c.in.find('\n', pos + 1)) {
      if (pos + 1 < c.in.size() && c.in[pos + 1] == '\n') {
        end = pos + 1, skip = 1;
        break;
      }
      if (pos + 2 < c.in.size() && c.in[pos + 1] == '\r' && c.in[pos + 2] == '\n') {
        end = pos + 1, skip = 2;
        break;
      }
    }
    const size_t block = end == std::string::npos ? c.in.size() : end;
    if (block > lim_.max_header_bytes) {
      refuse(c, 431, "request header block too large (the limit is " + kib(lim_.max_header_bytes) + ", --max-header-bytes)",
             "request_header_too_large");
      return true;
    }
    if (std::count(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(block), '\n') > lim_.max_headers + 1) {
      refuse(c, 431, "too many header fields (the limit is " + std::to_string(lim_.max_headers) + ", --max-headers)",
             "request_header_too_large");
      return true;
    }
    if (end == std::string::npos) {
      // Leading empty lines before a request are allowed (RFC 9112 2.2) and dropped.
      while (!c.in.empty() && (c.in[0] == '\r' || c.in[0] == '\n') && (c.in[0] == '\n' || c.in.size() > 1)) c.in.erase(0, 1);
      return false;
    }
    std::string head = c.in.substr(0, end);
    c.in.erase(0, end + skip);
    // Lines.
    std::vector<std::string> lines;
    for (size_t pos = 0; pos < head.size();) {
      size_t eol = head.find('\n', pos);
      if (eol == std::string::npos) eol = head.size();
      std::string line = head.substr(pos, eol - pos);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(std::move(line));
      pos = eol + 1;
    }
    while (!lines.empty() && lines.front().empty()) lines.erase(lines.begin());
    c.reset_request();
    auto bad = [&](const std::string& m) {
      refuse(c, 400, m, "invalid_request");
      return true;
    };
    if (lines.empty()) return bad("empty request");
    {
      const std::string& rl = lines[0];
      const size_t a = rl.find(' '), b = rl.rfind(' ');
      if (a == std::string::npos || b == a) return bad("malformed request line (expected METHOD TARGET HTTP/1.1)");
      c.method = rl.substr(0, a), c.target = rl.substr(a + 1, b - a - 1), c.version = rl.substr(b + 1);
      if (c.method.empty() || !std::all_of(c.method.begin(), c.method.end(), is_token_char) || c.target.empty() ||
          c.target.find(' ') != std::string::npos)
        return bad("malformed request line (expected METHOD TARGET HTTP/1.1)");
      if (c.version != "HTTP/1.1" && c.version != "HTTP/1.0") {
        refuse(c, 505, "HTTP version '" + c.version + "' is not supported (HTTP/1.1 and HTTP/1.0 are)", "invalid_request");
        return true;
      }
    }
    bool has_length = false;
    std::string connection;
    for (size_t i = 1; i < lines.size(); ++i) {
      const std::string& l = lines[i];
      if (l[0] == ' ' || l[0] == '\t') return bad("folded header lines are not accepted");
      const size_t colon = l.find(':');
      if (colon == std::string::npos || colon == 0) return bad("malformed header line (expected Name: value)");
      std::string name = l.substr(0, colon);
      if (!std::all_of(name.begin(), name.end(), is_token_char)) return bad("malformed header name '" + name + "'");
      std::string value = trim(l.substr(colon + 1));
      const std::string ln = lower(name);
      if (ln == "content-length") {
        if (value.empty() || value.size() > 18 || !std::all_of(value.begin(), value.end(), ::isdigit))
          return bad("invalid Content-Length '" + value + "'");
        const size_t v = std::stoull(value);
        if (has_length && v != c.content_length) return bad("conflicting Content-Length headers");
        has_length = true, c.content_length = v;
        continue;  // re-written below
      }
      if (ln == "transfer-encoding") {
        if (lower(value) != "chunked" || c.chunked) {
          refuse(c, 501, "Transfer-Encoding '" + value + "' is not supported (only chunked is)", "invalid_request");
          return true;
        }
        c.chunked = true;
        continue;
      }
      if (ln == "expect") {
        if (lower(value) != "100-continue") {
          refuse(c, 417, "unsupported Expect '" + value + "'", "invalid_request");
          return true;
        }
        c.expect_continue = true;
        continue;  // answered here, not by httplib
      }
      if (ln == "connection") connection = lower(value);
      // Every body on these routes is JSON: httplib would parse form bodies (and cap them at 8 KiB).
      if (ln == "content-type") {
        const std::string lv = lower(value);
        if (lv.rfind("application/x-www-form-urlencoded", 0) == 0 || lv.rfind("multipart/", 0) == 0)
          value = "application/json";
      }
      c.headers.emplace_back(std::move(name), std::move(value));
    }
    if (static_cast<int>(c.headers.size()) > lim_.max_headers) {
      refuse(c, 431, "too many header fields (the limit is " + std::to_string(lim_.max_headers) + ", --max-headers)",
             "request_header_too_large");
      return true;
    }
    if (c.chunked && has_length) return bad("both Content-Length and Transfer-Encoding given");
    if (c.content_length > lim_.max_body_bytes) {
      refuse(c, 413, "request body too large (the limit is " + std::to_string(lim_.max_body_bytes) + " bytes, --max-body)",
             "request_too_large");
      return true;
    }
    c.keep_alive = c.version == "HTTP/1.1" ? connection.find("close") == std::string::npos : false;
    c.phase = Conn::Phase::Body;
    c.deadline = after(lim_.body_timeout_s);
    const bool wants_body = c.chunked || c.content_length > 0;
    if (wants_body && c.expect_continue && c.in.empty()) {
      static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
      [[maybe_unused]] auto n = ::send(c.fd, cont, sizeof cont - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  }
  if (c.phase != Conn::Phase::Body) return false;
  // The body: a request with neither Content-Length nor chunked coding has none (RFC 9112 6.3).
  if (!c.chunked) {
    if (c.in.size() < c.content_length) return false;
    c.body = c.in.substr(0, c.content_length);
    c.in.erase(0, c.content_length);
  } else {
    size_t pos = 0;
    bool complete = false;
    while (!complete) {
      if (c.chunk == Conn::Chunk::Data) {
        const size_t take = std::min(c.chunk_left, c.in.size() - pos);
        if (c.body.size() + take > lim_.max_body_bytes) {
          refuse(c, 413, "request body too large (the limit is " + std::to_string(lim_.max_body_bytes) + " bytes, --max-body)",
                 "request_too_large");
          return true;
        }
        c.body.append(c.in, pos, take);
        pos += take, c.chunk_left -= take;
        if (c.chunk_left) break;
        c.chunk = Conn::Chunk::DataEnd;
        continue;
      }
      const size_t eol = c.in.find('\n', pos);
      if (eol == std::string::npos) {
        if (c.in.size() - pos > 1024) {
          refuse(c, 400, "malformed chunked body (a chunk line longer than 1 KiB)", "invalid_request");
          return true;
        }
        break;
      }
      std::string line = c.in.substr(pos, eol - pos);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      pos = eol + 1;
      if (c.chunk == Conn::Chunk::DataEnd) {
        if (!line.empty()) {
          refuse(c, 400, "malformed chunked body (no line end after a chunk's data)", "invalid_request");
          return true;
        }
        c.chunk = Conn::Chunk::Size;
      } else if (c.chunk == Conn::Chunk::Size) {
        const std::string hex = trim(line.substr(0, line.find(';')));
        if (hex.empty() || hex.size() > 15 || !std::all_of(hex.begin(), hex.end(), ::isxdigit)) {
          refuse(c, 400, "malformed chunked body (bad chunk size '" + hex.substr(0, 32) + "')", "invalid_request");
          return true;
        }
        c.chunk_left = std::stoull(hex, nullptr, 16);
        if (c.body.size() + c.chunk_left > lim_.max_body_bytes) {
          refuse(c, 413, "request body too large (the limit is " + std::to_string(lim_.max_body_bytes) + " bytes, --max-body)",
                 "request_too_large");
          return true;
        }
        c.chunk = c.chunk_left ? Conn::Chunk::Data : Conn::Chunk::Trailer;
      } else {  // trailer fields, dropped; an empty line ends the body
        c.trailer_bytes += line.size();
        if (c.trailer_bytes > lim_.max_header_bytes) {
          refuse(c, 431, "chunked trailer too large (the limit is " + kib(lim_.max_header_bytes) + ", --max-header-bytes)",
                 "request_header_too_large");
          return true;
        }
        complete = line.empty();
      }
    }
    c.in.erase(0, pos);
    if (!complete) return false;
  }
  // Complete: re-frame it for httplib with an exact Content-Length, and hand it to a worker.
  auto job = std::make_unique<Job>();
  job->http10 = c.version == "HTTP/1.0";
  std::string& r = job->request;
  r.reserve(c.body.size() + 512);
  r = c.method + " " + c.target + " " + c.version + "\r\n";
  for (const auto& [k, v] : c.headers) r += k + ": " + v + "\r\n";
  r += "Content-Length: " + std::to_string(c.body.size()) + "\r\n\r\n";
  r += c.body;
  c.body.clear();
  c.body.shrink_to_fit();
  const int fd = c.fd;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  auto it = conns_.find(fd);
  job->conn = std::move(it->second);
  conns_.erase(it);
  {
    std::lock_guard lk(mu_);
    busy_fds_.insert(fd);
    jobs_.push_back(std::move(job));
  }
  jobs_cv_.notify_one();
  return true;
}

void HttpFront::check_deadlines() {
  const auto now = Clock::now();
  std::vector<int> late;
  for (auto& [fd, c] : conns_)
    if (now >= c->deadline) late.push_back(fd);
  for (int fd : late) {
    Conn& c = *conns_[fd];
    // A request begun and not finished in time gets a 408; idle and refused connections just close.
    if (c.phase == Conn::Phase::Head && !c.in.empty()) {
      refuse(c, 408, "request headers not received in time (the limit is " + std::to_string(lim_.header_timeout_s) +
                         " s, --header-timeout)", "request_timeout");
    } else if (c.phase == Conn::Phase::Body) {
      refuse(c, 408, "request body not received in time (the limit is " + std::to_string(lim_.body_timeout_s) +
                         " s, --body-timeout)", "request_timeout");
    } else {
      close_conn(fd);
    }
  }
}

void HttpFront::take_back() {
  std::vector<std::unique_ptr<Conn>> back;
  {
    std::lock_guard lk(mu_);
    back.swap(returned_);
  }
  for (auto& c : back) {
    const int fd = c->fd;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    c->phase = Conn::Phase::Idle;
    c->deadline = after(lim_.keep_alive_s);
    Conn& ref = *c;
    conns_[fd] = std::move(c);
    if (!ref.in.empty()) advance(ref);  // a pipelined request, answered in order
  }
}

void HttpFront::worker_loop() {
  for (;;) {
    std::unique_ptr<Job> j;
    {
      std::unique_lock lk(mu_);
      jobs_cv_.wait(lk, [&] { return stopping_.load() || !jobs_.empty(); });
      if (stopping_.load()) return;  // stop() closes what is left in the queue
      j = std::move(jobs_.front());
      jobs_.pop_front();
    }
    run_job(*j);
  }
}

void HttpFront::run_job(Job& j) {
  Conn& c = *j.conn;
  const int fd = c.fd;
  bool closed = !c.keep_alive;
  bool ok;
  {
    ConnStream strm(*this, fd, j.request, j.http10);
    bool connection_closed = false;
    ok = app_.serve_one(strm, closed || ++c.served >= 1000, connection_closed) && !strm.failed();
    closed = closed || connection_closed || c.served >= 1000;
  }
  j.request.clear();
  j.request.shrink_to_fit();
  {
    std::lock_guard lk(mu_);
    busy_fds_.erase(fd);
    if (busy_fds_.empty()) idle_cv_.notify_all();
    if (ok && !closed && !stopping_.load()) {
      c.reset_request();
      returned_.push_back(std::move(j.conn));
    }
  }
  if (j.conn) {
    release(std::move(j.conn));
    return;
  }
  const uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

bool HttpFront::wait_writable(int fd) {
  const auto deadline = std::min(after(lim_.write_timeout_s), Clock::time_point(std::chrono::nanoseconds(write_deadline_ns_.load())));
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLOUT, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 200)));
    if (r < 0 && errno != EINTR) return false;
    if (r > 0) return (p.revents & (POLLERR | POLLHUP | POLLNVAL)) == 0;
    if (Clock::now().time_since_epoch() >= std::chrono::nanoseconds(write_deadline_ns_.load())) return false;
  }
}

bool HttpFront::write_all(int fd, const char* p, size_t n) {
  while (n) {
    if (Clock::now().time_since_epoch() >= std::chrono::nanoseconds(write_deadline_ns_.load())) return false;
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      p += w, n -= static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    if (!wait_writable(fd)) return false;
  }
  return true;
}

}  // namespace kvscope::server
