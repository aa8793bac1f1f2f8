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

#include "server/http_stream.h"
#include "util/error.h"

namespace kvscope::server {

namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point after(double s) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
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

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

}  // namespace

// One client connection and the request being read on it.
struct HttpFront::Conn {
  explicit Conn(const FrontLimits& lim) : req(lim) {}
  int fd = -1;
  std::string ip;
  std::string in;  // bytes read and not yet parsed (pipelined requests wait here in order)
  Clock::time_point deadline;
  enum class Phase { Idle, Head, Body, Draining } phase = Phase::Head;
  int served = 0;
  RequestReader req;  // the request being read
  size_t drained = 0;
};

// A complete request for a worker: the connection and the request re-framed for httplib.
struct HttpFront::Job {
  std::unique_ptr<Conn> conn;
  std::string request;  // request line, headers with Content-Length, decoded body
  bool http10 = false;
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
    auto c = std::make_unique<Conn>(lim_);
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

void HttpFront::refuse(Conn& c, const Refusal& r) { refuse(c, r.status, r.message, r.code); }

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
    const RequestReader::Step s = c.req.read_head(c.in);
    if (s == RequestReader::Step::More) return false;
    if (s == RequestReader::Step::Refused) return refuse(c, c.req.refusal()), true;
    c.phase = Conn::Phase::Body;
    c.deadline = after(lim_.body_timeout_s);
    if (c.req.awaits_continue() && c.in.empty()) {
      static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
      [[maybe_unused]] auto n = ::send(c.fd, cont, sizeof cont - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  }
  if (c.phase != Conn::Phase::Body) return false;
  const RequestReader::Step s = c.req.read_body(c.in);
  if (s == RequestReader::Step::More) return false;
  if (s == RequestReader::Step::Refused) return refuse(c, c.req.refusal()), true;
  hand_over(c);
  return true;
}

void HttpFront::hand_over(Conn& c) {
  auto job = std::make_unique<Job>();
  job->http10 = c.req.http10();
  job->request = c.req.reframe();
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
  bool closed = !c.req.keep_alive();
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
      c.req.reset();
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
