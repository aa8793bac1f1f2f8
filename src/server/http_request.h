// Reading one HTTP/1.x request out of the bytes a connection has buffered: the request line and
// headers under their limits, then the body (by Content-Length or chunked coding, decoded under the
// body limit). Pure parsing on a string: no sockets, clocks or threads, so the front stage
// (http_front.cpp) owns the connection and the deadlines and this owns the framing rules.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace kvscope::server {

struct FrontLimits {
  size_t max_body_bytes = size_t{1} << 20;    // decoded body; 413 beyond
  size_t max_header_bytes = size_t{16} << 10;  // request line and headers; 431 beyond
  int max_headers = 100;                       // header fields; 431 beyond
  double header_timeout_s = 10;                // a request's line and headers must arrive within this
  double body_timeout_s = 60;                  // and its body within this after the headers
  double keep_alive_s = 5;                     // an idle kept-alive connection is closed after this
  double write_timeout_s = 5;                  // a write that makes no progress this long fails
  int max_conns_per_ip = 256;                  // open connections per client address; 429 beyond
  int max_connections = 2048;                  // open connections in all; 503 beyond
  int workers = 64;                            // threads running requests
  bool reuse_port = false;                     // SO_REUSEPORT: share the port with other servers
};

// The answer the front writes itself when a request cannot be read: status, message and error code.
struct Refusal {
  int status = 0;
  std::string message, code;
};

// ASCII lower case, and a header value without the spaces and tabs around it.
std::string ascii_lower(std::string s);
std::string trim_ows(const std::string& s);

class RequestReader {
 public:
  enum class Step { More, Done, Refused };  // More: wait for bytes; Done: this part was read

  explicit RequestReader(const FrontLimits& lim) : lim_(lim) {}

  // Reads the request line and headers from the front of `in` and consumes them; leading empty
  // lines are dropped. Done leaves the body (and any pipelined request) in `in`.
  Step read_head(std::string& in);
  // Reads the body after read_head's Done, consuming what it decodes; call again as bytes arrive.
  Step read_body(std::string& in);
  // The complete request re-framed for httplib: request line, headers, an exact Content-Length and
  // the decoded body. Frees the body.
  std::string reframe();
  // Forgets the request, ready to read the connection's next one.
  void reset();

  const Refusal& refusal() const { return refusal_; }
  bool keep_alive() const { return keep_alive_; }
  bool http10() const { return version_ == "HTTP/1.0"; }
  // The client waits for "100 Continue" before sending a body.
  bool awaits_continue() const { return expect_continue_ && (chunked_ || content_length_ > 0); }
  const std::string& method() const { return method_; }
  const std::string& target() const { return target_; }
  const std::vector<std::pair<std::string, std::string>>& headers() const { return headers_; }
  const std::string& body() const { return body_; }

 private:
  Step refuse(int status, std::string message, std::string code);
  Step bad(std::string message) { return refuse(400, std::move(message), "invalid_request"); }
  Step too_large();  // the body limit
  Step parse_request_line(const std::string& line);
  Step parse_header(const std::string& line, bool& has_length, std::string& connection);
  Step read_chunked(std::string& in);

  const FrontLimits& lim_;
  Refusal refusal_;
  std::string method_, target_, version_;
  std::vector<std::pair<std::string, std::string>> headers_;
  bool chunked_ = false, expect_continue_ = false, keep_alive_ = true;
  size_t content_length_ = 0;
  std::string body_;  // decoded
  enum class Chunk { Size, Data, DataEnd, Trailer } chunk_ = Chunk::Size;
  size_t chunk_left_ = 0;
  size_t trailer_bytes_ = 0;
};

}  // namespace kvscope::server
