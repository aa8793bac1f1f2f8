// The URL a Redis user is configured with (the KV tier, the decision cache), parsed one way for
// both. No hiredis here, so a header that holds a Url does not need its include path.
#pragma once
#include <string>
#include <string_view>

namespace kvscope::redis {

// redis://[user:password@]host[:port][/db]; host may be [v6]; %-escapes in the credentials;
// redis://password@host as redis-cli -u reads it.
struct Url {
  std::string host;
  int port = 6379, db = 0;
  std::string user, password;
  // Throws InputError naming `who` (e.g. "kv tier") and what is wrong with the URL.
  static Url parse(const std::string& url, std::string_view who = "redis");
  std::string display() const;  // host:port[/db], without the credentials
};

}  // namespace kvscope::redis
