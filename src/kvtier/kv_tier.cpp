#include "kvtier/kv_tier.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "redis/connection.h"
#include "util/error.h"
#include "util/hash.h"

namespace kvscope::kvtier {

using redis::Reply;

namespace {

constexpr uint32_t kValueVersion = 1;
constexpr char kBlockMagic[4] = {'K', 'V', 'T', 'B'};
constexpr char kSessionMagic[4] = {'K', 'V', 'T', 'S'};

std::string hex(uint64_t v, int digits = 16) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%0*" PRIx64, digits, v);
  return buf;
}

struct Put {
  std::string s;
  template <class T>
  void put(T v) {
    const size_t at = s.size();
    s.resize(at + sizeof v);
    std::memcpy(s.data() + at, &v, sizeof v);
  }
  void bytes(const void* p, size_t n) {
    if (n) s.append(static_cast<const char*>(p), n);
  }
  void seal() { put(util::fnv1a(s.data(), s.size())); }
};

struct Get {
  const std::string& s;
  size_t off = 0;
  bool ok = true;
  template <class T>
  T get() {
    T v{};
    if (off + sizeof v > s.size()) {
      ok = false;
      return v;
    }
    std::memcpy(&v, s.data() + off, sizeof v);
    off += sizeof v;
    return v;
  }
  const char* take(size_t n) {
    if (off + n > s.size()) {
      ok = false;
      return nullptr;
    }
    const char* p = s.data() + off;
    off += n;
    return p;
  }
};

// The checksum at the end of a value matches what precedes it.
bool sealed(const std::string& v) {
  if (v.size() < 16) return false;
  uint64_t stored;
  std::memcpy(&stored, v.data() + v.size() - 8, 8);
  return util::fnv1a(v.data(), v.size() - 8) == stored;
}

}  // namespace

void KvTierOptions::validate() const {
  if (url.empty()) return;
  RedisUrl::parse(url, "kv tier");
  if (ttl_s <= 0) throw InputError("--kv-tier-ttl must be positive (it is " + std::to_string(ttl_s) + ")");
  if (max_blocks < 1) throw InputError("--kv-tier-max-blocks must be at least 1");
  if (timeout_ms <= 0) throw InputError("--kv-tier-timeout-ms must be positive");
  if (reconnect_after_ms < 0) throw InputError("kv tier: reconnect_after_ms must not be negative");
}

KvTier::KvTier(KvTierOptions o) : opt_(std::move(o)) {
  opt_.validate();
  if (opt_.url.empty()) throw InputError("kv tier: no redis URL");
  url_ = RedisUrl::parse(opt_.url, "kv tier");
  reader_ = std::make_unique<redis::Connection>(url_, opt_.timeout_ms);
  writer_ = std::make_unique<redis::Connection>(url_, opt_.timeout_ms);
}

KvTier::~KvTier() { detach(); }

void KvTier::attach(Engine& e) {
  if (e.swa_kv()) {
    // Sliding-window layers keep their own pool, whose blocks the tier does not carry.
    std::fprintf(stderr, "warning: kv tier: off for this model (sliding-window layers); start with --swa-full to share its KV\n");
    return;
  }
  engine_ = &e;
  const PagedKVCache& kv = e.kv();
  fingerprint_ = e.fingerprint();
  block_size_ = kv.block_size();
  block_bytes_ = kv.block_bytes();
  // The layout: what makes a block's bytes mean the same thing in another process.
  uint64_t h = util::kFnvOffset;
  util::fnv1a_int(h, static_cast<uint64_t>(block_size_));
  util::fnv1a_int(h, static_cast<uint64_t>(kv.n_layer()));
  util::fnv1a_int(h, static_cast<uint64_t>(kv.kv_dim()));
  util::fnv1a_int(h, block_bytes_);
  for (int l = 0; l < kv.n_layer(); ++l) {
    util::fnv1a_int(h, static_cast<uint64_t>(kv.k_type(l)), 4);
    util::fnv1a_int(h, static_cast<uint64_t>(kv.v_type(l)), 4);
  }
  layout_ = h;
  ns_ = "kvscope:kv:" + hex(fingerprint_) + ":" + hex(layout_ & 0xffffffffu, 8);
  {
    std::lock_guard lk(read_mu_);
    ready(*reader_);  // reports an unreachable Redis at startup, not at the first request
  }
  stop_ = false;
  writer_thread_ = std::thread([this] { writer_loop(); });
  e.set_block_sink(this);
}

void KvTier::detach() {
  if (!engine_) return;
  engine_->set_block_sink(nullptr);
  flush(2.0);
  {
    std::lock_guard lk(q_mu_);
    stop_ = true;
  }
  q_cv_.notify_all();
  if (writer_thread_.joinable()) writer_thread_.join();
  engine_ = nullptr;
}

std::string KvTier::block_key(uint64_t salt, BlockHash h) const { return ns_ + ":b:" + hex(salt) + ":" + hex(h); }

std::string KvTier::session_key(const std::string& id) const { return ns_ + ":s:" + hex(util::fnv1a(id)); }

bool KvTier::ready(redis::Connection& c) {
  if (c.up()) return true;
  {
    std::lock_guard lk(outage_mu_);
    if (Clock::now() < retry_at_) return false;
  }
  std::string why;
  if (!c.connect(why)) {
    failed(c, why);
    return false;
  }
  std::lock_guard lk(outage_mu_);
  if (in_outage_) std::fprintf(stderr, "kv tier: reconnected to redis at %s\n", url_.display().c_str());
  in_outage_ = false;
  return true;
}

void KvTier::failed(redis::Connection& c, const std::string& why) {
  c.close();
  errors_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lk(outage_mu_);
  retry_at_ = Clock::now() + std::chrono::milliseconds(opt_.reconnect_after_ms);
  if (in_outage_) return;  // one line per outage
  in_outage_ = true;
  std::fprintf(stderr, "warning: kv tier: redis at %s unavailable (%s); serving from the local cache, retrying every %g s\n",
               url_.display().c_str(), why.c_str(), opt_.reconnect_after_ms / 1000.0);
}

// ---- writes (step thread enqueues, writer thread sends) ----

bool KvTier::remember_written(BlockHash h, uint64_t salt) {
  const uint64_t k = h ^ (salt * 0x9e3779b97f4a7c15ULL);
  if (!written_.insert(k).second) return false;
  written_order_.push_back(k);
  if (written_order_.size() > (size_t{1} << 16)) {
    written_.erase(written_order_.front());
    written_order_.pop_front();
  }
  return true;
}

void KvTier::enqueue(Job j) {
  const size_t n = j.key.size() + j.value.size();
  {
    std::lock_guard lk(q_mu_);
    if (stop_ || queued_bytes_ + n > opt_.queue_bytes) {
      writes_dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    queued_bytes_ += n;
    queue_.push_back(std::move(j));
  }
  q_cv_.notify_one();
}

void KvTier::block_full(const PagedKVCache& kv, BlockId b, BlockHash hash, BlockHash parent, uint64_t salt,
                        const int32_t* tokens, int n_tokens) {
  {
    std::lock_guard lk(q_mu_);
    if (!remember_written(hash, salt)) return;
  }
  Job j;
  j.kind = Job::Block;
  j.key = block_key(salt, hash);
  Put p;
  p.s.reserve(64 + static_cast<size_t>(n_tokens) * 4 + block_bytes_ + 8);
  p.bytes(kBlockMagic, 4);
  p.put(kValueVersion);
  p.put(fingerprint_);
  p.put(layout_);
  p.put(salt);
  p.put(hash);
  p.put(parent);
  p.put(static_cast<uint32_t>(n_tokens));
  p.put(static_cast<uint32_t>(block_bytes_));
  p.bytes(tokens, static_cast<size_t>(n_tokens) * 4);
  const size_t at = p.s.size();
  p.s.resize(at + block_bytes_);
  kv.export_block(b, reinterpret_cast<uint8_t*>(p.s.data() + at));
  p.seal();
  j.value = std::move(p.s);
  enqueue(std::move(j));
}

void KvTier::session_pinned(const PagedKVCache& kv, const std::string& session_id, uint64_t salt, const BlockTable& table,
                            const std::vector<int32_t>& tokens) {
  const int n = static_cast<int>(tokens.size());
  const int full = n / block_size_;
  const bool has_tail = n % block_size_ != 0 && full < table.n_blocks() && table.blocks()[full] >= 0;
  Job j;
  j.kind = Job::Session;
  j.key = session_key(session_id);
  Put p;
  p.bytes(kSessionMagic, 4);
  p.put(kValueVersion);
  p.put(fingerprint_);
  p.put(layout_);
  p.put(salt);
  p.put(static_cast<uint32_t>(session_id.size()));
  p.bytes(session_id.data(), session_id.size());
  p.put(static_cast<uint32_t>(n));
  p.bytes(tokens.data(), static_cast<size_t>(n) * 4);
  p.put(static_cast<uint32_t>(has_tail ? block_bytes_ : 0));
  if (has_tail) {
    const size_t at = p.s.size();
    p.s.resize(at + block_bytes_);
    kv.export_block(table.blocks()[full], reinterpret_cast<uint8_t*>(p.s.data() + at));
    const auto st = kv.export_staging(table.blocks()[full]);
    p.put(static_cast<uint32_t>(st.size()));
    p.bytes(st.data(), st.size());
  } else {
    p.put(uint32_t{0});
  }
  p.seal();
  j.value = std::move(p.s);
  enqueue(std::move(j));
}

void KvTier::writer_loop() {
  const std::string lru = ns_ + ":lru", ttl = std::to_string(opt_.ttl_s);
  for (;;) {
    std::vector<Job> batch;
    size_t bytes = 0;
    {
      std::unique_lock lk(q_mu_);
      q_cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      while (!queue_.empty() && batch.size() < 64) {
        bytes += queue_.front().key.size() + queue_.front().value.size();
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      busy_ = true;
    }
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const std::string score = std::to_string(now);
    std::vector<std::vector<std::string>> cmds;
    int64_t n_blocks = 0;
    for (const Job& j : batch) {
      if (j.kind == Job::Touch) {
        for (const auto& k : j.touch) {
          cmds.push_back({"EXPIRE", k, ttl});
          cmds.push_back({"ZADD", lru, "XX", score, k});
        }
      } else {
        cmds.push_back({"SET", j.key, j.value, "EX", ttl});
        if (j.kind == Job::Block) cmds.push_back({"ZADD", lru, score, j.key}), ++n_blocks;
      }
    }
    bool ok = ready(*writer_);
    if (ok) {
      std::vector<Reply> rs;
      std::string why;
      ok = writer_->pipeline(cmds, rs, why);
      if (!ok) {
        failed(*writer_, why);
      } else {
        for (const auto& r : rs)
          if (r->type == REDIS_REPLY_ERROR) {
            ok = false;
            failed(*writer_, std::string("error reply: ") + r->str);
            break;
          }
      }
      // LRU bound: drop the least recently used block keys beyond max_blocks.
      // Checked every max_blocks/8 writes (1..64): the bound is overshot by at most that much.
      since_trim_ += n_blocks;
      if (ok && n_blocks > 0 && since_trim_ >= std::clamp<int64_t>(opt_.max_blocks / 8, 1, 64)) {
        since_trim_ = 0;
        std::vector<Reply> zr;
        if (writer_->pipeline({{"ZCARD", lru}}, zr, why) && zr[0]->type == REDIS_REPLY_INTEGER &&
            zr[0]->integer > opt_.max_blocks) {
          const int64_t excess = zr[0]->integer - opt_.max_blocks;
          std::vector<Reply> pr;
          if (writer_->pipeline({{"ZPOPMIN", lru, std::to_string(excess)}}, pr, why) && pr[0]->type == REDIS_REPLY_ARRAY) {
            std::vector<std::string> del = {"DEL"};
            for (size_t i = 0; i + 1 < pr[0]->elements; i += 2)
              del.emplace_back(pr[0]->element[i]->str, pr[0]->element[i]->len);
            std::vector<Reply> dr;
            if (del.size() > 1 && writer_->pipeline({del}, dr, why)) evicted_.fetch_add(del.size() - 1);
          }
        }
      }
    }
    for (const Job& j : batch) {
      if (!ok) {
        if (j.kind != Job::Touch) writes_dropped_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (j.kind == Job::Block) blocks_written_.fetch_add(1, std::memory_order_relaxed);
      if (j.kind == Job::Session) sessions_written_.fetch_add(1, std::memory_order_relaxed);
      if (j.kind != Job::Touch) bytes_written_.fetch_add(j.value.size(), std::memory_order_relaxed);
    }
    if (!ok) {
      // Forget what this batch claimed to have written, so a later publish can try again.
      std::lock_guard lk(q_mu_);
      written_.clear();
      written_order_.clear();
    }
    {
      std::lock_guard lk(q_mu_);
      queued_bytes_ -= bytes;
      busy_ = false;
    }
    drained_cv_.notify_all();
  }
}

bool KvTier::flush(double timeout_s) {
  std::unique_lock lk(q_mu_);
  return drained_cv_.wait_for(lk, std::chrono::duration<double>(timeout_s), [&] { return queue_.empty() && !busy_; });
}

// ---- reads (HTTP threads) ----

bool KvTier::mget(const std::vector<std::string>& keys, std::vector<std::string>& values, std::vector<bool>& found) {
  std::lock_guard lk(read_mu_);
  if (!ready(*reader_)) return false;
  std::vector<std::string> cmd = {"MGET"};
  cmd.insert(cmd.end(), keys.begin(), keys.end());
  std::vector<Reply> rs;
  std::string why;
  if (!reader_->pipeline({cmd}, rs, why)) {
    failed(*reader_, why);
    return false;
  }
  const redisReply* r = rs[0].get();
  if (r->type == REDIS_REPLY_ERROR) {
    failed(*reader_, std::string("error reply: ") + r->str);
    return false;
  }
  if (r->type != REDIS_REPLY_ARRAY || r->elements != keys.size()) return false;
  values.assign(keys.size(), {});
  found.assign(keys.size(), false);
  for (size_t i = 0; i < keys.size(); ++i)
    if (r->element[i]->type == REDIS_REPLY_STRING) {
      values[i].assign(r->element[i]->str, r->element[i]->len);
      found[i] = true;
    }
  return true;
}

// The block bytes of a value, or "" when it is not exactly the block expected here (another tenant,
// model, layout, position or token content; damaged).
std::string KvTier::parse_block(const std::string& v, uint64_t salt, BlockHash h, BlockHash parent, const int32_t* tokens) const {
  if (!sealed(v) || v.compare(0, 4, kBlockMagic, 4) != 0) return {};
  Get g{v, 4};
  if (g.get<uint32_t>() != kValueVersion || g.get<uint64_t>() != fingerprint_ || g.get<uint64_t>() != layout_ ||
      g.get<uint64_t>() != salt || g.get<uint64_t>() != h || g.get<uint64_t>() != parent ||
      g.get<uint32_t>() != static_cast<uint32_t>(block_size_) || g.get<uint32_t>() != block_bytes_)
    return {};
  const char* t = g.take(static_cast<size_t>(block_size_) * 4);
  if (!g.ok || std::memcmp(t, tokens, static_cast<size_t>(block_size_) * 4) != 0) return {};
  const char* b = g.take(block_bytes_);
  if (!g.ok || g.off + 8 != v.size()) return {};
  return std::string(b, block_bytes_);
}

int KvTier::fetch_chain(uint64_t salt, const std::vector<BlockHash>& hashes, const int32_t* tokens, int from) {
  // Chunks bound what one reply (and this thread) holds: 128 blocks, a few MiB for small models.
  constexpr int kChunk = 128;
  const int n = static_cast<int>(hashes.size());
  int cached = from;
  for (int pos = from; pos < n;) {
    const int end = std::min(n, pos + kChunk);
    std::vector<std::string> keys;
    for (int i = pos; i < end; ++i) keys.push_back(block_key(salt, hashes[i]));
    std::vector<std::string> values;
    std::vector<bool> found;
    const auto t0 = Clock::now();
    if (!mget(keys, values, found)) return pos == from ? -1 : cached;
    const double took = std::chrono::duration<double>(Clock::now() - t0).count();
    fetches_.fetch_add(1, std::memory_order_relaxed);
    std::vector<std::string> blocks;
    for (int i = pos; i < end; ++i) {
      const size_t k = static_cast<size_t>(i - pos);
      if (!found[k]) break;
      std::string b = parse_block(values[k], salt, hashes[i], i ? hashes[i - 1] : 0, tokens + static_cast<size_t>(i) * block_size_);
      if (b.empty()) {
        bad_values_.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      blocks.push_back(std::move(b));
    }
    const int got = static_cast<int>(blocks.size());
    blocks_missing_.fetch_add(static_cast<uint64_t>(end - pos - got), std::memory_order_relaxed);
    if (got == 0) break;
    {
      // Per block actually transferred (misses cost next to nothing and would flatter the estimate).
      std::lock_guard lk(est_mu_);
      const double spb = took / got;
      fetch_spb_ = fetch_spb_ > 0 ? 0.7 * fetch_spb_ + 0.3 * spb : spb;
    }
    std::vector<const uint8_t*> data(static_cast<size_t>(pos), nullptr);
    for (const auto& b : blocks) data.push_back(reinterpret_cast<const uint8_t*>(b.data()));
    const std::vector<BlockHash> chain(hashes.begin(), hashes.begin() + pos + got);
    const int now = std::max(cached, engine_->import_prefix_blocks(chain, data));
    const int imported = std::max(0, now - pos);
    blocks_fetched_.fetch_add(imported, std::memory_order_relaxed);
    bytes_fetched_.fetch_add(static_cast<uint64_t>(imported) * block_bytes_, std::memory_order_relaxed);
    if (imported > 0) {
      {
        std::lock_guard lk(q_mu_);
        for (int i = pos; i < now; ++i) remember_written(hashes[i], salt);  // already in the tier
      }
      Job t;
      t.kind = Job::Touch;  // refresh their TTL and LRU position
      t.touch.assign(keys.begin(), keys.begin() + imported);
      enqueue(std::move(t));
    }
    cached = now;
    if (now < pos + got || got < end - pos) break;
    pos = end;
  }
  return cached;
}

int KvTier::prefetch(const std::vector<int32_t>& prompt, uint64_t salt, int* computing) {
  const int len = static_cast<int>(prompt.size());
  if (computing) *computing = len;
  if (!engine_ || block_size_ <= 0) return 0;
  const int n_full = len / block_size_;
  if (n_full == 0) return 0;
  std::vector<BlockHash> hashes(n_full);
  for (int i = 0; i < n_full; ++i)
    hashes[i] = hash_block(i ? hashes[i - 1] : 0, prompt.data() + static_cast<size_t>(i) * block_size_, block_size_, salt);
  const int local = engine_->cached_prefix_blocks(hashes);
  if (computing) *computing = len - std::min(local * block_size_, len - 1);
  if (local == n_full) return 0;
  {
    // Fetch only when it is expected to beat recomputing (without a measurement of either yet, try).
    // One skipped fetch in 16 is made anyway, so a stale estimate (a busy moment) gets corrected.
    std::lock_guard lk(est_mu_);
    if (fetch_spb_ > 0 && prefill_spt_ > 0 && fetch_spb_ >= prefill_spt_ * block_size_ &&
        fetch_skipped_.fetch_add(1, std::memory_order_relaxed) % 16 != 15)
      return 0;
  }
  const int now_cached = fetch_chain(salt, hashes, prompt.data(), local);
  if (now_cached <= local) return 0;
  if (computing) *computing = len - std::min(now_cached * block_size_, len - 1);
  // The last prompt token is always recomputed.
  return std::min(now_cached * block_size_, len - 1) - std::min(local * block_size_, len - 1);
}

int KvTier::restore_session(const std::string& id) {
  if (!engine_ || engine_->has_session(id)) return 0;
  std::vector<std::string> values;
  std::vector<bool> found;
  const std::string key = session_key(id);
  if (!mget({key}, values, found) || !found[0]) return 0;
  const std::string& v = values[0];
  if (!sealed(v) || v.compare(0, 4, kSessionMagic, 4) != 0) return bad_values_.fetch_add(1), 0;
  Get g{v, 4};
  if (g.get<uint32_t>() != kValueVersion || g.get<uint64_t>() != fingerprint_ || g.get<uint64_t>() != layout_)
    return bad_values_.fetch_add(1), 0;
  const uint64_t salt = g.get<uint64_t>();
  const uint32_t id_len = g.get<uint32_t>();
  const char* idp = g.take(id_len);
  if (!g.ok || std::string(idp, id_len) != id) return bad_values_.fetch_add(1), 0;  // a hash collision, not ours
  const uint32_t n = g.get<uint32_t>();
  const char* tp = g.ok && n <= v.size() / 4 ? g.take(static_cast<size_t>(n) * 4) : nullptr;
  if (!tp) return bad_values_.fetch_add(1), 0;
  std::vector<int32_t> tokens(n);
  if (n) std::memcpy(tokens.data(), tp, static_cast<size_t>(n) * 4);
  const uint32_t tail_len = g.get<uint32_t>();
  if (tail_len != 0 && tail_len != block_bytes_) return bad_values_.fetch_add(1), 0;
  const char* tail = tail_len ? g.take(tail_len) : nullptr;
  const uint32_t st_len = g.get<uint32_t>();
  const char* st = g.take(st_len);
  if (!g.ok || g.off + 8 != v.size()) return bad_values_.fetch_add(1), 0;
  std::vector<uint8_t> staging(st, st + st_len);
  // The full blocks are prefix blocks: bring in the ones this replica lacks.
  const int n_full = static_cast<int>(n) / block_size_;
  std::vector<BlockHash> hashes(n_full);
  for (int i = 0; i < n_full; ++i)
    hashes[i] = hash_block(i ? hashes[i - 1] : 0, tokens.data() + static_cast<size_t>(i) * block_size_, block_size_, salt);
  int cached = engine_->cached_prefix_blocks(hashes);
  if (cached < n_full) cached = std::max(cached, fetch_chain(salt, hashes, tokens.data(), cached));
  hashes.resize(cached);
  const bool whole = cached == n_full;
  const int pinned = engine_->install_session(id, std::move(tokens), hashes,
                                              whole && tail ? reinterpret_cast<const uint8_t*>(tail) : nullptr, staging);
  if (pinned > 0) sessions_restored_.fetch_add(1);
  return pinned;
}

void KvTier::watch_prefill(Request& r, int computing) {
  if (computing < 4 * block_size_) return;  // too short to say anything about the prefill rate
  auto inner = std::move(r.on_token);
  auto seen = std::make_shared<bool>(false);
  const auto t0 = Clock::now();
  r.on_token = [this, inner = std::move(inner), seen, t0, computing](const TokenEvent& e) {
    if (!*seen && !e.finished) {
      *seen = true;
      const double spt = std::chrono::duration<double>(Clock::now() - t0).count() / computing;
      std::lock_guard lk(est_mu_);
      prefill_spt_ = prefill_spt_ > 0 ? 0.7 * prefill_spt_ + 0.3 * spt : spt;
    }
    if (inner) inner(e);
  };
}

KvTierStats KvTier::stats() const {
  KvTierStats s;
  s.blocks_written = blocks_written_.load();
  s.sessions_written = sessions_written_.load();
  s.writes_dropped = writes_dropped_.load();
  s.bytes_written = bytes_written_.load();
  s.fetches = fetches_.load();
  s.blocks_fetched = blocks_fetched_.load();
  s.bytes_fetched = bytes_fetched_.load();
  s.fetch_skipped = fetch_skipped_.load();
  s.blocks_missing = blocks_missing_.load();
  s.bad_values = bad_values_.load();
  s.sessions_restored = sessions_restored_.load();
  s.evicted = evicted_.load();
  s.errors = errors_.load();
  {
    std::lock_guard lk(q_mu_);
    s.queued = queue_.size() + (busy_ ? 1 : 0);
  }
  {
    std::lock_guard lk(outage_mu_);
    s.connected = !in_outage_;
  }
  {
    std::lock_guard lk(est_mu_);
    s.fetch_s_per_block = fetch_spb_;
    s.prefill_s_per_token = prefill_spt_;
  }
  return s;
}

std::string KvTier::metrics_text() const {
  const KvTierStats s = stats();
  std::string out;
  auto line = [&](const char* name, const char* type, const char* help, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + buf + "\n";
  };
  line("kvscope_kv_tier_up", "gauge", "1 while the KV tier's Redis answers (0: in an outage).", s.connected ? 1 : 0);
  line("kvscope_kv_tier_blocks_written_total", "counter", "Full KV blocks written to the tier.", double(s.blocks_written));
  line("kvscope_kv_tier_sessions_written_total", "counter", "Pinned sessions written to the tier.", double(s.sessions_written));
  line("kvscope_kv_tier_writes_dropped_total", "counter", "Tier writes dropped (queue full or Redis unavailable).",
       double(s.writes_dropped));
  line("kvscope_kv_tier_write_bytes_total", "counter", "Bytes written to the tier.", double(s.bytes_written));
  line("kvscope_kv_tier_pending_writes", "gauge", "Tier writes queued and not yet sent.", double(s.queued));
  line("kvscope_kv_tier_fetches_total", "counter", "Fetches from the tier on a local prefix-cache miss.", double(s.fetches));
  line("kvscope_kv_tier_blocks_fetched_total", "counter", "KV blocks brought in from the tier.", double(s.blocks_fetched));
  line("kvscope_kv_tier_fetch_bytes_total", "counter", "Bytes brought in from the tier.", double(s.bytes_fetched));
  line("kvscope_kv_tier_fetches_skipped_total", "counter", "Local misses recomputed because that was estimated cheaper.",
       double(s.fetch_skipped));
  line("kvscope_kv_tier_blocks_missing_total", "counter", "Blocks asked of the tier that it did not have.", double(s.blocks_missing));
  line("kvscope_kv_tier_bad_values_total", "counter", "Tier values refused (damaged, or not the block asked for).",
       double(s.bad_values));
  line("kvscope_kv_tier_sessions_restored_total", "counter", "Sessions pinned from the tier.", double(s.sessions_restored));
  line("kvscope_kv_tier_evicted_total", "counter", "Block keys this replica evicted from the tier (LRU bound).", double(s.evicted));
  line("kvscope_kv_tier_errors_total", "counter", "Redis failures of the tier (each starts or extends an outage).", double(s.errors));
  line("kvscope_kv_tier_fetch_seconds_per_block", "gauge", "Estimated tier fetch time of one block.", s.fetch_s_per_block);
  line("kvscope_kv_tier_prefill_seconds_per_token", "gauge", "Estimated local prefill time of one token.", s.prefill_s_per_token);
  return out;
}

}  // namespace kvscope::kvtier
