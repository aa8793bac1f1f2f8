#include "redis/connection.h"

#include <cerrno>
#include <cstring>
#include <sys/time.h>

#include "util/error.h"
#include "util/sigpipe_guard.h"

namespace kvscope::redis {

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string_view::npos;
}

int hex_value(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

}  // namespace

Url Url::parse(const std::string& url, std::string_view who) {
  auto bad = [&](const std::string& why) {
    return InputError(std::string(who) + ": bad redis URL '" + url + "': " + why +
                      " (expected redis://[user:password@]host:port[/db])");
  };
  auto decode = [&](std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '%') {
        out += s[i];
        continue;
      }
      if (i + 2 >= s.size()) throw bad("truncated %-escape");
      const int a = hex_value(s[i + 1]), b = hex_value(s[i + 2]);
      if (a < 0 || b < 0) throw bad("bad %-escape");
      out += static_cast<char>(a * 16 + b);
      i += 2;
    }
    return out;
  };
  constexpr std::string_view scheme = "redis://";
  if (url.compare(0, scheme.size(), scheme) != 0) throw bad("not a redis:// URL");
  Url u;
  std::string_view rest = std::string_view(url).substr(scheme.size());
  std::string_view authority = rest.substr(0, rest.find('/'));
  std::string_view path = authority.size() < rest.size() ? rest.substr(authority.size() + 1) : std::string_view{};
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    std::string_view cred = authority.substr(0, at);
    authority = authority.substr(at + 1);
    const size_t colon = cred.find(':');
    if (colon == std::string_view::npos) {
      u.password = decode(cred);
    } else {
      u.user = decode(cred.substr(0, colon));
      u.password = decode(cred.substr(colon + 1));
    }
    if (u.password.empty()) throw bad("empty password");
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) throw bad("unclosed '['");
    u.host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') throw bad("junk after ']'");
    if (!after.empty()) port_text = after.substr(1);
    if (!after.empty() && port_text.empty()) throw bad("empty port");
  } else {
    const size_t colon = authority.find(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) throw bad("empty port");
    }
  }
  if (u.host.empty()) throw bad("no host");
  if (!port_text.empty()) {
    if (!all_digits(port_text)) throw bad("port '" + std::string(port_text) + "' is not a number");
    u.port = std::stoi(std::string(port_text));
    if (u.port < 1 || u.port > 65535) throw bad("port " + std::to_string(u.port) + " is out of range");
  }
  if (!path.empty()) {
    if (!all_digits(path)) throw bad("database '" + std::string(path) + "' is not a number");
    u.db = std::stoi(std::string(path));
  }
  return u;
}

std::string Url::display() const {
  std::string d = host + ":" + std::to_string(port);
  if (db) {  // appended piece by piece: GCC 12 warns falsely on "/" + std::to_string(db) (PR105329)
    d += '/';
    d += std::to_string(db);
  }
  return d;
}

void Connection::close() {
  if (c_) redisFree(c_);
  c_ = nullptr;
}

bool Connection::connect(std::string& why) {
  close();
  // tv_usec must stay below 1e6: hiredis 0.14 rejects a timeval that is not normalised.
  const timeval tv{timeout_ms_ / 1000, static_cast<suseconds_t>((timeout_ms_ % 1000) * 1000)};
  redisContext* c = redisConnectWithTimeout(url_.host.c_str(), url_.port, tv);
  if (!c) {
    why = "cannot allocate a connection";
    return false;
  }
  // The connect timeout does not cover commands: without redisSetTimeout a Redis that accepts but
  // never answers would block the caller forever.
  if (c->err || redisSetTimeout(c, tv) != REDIS_OK) {
    why = error_of(c);
    redisFree(c);
    return false;
  }
  c_ = c;
  std::vector<std::vector<std::string>> cmds;
  if (!url_.password.empty()) {
    if (url_.user.empty()) cmds.push_back({"AUTH", url_.password});
    else cmds.push_back({"AUTH", url_.user, url_.password});
  }
  if (url_.db) cmds.push_back({"SELECT", std::to_string(url_.db)});
  cmds.push_back({"PING"});
  std::vector<Reply> rs;
  if (!pipeline(cmds, rs, why)) return close(), false;
  for (const auto& r : rs)
    if (r->type == REDIS_REPLY_ERROR) {
      why = std::string("error reply: ") + r->str;
      close();
      return false;
    }
  return true;
}

bool Connection::pipeline(const std::vector<std::vector<std::string>>& cmds, std::vector<Reply>& out, std::string& why) {
  out.clear();
  if (!c_) {
    why = "not connected";
    return false;
  }
  SigpipeGuard guard;
  for (const auto& cmd : cmds) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : cmd) argv.push_back(a.data()), lens.push_back(a.size());
    if (redisAppendCommandArgv(c_, static_cast<int>(argv.size()), argv.data(), lens.data()) != REDIS_OK) {
      why = error_of(c_);
      return false;
    }
  }
  for (size_t i = 0; i < cmds.size(); ++i) {
    void* r = nullptr;
    if (redisGetReply(c_, &r) != REDIS_OK || !r) {
      why = error_of(c_);
      return false;
    }
    out.emplace_back(static_cast<redisReply*>(r));
  }
  return true;
}

Reply Connection::command(std::initializer_list<std::string_view> args, std::string& why) {
  if (!c_) {
    why = "not connected";
    return nullptr;
  }
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (auto a : args) argv.push_back(a.data()), lens.push_back(a.size());
  SigpipeGuard guard;
  Reply r(static_cast<redisReply*>(redisCommandArgv(c_, static_cast<int>(argv.size()), argv.data(), lens.data())));
  if (!r) why = error_of(c_);
  return r;
}

// hiredis reports a socket timeout as the bare EAGAIN text; say what it means instead.
std::string Connection::error_of(const redisContext* c) const {
  if (c->err == REDIS_ERR_IO && (std::strcmp(c->errstr, std::strerror(EAGAIN)) == 0 ||
                                 std::strcmp(c->errstr, std::strerror(EWOULDBLOCK)) == 0))
    return "no reply within " + std::to_string(timeout_ms_) + " ms";
  return c->err ? c->errstr : "no reply";
}

}  // namespace kvscope::redis
