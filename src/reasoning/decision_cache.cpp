// Decision cache: an LRU in memory, Redis behind it. Every Redis failure (refused, timed out, error
// reply, dropped connection) is handled the same way: drop the connection, serve from memory, and do
// not touch Redis again until reconnect_after_ms has passed, so an outage costs one timeout per
// back-off period rather than one per request.
#include "reasoning/decision_cache.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>

#include "redis/connection.h"
#include "util/error.h"
#include "util/hash.h"

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

  url_ = redis::Url::parse(opt_.redis_url, "decision cache");
  conn_ = std::make_unique<redis::Connection>(url_, opt_.timeout_ms);

  // Connect now so a misconfigured Redis is reported at startup, not at the first request.
  std::lock_guard lock(mu_);
  std::string why;
  if (!conn_->connect(why)) redis_failed(why);
}

DecisionCache::~DecisionCache() = default;

bool DecisionCache::redis_ready() {
  if (opt_.redis_url.empty()) return false;
  if (conn_->up()) return true;
  if (Clock::now() < retry_at_) return false;
  std::string why;
  if (!conn_->connect(why)) {
    redis_failed(why);
    return false;
  }
  if (in_outage_) std::fprintf(stderr, "decision cache: reconnected to redis at %s\n", url_.display().c_str());
  in_outage_ = false;
  return true;
}

void DecisionCache::redis_failed(const std::string& why) {
  conn_->close();
  ++stats_.redis_errors;
  retry_at_ = Clock::now() + std::chrono::milliseconds(opt_.reconnect_after_ms);
  if (in_outage_) return;  // one line per outage, not per request
  in_outage_ = true;
  std::fprintf(stderr, "warning: decision cache: redis at %s unavailable (%s); using the in-memory cache, retrying every %g s\n",
               url_.display().c_str(), why.c_str(), opt_.reconnect_after_ms / 1000.0);
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
    std::string why;
    redis::Reply r = conn_->command({"GET", redis_key(hash)}, why);
    if (!r) {
      redis_failed(why);
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
  std::string why;
  redis::Reply r = conn_->command({"SET", redis_key(hash), value, "EX", std::to_string(opt_.ttl_s)}, why);
  if (!r)
    redis_failed(why);
  else if (r->type == REDIS_REPLY_ERROR)
    redis_failed(std::string("error reply: ") + r->str);
}

DecisionCacheStats DecisionCache::stats() const {
  std::lock_guard lock(mu_);
  DecisionCacheStats s = stats_;
  s.redis_connected = conn_ && conn_->up();
  return s;
}

}  // namespace kvscope::reasoning
