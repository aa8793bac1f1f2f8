// The stream a worker answers through (http_stream.h).
#include "server/http_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "server/http_front.h"
#include "server/http_request.h"

namespace kvscope::server {

bool ConnStream::is_writable() const { return !failed_ && f_.wait_writable(fd_); }

ssize_t ConnStream::write(const char* p, size_t n) {
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

void ConnStream::addr(bool local, std::string& ip, int& port) const {
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

void ConnStream::unwrap(const char* p, size_t n, std::string& out) {
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
          const std::string l = ascii_lower(line);
          if (l.rfind("transfer-encoding:", 0) == 0) {
            chunked = ascii_lower(trim_ows(line.substr(18))) == "chunked";
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

}  // namespace kvscope::server
