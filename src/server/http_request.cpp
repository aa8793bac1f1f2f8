// Reading one HTTP/1.x request from a connection's buffered bytes (http_request.h).
#include "server/http_request.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace kvscope::server {

namespace {

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

std::string kib(size_t n) { return n % 1024 ? std::to_string(n) + " bytes" : std::to_string(n / 1024) + " KiB"; }

// The header block ends at the first empty line (CRLF or a bare LF, as httplib reads lines): the
// offset just past the last header line's '\n', and how many bytes the empty line takes.
size_t header_block_end(const std::string& in, size_t& skip) {
  for (size_t pos = in.find('\n'); pos != std::string::npos; pos = in.find('\n', pos + 1)) {
    if (pos + 1 < in.size() && in[pos + 1] == '\n') {
      skip = 1;
      return pos + 1;
    }
    if (pos + 2 < in.size() && in[pos + 1] == '\r' && in[pos + 2] == '\n') {
      skip = 2;
      return pos + 1;
    }
  }
  return std::string::npos;
}

std::vector<std::string> split_lines(const std::string& head) {
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
  return lines;
}

}  // namespace

std::string ascii_lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim_ows(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

RequestReader::Step RequestReader::refuse(int status, std::string message, std::string code) {
  refusal_ = {status, std::move(message), std::move(code)};
  return Step::Refused;
}

RequestReader::Step RequestReader::too_large() {
  return refuse(413, "request body too large (the limit is " + std::to_string(lim_.max_body_bytes) + " bytes, --max-body)",
                "request_too_large");
}

void RequestReader::reset() {
  method_.clear(), target_.clear(), version_.clear(), headers_.clear(), body_.clear();
  chunked_ = expect_continue_ = false;
  keep_alive_ = true;
  content_length_ = 0;
  chunk_ = Chunk::Size;
  chunk_left_ = trailer_bytes_ = 0;
}

RequestReader::Step RequestReader::read_head(std::string& in) {
  size_t skip = 0;
  const size_t end = header_block_end(in, skip);
  // The limits hold while the block is still arriving, so a flood is refused before it ends.
  const size_t block = end == std::string::npos ? in.size() : end;
  if (block > lim_.max_header_bytes)
    return refuse(431, "request header block too large (the limit is " + kib(lim_.max_header_bytes) + ", --max-header-bytes)",
                  "request_header_too_large");
  if (std::count(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(block), '\n') > lim_.max_headers + 1)
    return refuse(431, "too many header fields (the limit is " + std::to_string(lim_.max_headers) + ", --max-headers)",
                  "request_header_too_large");
  if (end == std::string::npos) {
    // Leading empty lines before a request are allowed (RFC 9112 2.2) and dropped.
    while (!in.empty() && (in[0] == '\r' || in[0] == '\n') && (in[0] == '\n' || in.size() > 1)) in.erase(0, 1);
    return Step::More;
  }
  const std::vector<std::string> lines = split_lines(in.substr(0, end));
  in.erase(0, end + skip);
  reset();
  if (lines.empty()) return bad("empty request");
  if (Step s = parse_request_line(lines[0]); s != Step::Done) return s;
  bool has_length = false;
  std::string connection;
  for (size_t i = 1; i < lines.size(); ++i)
    if (Step s = parse_header(lines[i], has_length, connection); s != Step::Done) return s;
  if (static_cast<int>(headers_.size()) > lim_.max_headers)
    return refuse(431, "too many header fields (the limit is " + std::to_string(lim_.max_headers) + ", --max-headers)",
                  "request_header_too_large");
  if (chunked_ && has_length) return bad("both Content-Length and Transfer-Encoding given");
  if (content_length_ > lim_.max_body_bytes) return too_large();
  keep_alive_ = version_ == "HTTP/1.1" ? connection.find("close") == std::string::npos : false;
  return Step::Done;
}

RequestReader::Step RequestReader::parse_request_line(const std::string& rl) {
  const size_t a = rl.find(' '), b = rl.rfind(' ');
  if (a == std::string::npos || b == a) return bad("malformed request line (expected METHOD TARGET HTTP/1.1)");
  method_ = rl.substr(0, a), target_ = rl.substr(a + 1, b - a - 1), version_ = rl.substr(b + 1);
  if (method_.empty() || !std::all_of(method_.begin(), method_.end(), is_token_char) || target_.empty() ||
      target_.find(' ') != std::string::npos)
    return bad("malformed request line (expected METHOD TARGET HTTP/1.1)");
  if (version_ != "HTTP/1.1" && version_ != "HTTP/1.0")
    return refuse(505, "HTTP version '" + version_ + "' is not supported (HTTP/1.1 and HTTP/1.0 are)", "invalid_request");
  return Step::Done;
}

RequestReader::Step RequestReader::parse_header(const std::string& l, bool& has_length, std::string& connection) {
  if (l[0] == ' ' || l[0] == '\t') return bad("folded header lines are not accepted");
  const size_t colon = l.find(':');
  if (colon == std::string::npos || colon == 0) return bad("malformed header line (expected Name: value)");
  std::string name = l.substr(0, colon);
  if (!std::all_of(name.begin(), name.end(), is_token_char)) return bad("malformed header name '" + name + "'");
  std::string value = trim_ows(l.substr(colon + 1));
  const std::string ln = ascii_lower(name);
  if (ln == "content-length") {
    if (value.empty() || value.size() > 18 || !std::all_of(value.begin(), value.end(), ::isdigit))
      return bad("invalid Content-Length '" + value + "'");
    const size_t v = std::stoull(value);
    if (has_length && v != content_length_) return bad("conflicting Content-Length headers");
    has_length = true, content_length_ = v;
    return Step::Done;  // re-written by reframe()
  }
  if (ln == "transfer-encoding") {
    if (ascii_lower(value) != "chunked" || chunked_)
      return refuse(501, "Transfer-Encoding '" + value + "' is not supported (only chunked is)", "invalid_request");
    chunked_ = true;
    return Step::Done;
  }
  if (ln == "expect") {
    if (ascii_lower(value) != "100-continue") return refuse(417, "unsupported Expect '" + value + "'", "invalid_request");
    expect_continue_ = true;
    return Step::Done;  // answered by the front, not by httplib
  }
  if (ln == "connection") connection = ascii_lower(value);
  // Every body on these routes is JSON: httplib would parse form bodies (and cap them at 8 KiB).
  if (ln == "content-type") {
    const std::string lv = ascii_lower(value);
    if (lv.rfind("application/x-www-form-urlencoded", 0) == 0 || lv.rfind("multipart/", 0) == 0) value = "application/json";
  }
  headers_.emplace_back(std::move(name), std::move(value));
  return Step::Done;
}

RequestReader::Step RequestReader::read_body(std::string& in) {
  // A request with neither Content-Length nor chunked coding has no body (RFC 9112 6.3).
  if (chunked_) return read_chunked(in);
  if (in.size() < content_length_) return Step::More;
  body_ = in.substr(0, content_length_);
  in.erase(0, content_length_);
  return Step::Done;
}

RequestReader::Step RequestReader::read_chunked(std::string& in) {
  size_t pos = 0;
  bool complete = false;
  while (!complete) {
    if (chunk_ == Chunk::Data) {
      const size_t take = std::min(chunk_left_, in.size() - pos);
      if (body_.size() + take > lim_.max_body_bytes) return too_large();
      body_.append(in, pos, take);
      pos += take, chunk_left_ -= take;
      if (chunk_left_) break;
      chunk_ = Chunk::DataEnd;
      continue;
    }
    const size_t eol = in.find('\n', pos);
    if (eol == std::string::npos) {
      if (in.size() - pos > 1024) return bad("malformed chunked body (a chunk line longer than 1 KiB)");
      break;
    }
    std::string line = in.substr(pos, eol - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    pos = eol + 1;
    if (chunk_ == Chunk::DataEnd) {
      if (!line.empty()) return bad("malformed chunked body (no line end after a chunk's data)");
      chunk_ = Chunk::Size;
    } else if (chunk_ == Chunk::Size) {
      const std::string hex = trim_ows(line.substr(0, line.find(';')));
      if (hex.empty() || hex.size() > 15 || !std::all_of(hex.begin(), hex.end(), ::isxdigit))
        return bad("malformed chunked body (bad chunk size '" + hex.substr(0, 32) + "')");
      chunk_left_ = std::stoull(hex, nullptr, 16);
      if (body_.size() + chunk_left_ > lim_.max_body_bytes) return too_large();
      chunk_ = chunk_left_ ? Chunk::Data : Chunk::Trailer;
    } else {  // trailer fields, dropped; an empty line ends the body
      trailer_bytes_ += line.size();
      if (trailer_bytes_ > lim_.max_header_bytes)
        return refuse(431, "chunked trailer too large (the limit is " + kib(lim_.max_header_bytes) + ", --max-header-bytes)",
                      "request_header_too_large");
      complete = line.empty();
    }
  }
  in.erase(0, pos);
  return complete ? Step::Done : Step::More;
}

std::string RequestReader::reframe() {
  std::string r;
  r.reserve(body_.size() + 512);
  r = method_ + " " + target_ + " " + version_ + "\r\n";
  for (const auto& [k, v] : headers_) r += k + ": " + v + "\r\n";
  r += "Content-Length: " + std::to_string(body_.size()) + "\r\n\r\n";
  r += body_;
  body_.clear();
  body_.shrink_to_fit();
  return r;
}

}  // namespace kvscope::server
