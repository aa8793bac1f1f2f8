// The decision cache of adaptive fast/slow reasoning: which mode (fast/mixed/slow) a request got and
// why, keyed by a hash of what decides it. An in-process LRU serves every lookup it can; an optional
// Redis shares decisions between server processes. Redis is an optimisation, never a dependency:
// when it is down or slow, serving goes on from memory, with one warning per outage.
#pragma once
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/mode.h"

#include "redis/url.h"

namespace kvscope::redis {
class Connection;  // redis/connection.h (hiredis), kept out of this header so users need not its include path
}

namespace kvscope::reasoning {

struct Decision {
  Mode mode = Mode::Slow;
  double difficulty = 0;  // d in [0, 100]
  double confidence = 0;  // in [0, 1]
  std::string reason;     // why this mode, e.g. "d=12.0 <= 25", "confidence 0.41 < 0.60"

  nlohmann::json to_json() const;
  // Throws kvscope::InputError when j is not an object with these four fields in range.
  static Decision from_json(const nlohmann::json& j);
};

// 64-bit FNV-1a over what decides a request: the model's fingerprint, the prompt's token ids and a
// canonical string of the parameters that matter (the caller builds it). Integers are fed as
// little-endian bytes and each part is length-prefixed, so the value is the same on every platform
// and run, and ({1,2}, "3") cannot collide with ({1}, "23")-style shifts between the parts.
uint64_t request_hash(uint64_t model_fingerprint, const std::vector<int32_t>& prompt_tokens, std::string_view params);

struct DecisionCacheOptions {
  size_t capacity = 100;          // in-memory LRU entries (the last 100 decisions)
  std::string redis_url;          // "" = memory only; redis://[user:password@]host:port[/db] (redis/url.h)
  int ttl_s = 3600;               // TTL of every Redis key
  int timeout_ms = 50;            // connect and per-command timeout: a slow Redis must not stall serving
  int reconnect_after_ms = 5000;  // after a failure, do not touch Redis again for this long
};

struct DecisionCacheStats {
  uint64_t hits = 0, misses = 0, memory_hits = 0, redis_hits = 0, redis_errors = 0, puts = 0;
  bool redis_connected = false;  // a live, working connection right now
  std::string backend;           // "memory" (no URL given) | "redis" (a URL given, whether or not it is up)
};

// Thread-safe: one mutex guards everything, Redis calls included; each of those is bounded by
// timeout_ms, so a lookup never waits on Redis for more than a few timeouts.
class DecisionCache {
 public:
  // A bad URL or option -> InputError naming it. An unreachable Redis is not an error: warn, go on.
  explicit DecisionCache(DecisionCacheOptions o = {});
  ~DecisionCache();
  DecisionCache(const DecisionCache&) = delete;
  DecisionCache& operator=(const DecisionCache&) = delete;

  // Memory first, then Redis; a Redis hit is copied into memory.
  std::optional<Decision> get(uint64_t hash);
  // Memory always; Redis SET redis_key(hash) <json> EX ttl_s when Redis is up.
  void put(uint64_t hash, const Decision& d);
  DecisionCacheStats stats() const;
  // "kv_pattern:" + the hash as 16 lowercase hex digits.
  static std::string redis_key(uint64_t hash);

 private:
  using Clock = std::chrono::steady_clock;
  void remember(uint64_t hash, const Decision& d);  // insert or refresh in the LRU; evicts the oldest
  bool redis_ready();                               // connected, or reconnected now if the back-off is over
  void redis_failed(const std::string& why);        // drop the connection, back off, warn once per outage

  DecisionCacheOptions opt_;
  redis::Url url_;
  mutable std::mutex mu_;
  std::list<std::pair<uint64_t, Decision>> lru_;  // most recently used first
  std::unordered_map<uint64_t, std::list<std::pair<uint64_t, Decision>>::iterator> index_;
  std::unique_ptr<redis::Connection> conn_;  // null without a URL
  bool in_outage_ = false;  // the warning for the current outage has been printed
  Clock::time_point retry_at_{};
  DecisionCacheStats stats_;
};

}  // namespace kvscope::reasoning
