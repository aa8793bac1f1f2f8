// The shared KV tier: full prefix-cache blocks and pinned sessions kept in Redis, so replicas behind a
// router reuse each other's prefill work and a conversation survives the replica that held it (the
// role LMCache's Redis backend plays for vLLM).
//
//  - Writes are asynchronous: the engine's step thread only copies a newly published full block (or a
//    session's token list and partial tail block) into a bounded queue; one writer thread sends them.
//    A full queue drops writes (counted): the tier is a cache, never back-pressure on decoding.
//  - Reads happen on the HTTP thread before a request is submitted: the prompt's chained block hashes
//    are checked against the local prefix cache, and the leading blocks it lacks are fetched with one
//    MGET when that is estimated to be cheaper than recomputing them (measured fetch time per block vs
//    measured prefill time per token), verified, and put into the local prefix cache.
//  - Keys carry the model fingerprint and the KV layout (block size, per-layer K/V types), so replicas
//    of another model or KV type never read them; block keys carry the tenant's cache salt (which the
//    chained hash also includes) and every value repeats salt, hash and tokens, checked on read, so one
//    tenant's blocks are never served to another.
//  - Bounds: every key has a TTL (refreshed when read); block keys of one model/layout are also kept to
//    at most max_blocks in LRU order (a sorted set of last use, trimmed by the writer).
//  - Redis down or slow: every command is bounded by timeout_ms; a failure drops the connection,
//    serving goes on locally, one warning per outage, and reconnection is tried after a back-off.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "engine/engine.h"
#include "engine/kv_block_sink.h"
#include "redis/url.h"

namespace kvscope::redis {
class Connection;
}

namespace kvscope::kvtier {

// The tier's Redis URL (redis/url.h): redis://[user:password@]host[:port][/db].
using RedisUrl = redis::Url;

struct KvTierOptions {
  std::string url;                   // "": no tier
  int ttl_s = 3600;                  // TTL of every key (refreshed on read)
  int64_t max_blocks = 65536;        // block keys kept per model/KV layout (LRU beyond)
  int timeout_ms = 200;              // connect and per-read timeout
  int reconnect_after_ms = 2000;     // after a failure, Redis is left alone this long
  size_t queue_bytes = size_t{64} << 20;  // pending writes at most; more are dropped
  // Throws InputError on bad values or a bad URL.
  void validate() const;
};

struct KvTierStats {
  uint64_t blocks_written = 0, sessions_written = 0, writes_dropped = 0, bytes_written = 0;
  uint64_t fetches = 0, blocks_fetched = 0, bytes_fetched = 0, fetch_skipped = 0, blocks_missing = 0, bad_values = 0;
  uint64_t sessions_restored = 0, evicted = 0, errors = 0;
  uint64_t queued = 0;       // writes waiting now
  bool connected = false;
  double fetch_s_per_block = 0, prefill_s_per_token = 0;  // current estimates (0: none yet)
};


class KvTier final : public KVBlockSink {
 public:
  explicit KvTier(KvTierOptions o);  // validates; connects lazily (attach)
  ~KvTier() override;                // flushes briefly, detaches from the engine
  KvTier(const KvTier&) = delete;
  KvTier& operator=(const KvTier&) = delete;

  // Binds to an engine (its model fingerprint and KV layout name the keys) and starts the writer.
  void attach(Engine& e);
  void detach();

  // HTTP thread, before submitting: brings the prompt's leading full blocks that the local prefix
  // cache lacks in from Redis when cheaper than recomputing. Returns the prompt tokens it imported.
  // `computing` gets the estimate of prompt tokens left to compute (for watch_prefill).
  int prefetch(const std::vector<int32_t>& prompt, uint64_t salt, int* computing = nullptr);
  // HTTP thread: when the engine lacks session `key`, pins it from the tier (blocks from the prefix
  // keys, the partial tail from the session record). Returns the tokens pinned (0: none).
  int restore_session(const std::string& key);
  // Measures the request's time to first token as the prefill cost of `computing` tokens.
  void watch_prefill(Request& r, int computing);
  // Waits up to timeout_s for the write queue to drain (shutdown). True when drained.
  bool flush(double timeout_s);

  KvTierStats stats() const;
  std::string metrics_text() const;  // Prometheus lines (kvscope_kv_tier_*)
  const std::string& prefix() const { return ns_; }  // key prefix of this model/layout

  // KVBlockSink (step thread).
  void block_full(const PagedKVCache& kv, BlockId b, BlockHash hash, BlockHash parent, uint64_t salt, const int32_t* tokens,
                  int n_tokens) override;
  void session_pinned(const PagedKVCache& kv, const std::string& session_id, uint64_t salt, const BlockTable& table,
                      const std::vector<int32_t>& tokens) override;

  std::string block_key(uint64_t salt, BlockHash h) const;
  std::string session_key(const std::string& session_id) const;

 private:
  struct Job {
    enum Kind { Block, Session, Touch } kind = Block;
    std::string key, value;
    std::vector<std::string> touch;  // Touch: keys read, to refresh
  };
  using Clock = std::chrono::steady_clock;
  void writer_loop();
  void enqueue(Job j);
  bool remember_written(BlockHash h, uint64_t salt);  // false when already written recently
  // Both connections share the outage state: one warning per outage, whichever notices it.
  bool ready(redis::Connection& c);
  void failed(redis::Connection& c, const std::string& why);
  // Fetches values of keys (nullopt entries for misses); false when Redis is unavailable.
  bool mget(const std::vector<std::string>& keys, std::vector<std::string>& values, std::vector<bool>& found);
  std::string parse_block(const std::string& v, uint64_t salt, BlockHash h, BlockHash parent, const int32_t* tokens) const;
  // Brings blocks [from, hashes.size()) of a chain (tokens: the chain's token ids) in from Redis,
  // in chunks, each verified and imported before the next is asked for; stops at the first block the
  // tier lacks or refuses. Returns the leading blocks cached afterwards, -1 when Redis is unavailable.
  int fetch_chain(uint64_t salt, const std::vector<BlockHash>& hashes, const int32_t* tokens, int from);

  KvTierOptions opt_;
  RedisUrl url_;
  Engine* engine_ = nullptr;
  uint64_t fingerprint_ = 0, layout_ = 0;
  int block_size_ = 0;
  size_t block_bytes_ = 0;
  std::string ns_;

  std::unique_ptr<redis::Connection> reader_, writer_;
  std::mutex read_mu_;              // one fetch at a time on the reader connection
  mutable std::mutex outage_mu_;
  bool in_outage_ = false;
  Clock::time_point retry_at_{};

  mutable std::mutex q_mu_;
  std::condition_variable q_cv_, drained_cv_;
  std::deque<Job> queue_;
  size_t queued_bytes_ = 0;
  bool busy_ = false, stop_ = false;
  std::unordered_set<uint64_t> written_;  // recently written block keys (hash ^ salt mix)
  std::deque<uint64_t> written_order_;
  std::thread writer_thread_;
  int64_t since_trim_ = 0;

  mutable std::mutex est_mu_;
  double fetch_spb_ = 0, prefill_spt_ = 0;

  std::atomic<uint64_t> blocks_written_{0}, sessions_written_{0}, writes_dropped_{0}, bytes_written_{0}, fetches_{0},
      blocks_fetched_{0}, bytes_fetched_{0}, fetch_skipped_{0}, blocks_missing_{0}, bad_values_{0}, sessions_restored_{0},
      evicted_{0}, errors_{0};
};

}  // namespace kvscope::kvtier
