// The stream a worker answers one request through (http_front.h): httplib's process_request reads
// the request the front re-framed and writes the answer to the socket, under the front's write
// deadlines. For an HTTP/1.0 client a chunked answer is unwrapped on the way out and ends with the
// connection.
#pragma once
#include <httplib.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace kvscope::server {

class HttpFront;

class ConnStream : public httplib::Stream {
 public:
  // req must outlive the stream.
  ConnStream(HttpFront& f, int fd, const std::string& req, bool http10) : f_(f), fd_(fd), req_(req), dechunk_(http10) {}

  bool is_readable() const override { return off_ < req_.size(); }
  bool is_writable() const override;
  ssize_t read(char* p, size_t n) override {
    n = std::min(n, req_.size() - off_);
    std::memcpy(p, req_.data() + off_, n);
    off_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* p, size_t n) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override { addr(false, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { addr(true, ip, port); }
  socket_t socket() const override { return fd_; }
  bool failed() const { return failed_; }

 private:
  void addr(bool local, std::string& ip, int& port) const;
  // HTTP/1.0 has no chunked coding: drop the Transfer-Encoding header, pass only the chunks' data
  // and let the end of the connection end the body.
  void unwrap(const char* p, size_t n, std::string& out);

  HttpFront& f_;
  int fd_;
  const std::string& req_;
  size_t off_ = 0;
  bool dechunk_, failed_ = false;
  enum class St { Head, Pass, Size, Data, DataEnd, Done } st_ = St::Head;  // where unwrap is in the answer
  std::string acc_;   // a partial head or chunk-size line
  size_t left_ = 0;   // bytes left in the current chunk
};

}  // namespace kvscope::server
