// One Redis client for the modules that keep state in Redis (the KV tier, the decision cache): one
// connection with bounded connects and commands, credentials and database from its Url, and
// replies freed by RAII. Blocking, not thread-safe: each user holds its own connection and lock.
#pragma once
#include <hiredis/hiredis.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "redis/url.h"

namespace kvscope::redis {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

class Connection {
 public:
  Connection(Url url, int timeout_ms) : url_(std::move(url)), timeout_ms_(timeout_ms) {}
  ~Connection() { close(); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool up() const { return c_ != nullptr; }
  void close();
  // Connects within the timeout, bounds every later command by it too, authenticates, selects the
  // database and pings (a reply proves a Redis answers, not merely that something accepted the TCP
  // connection). False with `why` on failure, the connection closed.
  bool connect(std::string& why);
  // Sends every command, then reads every reply (one round trip). False (the connection is
  // unusable) on I/O failure; error replies come back as replies. Binary-safe arguments.
  bool pipeline(const std::vector<std::vector<std::string>>& cmds, std::vector<Reply>& out, std::string& why);
  // One command; null with `why` when the connection failed.
  Reply command(std::initializer_list<std::string_view> args, std::string& why);
  const Url& url() const { return url_; }

 private:
  std::string error_of(const redisContext* c) const;
  Url url_;
  int timeout_ms_;
  redisContext* c_ = nullptr;
};

}  // namespace kvscope::redis
