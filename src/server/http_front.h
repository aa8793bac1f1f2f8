// The server's connection layer. One event-driven thread accepts connections and reads each request
// (headers and body) with deadlines, size limits and a cap on connections per client address; only
// complete requests reach the worker threads, which run httplib's routing on them and write the
// answer. So slow or stalled clients hold a buffer, never a worker, and /health stays reachable.
// It also owns the framing httplib gets wrong or leaves open: chunked bodies are decoded under the
// body limit (http_request.h), a request without a length has no body, pipelined requests are kept
// in order, and HTTP/1.0 clients get close-delimited answers instead of chunked ones
// (http_stream.h).
#pragma once
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/http_request.h"

namespace kvscope::server {

// httplib's Server with its per-request entry point opened: the front hands it complete requests.
class RoutedServer : public httplib::Server {
 public:
  bool serve_one(httplib::Stream& strm, bool close_connection, bool& connection_closed) {
    return process_request(strm, close_connection, connection_closed, nullptr);
  }
  // httplib ends chunked answers once its listening socket is gone: a valid value lets them run.
  void set_listening(int fd) { svr_sock_ = fd; }
};

class HttpFront {
 public:
  // error_body(status, message, code): the JSON body of an answer the front writes itself.
  using ErrorBody = std::function<std::string(int status, const std::string& message, const std::string& code)>;
  HttpFront(RoutedServer& app, FrontLimits lim, ErrorBody error_body, std::function<void()> on_refused);
  ~HttpFront();
  HttpFront(const HttpFront&) = delete;
  HttpFront& operator=(const HttpFront&) = delete;

  // Binds and listens; returns the port. Throws InputError naming the address and the reason.
  int bind(const std::string& host, int port);
  void start();
  // Writes still blocked at this time fail (shutdown bounds how long slow readers can hold it).
  void set_write_deadline(std::chrono::steady_clock::time_point t);
  // Stops accepting and closes idle connections; answers still being written get linger_s, then
  // their connections are broken. Joins every thread.
  void stop(double linger_s = 0);

  struct Conn;
  struct Job;

 private:
  void front_loop();
  void worker_loop();
  void accept_all();
  void on_readable(Conn& c);
  // Parses what c has buffered; true when a complete request was handed to a worker or c was closed.
  bool advance(Conn& c);
  // Hands the complete request read on c to a worker; c leaves epoll until the worker gives it back.
  void hand_over(Conn& c);
  void refuse(Conn& c, int status, const std::string& message, const std::string& code);
  void refuse(Conn& c, const Refusal& r);
  void close_conn(int fd);
  void release(std::unique_ptr<Conn> c);  // closes the socket and frees its address slot
  void run_job(Job& j);
  void check_deadlines();
  void take_back();

  friend class ConnStream;
  bool write_all(int fd, const char* p, size_t n);
  bool wait_writable(int fd);

  RoutedServer& app_;
  FrontLimits lim_;
  ErrorBody error_body_;
  std::function<void()> on_refused_;

  int listen_fd_ = -1, epoll_fd_ = -1, wake_fd_ = -1;
  std::thread front_;
  std::vector<std::thread> workers_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> open_{0};
  std::atomic<int64_t> write_deadline_ns_;

  std::map<int, std::unique_ptr<Conn>> conns_;  // the front thread's connections (in epoll)

  std::mutex mu_;  // guards everything below
  std::condition_variable jobs_cv_, idle_cv_;
  std::deque<std::unique_ptr<Job>> jobs_;
  std::vector<std::unique_ptr<Conn>> returned_;  // kept-alive connections back from workers
  std::set<int> busy_fds_;                       // sockets workers are answering on
  std::map<std::string, int> per_ip_;
};

}  // namespace kvscope::server
