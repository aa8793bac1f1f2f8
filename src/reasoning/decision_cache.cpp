// Decision cache: an LRU in memory, Redis behind it. Every Redis failure (refused, timed out, error
// reply, dropped connection) is handled the same way: drop the connection, serve from memory, and do
// not touch Redis again until reconnect_after_ms has passed, so an outage costs one timeout per
// back-off period rather than one per request.
#include "reasoning/decision_cache.h"

#include <hiredis/hiredis.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>

#include "util/error.h"
#include "util/hash.h"
#include "util/sigpipe_guard.h"

namespace kvscope::reasoning {

nlohmann::json Decision::to_json() const {
  return {{"mode", mode_name(mode)}, {"difficulty", difficulty}, {"confidence", confidence}, {"reason", reason}};
}

Decision Decision::from_json(const nlohmann::json& j) {
  auto bad = [&](const std::string& what) {
    return InputError("decision: " + what + " in " + j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  };
  if (!j.is_object()) throw bad("not a JSON object");
  for (const char* k : {"mode", "reason"})
    if (!j.contains(k) || !j[k].is_string()) throw bad(std::string("missing string '") + k + "'");
  for (const char* k : {"difficulty", "confidence"})
    if (!j.contains(k) || !j[k].is_number()) throw bad(std::string("missing number '") + k + "'");
  Decision d;
  const std::string mode = j["mode"].get<std::string>();
  const auto parsed = parse_mode(mode);
  if (!parsed) throw bad("mode '" + mode + "' is not fast|mixed|slow");
  d.mode = *parsed;
  d.difficulty = j["difficulty"].get<double>();
  d.confidence = j["confidence"].get<double>();
  d.reason = j["reason"].get<std::string>();
  if (!(d.difficulty >= 0 && d.difficulty <= 100)) throw bad("difficulty outside [0, 100]");
  if (!(d.confidence >= 0 && d.confidence <= 1)) throw bad("confidence outside [0, 1]");
  return d;
}

namespace {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

// One command, binary-safe (argv form, no format string); null when the connection failed.
Reply command(redisContext* c, std::initializer_list<std::string_view> args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (auto a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  SigpipeGuard guard;
  return Reply(static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data())));
}

// hiredis reports a socket timeout as the bare EAGAIN text; say what it means instead.
std::string context_error(const redisContext* c, int timeout_ms) {
  if (c->err == REDIS_ERR_IO && (std::strcmp(c->errstr, std::strerror(EAGAIN)) == 0 ||
                                 std::strcmp(c->errstr, std::strerror(EWOULDBLOCK)) == 0))
    return "no reply within " + std::to_string(timeout_ms) + " ms";
  return c->err ? c->errstr : "no reply";
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

uint64_t request_hash(uint64_t model_fingerprint, const std::vector<int32_t>& prompt_tokens, std::string_view params) {
  uint64_t h = util::kFnvOffset;
  util::fnv1a_int(h, model_fingerprint, 8);
  util::fnv1a_int(h, prompt_tokens.size(), 8);
  for (int32_t t : prompt_tokens) util::fnv1a_int(h, static_cast<uint32_t>(t), 4);
  util::fnv1a_int(h, params.size(), 8);
  for (unsigned char ch : params) util::fnv1a_int(h, ch, 1);
  return h;
}

std::string DecisionCache::redis_key(uint64_t hash) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "kv_pattern:%016" PRIx64, hash);
  return buf;
}

DecisionCache::DecisionCache(DecisionCacheOptions o) : opt_(std::move(o)) {
  if (opt_.capacity == 0) throw InputError("decision cache: capacity must be at least 1");
  if (opt_.ttl_s <= 0) throw InputError("decision cache: ttl_s must be positive (it is " + std::to_string(opt_.ttl_s) + ")");
  if (opt_.timeout_ms <= 0) throw InputError("decision cache: timeout_ms must be positive");
  if (opt_.reconnect_after_ms < 0) throw InputError("decision cache: reconnect_after_ms must not be negative");
  stats_.backend = opt_.redis_url.empty() ? "memory" : "redis";
  if (opt_.redis_url.empty()) return;

  // redis://host[:port][/db], host may be [v6]; credentials are refused rather than silently ignored.
  const std::string& url = opt_.redis_url;
  auto bad = [&](const std::string& why) {
    return InputError("decision cache: bad redis URL '" + url + "': " + why + " (expected redis://host:port[/db])");
  };
  constexpr std::string_view scheme = "redis://";
  if (url.compare(0, scheme.size(), scheme) != 0) throw bad("not a redis:// URL");
  std::string_view rest = std::string_view(url).substr(scheme.size());
  std::string_view authority = rest.substr(0, rest.find('/'));
  std::string_view path = authority.size() < rest.size() ? rest.substr(authority.size() + 1) : std::string_view{};
  if (authority.find('@') != std::string_view::npos) throw bad("credentials are not supported");
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) throw bad("unclosed '['");
    host_ = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') throw bad("junk after ']'");
    if (!after.empty()) port_text = after.substr(1);
    if (!after.empty() && port_text.empty()) throw bad("empty port");
  } else {
    size_t colon = authority.find(':');
    host_ = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) throw bad("empty port");
    }
  }
  if (host_.empty()) throw bad("no host");
  port_ = 6379;
  if (!port_text.empty()) {
    if (!all_digits(port_text)) throw bad("port '" + std::string(port_text) + "' is not a number");
    port_ = std::stoi(std::string(port_text));
    if (port_ < 1 || port_ > 65535) throw bad("port " + std::to_string(port_) + " is out of range");
  }
  if (!path.empty()) {
    if (!all_digits(path)) throw bad("database '" + std::string(path) + "' is not a number");
    db_ = std::stoi(std::string(path));
  }

  // Connect now so a misconfigured Redis is reported at startup, not at the first request.
  std::lock_guard lock(mu_);
  std::string why;
  if (!connect(why)) redis_failed(why);
}

DecisionCache::~DecisionCache() {
  if (ctx_) redisFree(ctx_);
}

bool DecisionCache::connect(std::string& why) {
  // tv_usec must stay below 1e6: hiredis 0.14 rejects a timeval that is not normalised.
  const timeval tv{opt_.timeout_ms / 1000, static_cast<suseconds_t>((opt_.timeout_ms % 1000) * 1000)};
  redisContext* c = redisConnectWithTimeout(host_.c_str(), port_, tv);
  if (!c) {
    why = "cannot allocate a connection";
    return false;
  }
  // The connect timeout does not cover commands: without redisSetTimeout a Redis that accepts but
  // never answers would block the caller forever.
  if (c->err || redisSetTimeout(c, tv) != REDIS_OK) {
    why = context_error(c, opt_.timeout_ms);
    redisFree(c);
    return false;
  }
  ctx_ = c;
  // A reply (to SELECT, else PING) proves a Redis is answering, not merely that something accepted
  // the TCP connection.
  Reply r = db_ ? command(ctx_, {"SELECT", std::to_string(db_)}) : command(ctx_, {"PING"});
  if (!r) {
    why = context_error(ctx_, opt_.timeout_ms);
  } else if (r->type == REDIS_REPLY_ERROR) {
    why = std::string("error reply: ") + r->str;
  } else {
    return true;
  }
  redisFree(ctx_);
  ctx_ = nullptr;
  return false;
}

bool DecisionCache::redis_ready() {
  if (opt_.redis_url.empty()) return false;
  if (ctx_) return true;
  if (Clock::now() < retry_at_) return false;
  std::string why;
  if (!connect(why)) {
    redis_failed(why);
    return false;
  }
  if (in_outage_) std::fprintf(stderr, "decision cache: reconnected to redis at %s:%d\n", host_.c_str(), port_);
  in_outage_ = false;
  return true;
}

void DecisionCache::redis_failed(const std::string& why) {
  if (ctx_) redisFree(ctx_);
  ctx_ = nullptr;
  ++stats_.redis_errors;
  retry_at_ = Clock::now() + std::chrono::milliseconds(opt_.reconnect_after_ms);
  if (in_outage_) return;  // one line per outage, not per request
  in_outage_ = true;
  std::fprintf(stderr, "warning: decision cache: redis at %s:%d unavailable (%s); using the in-memory cache, retrying every %g s\n",
               host_.c_str(), port_, why.c_str(), opt_.reconnect_after_ms / 1000.0);
}

void DecisionCache::remember(uint64_t hash, const Decision& d) {
  if (auto it = index_.find(hash); it != index_.end()) {
    it->second->second = d;
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.emplace_front(hash, d);
  index_[hash] = lru_.begin();
  if (lru_.size() > opt_.capacity) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

std::optional<Decision> DecisionCache::get(uint64_t hash) {
  std::lock_guard lock(mu_);
  if (auto it = index_.find(hash); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);  // a hit makes it the most recently used
    ++stats_.hits;
    ++stats_.memory_hits;
    return it->second->second;
  }
  if (redis_ready()) {
    Reply r = command(ctx_, {"GET", redis_key(hash)});
    if (!r) {
      redis_failed(context_error(ctx_, opt_.timeout_ms));
    } else if (r->type == REDIS_REPLY_STRING) {
      // Someone else's bytes: anything that is not a well-formed decision is a miss, not a crash.
      auto j = nlohmann::json::parse(r->str, r->str + r->len, nullptr, false);
      try {
        if (!j.is_discarded()) {
          Decision d = Decision::from_json(j);
          remember(hash, d);
          ++stats_.hits;
          ++stats_.redis_hits;
          return d;
        }
      } catch (const InputError&) {
      }
      ++stats_.redis_errors;
    } else if (r->type == REDIS_REPLY_ERROR && std::strncmp(r->str, "WRONGTYPE", 9) == 0) {
      ++stats_.redis_errors;  // the key holds a list or a hash: a bad value, the connection is fine
    } else if (r->type == REDIS_REPLY_ERROR) {
      redis_failed(std::string("error reply: ") + r->str);
    }
  }
  ++stats_.misses;
  return std::nullopt;
}

void DecisionCache::put(uint64_t hash, const Decision& d) {
  std::lock_guard lock(mu_);
  remember(hash, d);
  ++stats_.puts;
  if (!redis_ready()) return;
  // replace: a reason with invalid UTF-8 must not make dump() throw in the middle of serving.
  std::string value = d.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  Reply r = command(ctx_, {"SET", redis_key(hash), value, "EX", std::to_string(opt_.ttl_s)});
  if (!r)
    redis_failed(context_error(ctx_, opt_.timeout_ms));
  else if (r->type == REDIS_REPLY_ERROR)
    redis_failed(std::string("error reply: ") + r->str);
}

DecisionCacheStats DecisionCache::stats() const {
  std::lock_guard lock(mu_);
  DecisionCacheStats s = stats_;
  s.redis_connected = ctx_ != nullptr;
  return s;
}

}  // namespace kvscope::reasoning
