// Continuous batching over the paged KV cache (vLLM-style): each step has a token budget; running
// sequences are served first (decode tokens, then the remaining chunks of their prefill), waiting
// ones are admitted while blocks and budget allow, and when the pool runs out the latest-arrived
// running sequence is preempted (its blocks freed, recomputed later). Full blocks are published by
// chained hash, so a new request reuses every cached full block of its prompt. One step is one
// BatchedForward call: one matmul per weight matrix for all scheduled tokens.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/batched_forward.h"
#include "engine/kv_block_sink.h"
#include "engine/session_file.h"
#include "engine/request.h"
#include "kernels/threadpool.h"
#include "kvcache/block_table.h"
#include "kvcache/kv_type_map.h"
#include "kvcache/paged_kv_cache.h"
#include "model/model.h"
#include "sampling/sampler.h"

namespace kvscope {

struct EngineParams {
  int n_threads = 0;          // 0: hardware concurrency
  int n_ctx = 0;              // per-sequence context; 0: the model's training context
  int n_blocks = 0;           // KV pool size in blocks; 0: from kv_mem_bytes
  size_t kv_mem_bytes = size_t{256} << 20;
  int block_size = 16;
  KVCacheTypes kv_type = {};  // K/V element types per layer (default F32)
  int max_batch_tokens = 256;  // token budget per step (decode tokens + prefill chunks)
  int max_seqs = 64;           // running sequences at most
  bool prefix_caching = true;
  double session_idle_s = 300;  // a session's pinned blocks are dropped after this long unused
  // Keep every position of the sliding-window layers (llama.cpp's --swa-full). Otherwise a model
  // with both sliding and global layers keeps the sliding layers in a second pool, and each
  // sequence releases their blocks as they leave the window.
  bool swa_full = false;
};

struct EngineStats {
  BlockPoolStats blocks;
  BlockPoolStats swa_blocks;  // the sliding-window pool (all zero without one)
  int block_size = 0;
  size_t kv_bytes = 0, bytes_per_token = 0;
  int running = 0, waiting = 0, sessions = 0;
  uint64_t steps = 0, preemptions = 0, generated_tokens = 0, prompt_tokens_computed = 0, prompt_tokens_cached = 0;
  // Allocated-but-unused token slots of running sequences over allocated slots, summed over steps.
  uint64_t slots_allocated = 0, slots_used = 0;
  double kv_waste() const { return slots_allocated ? 1.0 - double(slots_used) / double(slots_allocated) : 0.0; }
};

class Engine {
 public:
  Engine(const Model& model, EngineParams p);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request; throws InputError (empty prompt, bad ids or params) or LimitError (prompt
  // longer than a sequence may be). Thread-safe.
  RequestId submit(Request r);
  // Stops a request at the next step; its final event has stop_reason "cancelled". Thread-safe.
  void cancel(RequestId id);
  // Blocks until the request finished and returns its result (once). Without the background loop
  // it drives step() itself. Throws InputError for unknown ids.
  Completion wait(RequestId id);

  // One scheduling step on the calling thread; false when there was nothing to do.
  bool step();
  // The background step loop.
  void start();
  void stop();

  // Sessions (thread-safe). save writes the pinned history of a session to a file; restore loads
  // one (refusing files of another model, version or layout, or damaged ones, with InputError).
  // secret keys the file's HMAC (session_file.h). The step lock is held only while blocks are
  // copied out or in: file I/O and verification run outside it, so a slow file stalls no step.
  void save_session(const std::string& session_id, const std::string& path, const std::string& secret = "");
  void restore_session(const std::string& session_id, const std::string& path, const std::string& secret = "",
                       size_t max_bytes = kDefaultSessionMaxBytes);
  // The parts of save and restore, for callers that do their own file handling (the server):
  // the file's bytes (nullopt: no such session); a verified image; and pinning an image.
  std::optional<std::vector<uint8_t>> export_session(const std::string& session_id, const std::string& secret);
  SessionImage verify_session(std::vector<uint8_t> bytes, const std::string& secret) const;
  void import_session(const std::string& session_id, const SessionImage& img);
  void drop_session(const std::string& session_id);
  bool has_session(const std::string& session_id);

  // The KV tier (src/kvtier/): set before start(); sees every newly published full block and every
  // pinned session on the step thread. nullptr: none. Blocks are kv()'s: with a sliding-window pool
  // (swa_kv() non-null) importing and installing are refused (return 0).
  void set_block_sink(KVBlockSink* sink);
  // How many leading hashes of a prompt's chained block hashes the prefix cache holds now.
  int cached_prefix_blocks(const std::vector<BlockHash>& hashes);
  // Puts blocks fetched from elsewhere into the prefix cache as reusable (unreferenced) blocks:
  // data[i] (kv().block_bytes() bytes, or nullptr when the block is already cached) under
  // hashes[i], in order, stopping at the first that is neither cached nor given or when the pool
  // would have to evict more than it frees. Returns how many leading hashes are cached afterwards.
  int import_prefix_blocks(const std::vector<BlockHash>& hashes, const std::vector<const uint8_t*>& data);
  // Pins a session rebuilt from cached full blocks (full_hashes, which import_prefix_blocks put in
  // the prefix cache) plus an optional partial tail block (tail: block bytes, or nullptr). When a
  // full block is no longer cached the session is cut before it (and the tail dropped). Returns the
  // number of tokens pinned (0: none, nothing changed).
  int install_session(const std::string& session_id, std::vector<int32_t> tokens, const std::vector<BlockHash>& full_hashes,
                      const uint8_t* tail, const std::vector<uint8_t>& tail_staging);
  const PagedKVCache& kv() const { return *kv_; }
  uint64_t fingerprint() const { return fingerprint_; }

  EngineStats stats() const;
  // The sliding-window layers' own pool, when the model has one (for memory reports).
  const PagedKVCache* swa_kv() const { return swa_kv_.get(); }
  const Model& model() const { return model_; }
  int max_seq_tokens() const { return limit_; }

 private:
  struct Seq;
  void admit_incoming();
  void apply_cancels();
  // Returns whether it had to preempt.
  bool schedule_running(std::vector<std::pair<Seq*, int>>& plan, int& budget);
  void schedule_waiting(std::vector<std::pair<Seq*, int>>& plan, int& budget);
  int attach_prefix(Seq& s);
  // With a sliding-window pool: attaches the cached window blocks a prefix of `hits` full blocks
  // needs, and returns how many of those blocks can be used (the rest are released).
  int attach_window(Seq& s, int hits);
  void release_window(Seq& s);
  bool prepare(Seq& s, int begin, int end);
  void replay_cached(Seq& s, int n);
  void preempt(Seq* s);
  void publish_hashes(Seq& s);
  void finish(Seq* s, StopReason reason, std::vector<TokenEvent>& events);
  void loop();
  int adopt_session(Seq& s);
  bool evict_one_session();
  void expire_sessions();
  void publish_stats(uint64_t slots_allocated, uint64_t slots_used);  // step thread, takes mu_

  struct Session {
    BlockTable table, swa_table;
    std::vector<int32_t> tokens;  // positions whose K/V the table holds
    std::chrono::steady_clock::time_point last_used;
  };

  const Model& model_;
  EngineParams p_;
  int limit_ = 0;
  std::unique_ptr<kernels::ThreadPool> pool_;
  std::unique_ptr<PagedKVCache> kv_;
  std::unique_ptr<PagedKVCache> swa_kv_;  // the sliding-window layers' pool (null: kv_ holds every layer)
  std::unique_ptr<BatchedForward> fwd_;

  // Owned by the stepping thread (step_mu_).
  std::mutex step_mu_;
  std::map<RequestId, std::unique_ptr<Seq>> seqs_;
  std::deque<Seq*> running_;  // arrival order: front has the highest priority
  std::deque<Seq*> waiting_;  // arrival order
  std::vector<float> logits_;
  std::map<std::string, Session> sessions_;
  uint64_t fingerprint_ = 0;
  KVBlockSink* sink_ = nullptr;

  // Shared with submitters (mu_).
  mutable std::mutex mu_;
  std::condition_variable cv_;       // work arrived / stop
  std::condition_variable done_cv_;  // a request finished
  std::vector<std::unique_ptr<Seq>> incoming_;
  std::set<RequestId> cancels_;
  std::map<RequestId, Completion> done_;
  std::set<RequestId> live_;
  RequestId next_id_ = 1;
  EngineStats stats_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace kvscope
