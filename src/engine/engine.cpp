#include "engine/engine.h"

#include <algorithm>

#include "engine/session_file.h"
#include "model/fingerprint.h"
#include "util/error.h"

namespace kvscope {

namespace {
// Session files hold one pool's blocks; a sliding-window pool's released blocks cannot be written.
const char* const kSwaSessionError =
    "session files of a model with sliding-window layers need the full cache: start the server with --swa-full";
}  // namespace

struct Engine::Seq {
  Seq(RequestId i, Request r) : id(i), req(std::move(r)), sampler(req.sampling) {}
  RequestId id;
  Request req;
  Sampler sampler;
  std::vector<int32_t> tokens;     // prompt + generated; the last one may still lack K/V
  int n_prompt = 0;
  int n_computed = 0;              // leading positions whose K/V are in the table's blocks
  int n_generated = 0;
  int n_published = 0;             // leading full blocks whose hash is registered in the pool
  int n_cached = 0, n_preempted = 0;
  std::vector<BlockHash> hashes;   // chained hashes of the full blocks of `tokens`
  BlockTable table;
  BlockTable swa_table;  // the sliding-window layers' blocks (with a sliding-window pool)
  bool running = false;

  BlockHash hash_of_block(int i, int bs) {
    while (static_cast<int>(hashes.size()) <= i) {
      const int b = static_cast<int>(hashes.size());
      hashes.push_back(hash_block(b ? hashes[b - 1] : 0, tokens.data() + static_cast<size_t>(b) * bs, bs, req.cache_salt));
    }
    return hashes[i];
  }
};

Engine::Engine(const Model& model, EngineParams p) : model_(model), p_(p) {
  const HParams& hp = model.hparams();
  if (p_.max_batch_tokens < 1 || p_.max_seqs < 1 || p_.block_size < 1 || p_.n_ctx < 0)
    throw InputError("engine: token budget, sequence limit, block size must be positive");
  const int threads = p_.n_threads > 0 ? p_.n_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  pool_ = std::make_unique<kernels::ThreadPool>(threads);
  const PagedKVConfig all = kv_config_for(hp, p_.n_blocks, p_.kv_mem_bytes, p_.kv_type, p_.block_size);
  int n_swa_layers = 0;
  for (int l = 0; l < hp.n_layer; ++l) n_swa_layers += hp.is_swa(l);
  if (!p_.swa_full && n_swa_layers > 0 && n_swa_layers < hp.n_layer) {
    // Sliding layers in their own pool: a sequence holds at most its window plus one step's chunk
    // there, so the budget mostly goes to the global layers, whose blocks every position keeps.
    const int bs = p_.block_size;
    const int per_seq = (hp.n_swa + p_.max_batch_tokens + bs - 1) / bs + 2;
    const PagedKVConfig g = kv_config_part(hp, all, false, 1), w = kv_config_part(hp, all, true, 1);
    const size_t kvd = static_cast<size_t>(hp.n_kv_dim());
    auto block_bytes = [&](const PagedKVConfig& c) {
      return PagedKVCache::bytes_per_token(static_cast<int>(kvd), c.kv_types, bs) * static_cast<size_t>(bs);
    };
    const size_t all_block = block_bytes(g) + block_bytes(w);
    const int n_all = p_.n_blocks > 0 ? p_.n_blocks : static_cast<int>(std::max<size_t>(1, p_.kv_mem_bytes / all_block));
    const int n_swa = static_cast<int>(std::min<int64_t>(n_all, int64_t(p_.max_seqs) * per_seq));
    const int n_global = p_.n_blocks > 0 ? p_.n_blocks
                                         : static_cast<int>(std::max<size_t>(
                                               n_all, (p_.kv_mem_bytes - size_t(n_swa) * block_bytes(w)) / block_bytes(g)));
    kv_ = std::make_unique<PagedKVCache>(kv_config_part(hp, all, false, n_global));
    swa_kv_ = std::make_unique<PagedKVCache>(kv_config_part(hp, all, true, n_swa));
  } else {
    kv_ = std::make_unique<PagedKVCache>(all);
  }
  // A sequence may grow to the context or to the whole pool, whichever is smaller, so a lone
  // sequence always fits and preemption always makes progress.
  limit_ = std::min(p_.n_ctx > 0 ? p_.n_ctx : hp.n_ctx_train, kv_->n_blocks() * kv_->block_size());
  fwd_ = std::make_unique<BatchedForward>(model, *kv_, *pool_, limit_, swa_kv_.get());
  stats_.block_size = kv_->block_size();
  stats_.kv_bytes = kv_->bytes() + (swa_kv_ ? swa_kv_->bytes() : 0);
  stats_.bytes_per_token = kv_->bytes_per_token() + (swa_kv_ ? swa_kv_->bytes_per_token() : 0);
  stats_.blocks = kv_->pool().stats();
  if (swa_kv_) stats_.swa_blocks = swa_kv_->pool().stats();
  fingerprint_ = model_fingerprint(model);
}

Engine::~Engine() {
  stop();
  for (auto& [id, s] : seqs_) {
    s->table.release_all(kv_->pool());
    if (swa_kv_) s->swa_table.release_all(swa_kv_->pool());
  }
  for (auto& [id, ss] : sessions_) {
    ss.table.release_all(kv_->pool());
    if (swa_kv_) ss.swa_table.release_all(swa_kv_->pool());
  }
}

RequestId Engine::submit(Request r) {
  const HParams& hp = model_.hparams();
  if (r.prompt.empty()) throw InputError("empty prompt");
  if (r.max_tokens < 0) throw InputError("max tokens must be >= 0");
  r.sampling.validate();
  for (int32_t t : r.prompt)
    if (t < 0 || t >= hp.n_vocab)
      throw InputError("token id " + std::to_string(t) + " out of range (vocabulary has " + std::to_string(hp.n_vocab) + ")");
  if (static_cast<int64_t>(r.prompt.size()) > limit_)
    throw LimitError("prompt too long: " + std::to_string(r.prompt.size()) + " tokens exceed the context of " +
                     std::to_string(limit_));
  std::lock_guard lk(mu_);
  const RequestId id = next_id_++;
  auto s = std::make_unique<Seq>(id, std::move(r));
  s->tokens = s->req.prompt;
  s->n_prompt = static_cast<int>(s->tokens.size());
  incoming_.push_back(std::move(s));
  live_.insert(id);
  cv_.notify_all();
  return id;
}

void Engine::cancel(RequestId id) {
  std::lock_guard lk(mu_);
  if (live_.count(id)) cancels_.insert(id);
  cv_.notify_all();
}

Completion Engine::wait(RequestId id) {
  std::unique_lock lk(mu_);
  for (;;) {
    if (auto it = done_.find(id); it != done_.end()) {
      Completion c = std::move(it->second);
      done_.erase(it);
      return c;
    }
    if (!live_.count(id)) throw InputError("unknown request id " + std::to_string(id));
    if (thread_.joinable()) {
      done_cv_.wait(lk);
    } else {
      lk.unlock();
      step();
      lk.lock();
    }
  }
}

void Engine::admit_incoming() {
  std::vector<std::unique_ptr<Seq>> in;
  {
    std::lock_guard lk(mu_);
    in.swap(incoming_);
  }
  std::vector<TokenEvent> ev;
  for (auto& s : in) {
    Seq* q = s.get();
    seqs_[q->id] = std::move(s);
    if (q->req.max_tokens == 0)
      finish(q, StopReason::Length, ev);
    else
      waiting_.push_back(q);
  }
}

void Engine::finish(Seq* s, StopReason reason, std::vector<TokenEvent>& events) {
  if (!s->req.session_id.empty() && reason != StopReason::Cancelled && s->n_computed > 0) {
    // Pin the history for the next turn (replacing an older, unused state of the same session).
    Session& ss = sessions_[s->req.session_id];
    ss.table.release_all(kv_->pool());
    ss.table = std::move(s->table);
    if (swa_kv_) {
      ss.swa_table.release_all(swa_kv_->pool());
      ss.swa_table = std::move(s->swa_table);
    }
    ss.tokens.assign(s->tokens.begin(), s->tokens.begin() + s->n_computed);
    ss.last_used = std::chrono::steady_clock::now();
    if (sink_) sink_->session_pinned(*kv_, s->req.session_id, s->req.cache_salt, ss.table, ss.tokens);
  }
  // Freed blocks keep their hashes: they stay reusable by later prompts until evicted (LRU).
  s->table.release_all(kv_->pool());
  if (swa_kv_) s->swa_table.release_all(swa_kv_->pool());
  auto drop = [s](std::deque<Seq*>& q) { q.erase(std::remove(q.begin(), q.end(), s), q.end()); };
  drop(running_);
  drop(waiting_);
  Completion c;
  c.tokens.assign(s->tokens.begin() + s->n_prompt, s->tokens.begin() + s->n_prompt + s->n_generated);
  c.stop_reason = reason;
  c.n_prompt = s->n_prompt;
  c.n_cached = s->n_cached;
  c.n_preempted = s->n_preempted;
  TokenEvent ev{s->id, -1, true, reason};
  if (s->req.on_token) s->req.on_token(ev);
  events.push_back(ev);
  {
    std::lock_guard lk(mu_);
    done_[s->id] = std::move(c);
    live_.erase(s->id);
    cancels_.erase(s->id);
    done_cv_.notify_all();
  }
  seqs_.erase(s->id);
}

void Engine::apply_cancels() {
  std::set<RequestId> c;
  {
    std::lock_guard lk(mu_);
    c = cancels_;
  }
  std::vector<TokenEvent> ev;
  for (RequestId id : c)
    if (auto it = seqs_.find(id); it != seqs_.end()) finish(it->second.get(), StopReason::Cancelled, ev);
}

void Engine::preempt(Seq* s) {
  // Recompute instead of swap: drop the blocks (their full ones stay cached, so re-admission often
  // gets them back from the prefix cache) and requeue in arrival order.
  s->table.release_all(kv_->pool());
  if (swa_kv_) s->swa_table.release_all(swa_kv_->pool());
  s->n_computed = 0;
  s->n_published = 0;
  s->running = false;
  ++s->n_preempted;
  ++stats_.preemptions;
  running_.erase(std::remove(running_.begin(), running_.end(), s), running_.end());
  auto pos = std::find_if(waiting_.begin(), waiting_.end(), [s](Seq* w) { return w->id > s->id; });
  waiting_.insert(pos, s);
}

int Engine::attach_prefix(Seq& s) {
  const int bs = kv_->block_size();
  const int len = static_cast<int>(s.tokens.size());
  if (!p_.prefix_caching) return 0;
  int hits = 0;
  for (int i = 0; i < len / bs; ++i) {
    auto b = kv_->pool().lookup(s.hash_of_block(i, bs));
    if (!b) break;
    s.table.append_owned(*b);
    ++hits;
  }
  if (swa_kv_) hits = attach_window(s, hits);
  s.n_published = hits;
  // The last prompt token is always recomputed: its logits are needed to sample.
  return std::min(hits * bs, len - 1);
}

int Engine::attach_window(Seq& s, int hits) {
  const int bs = kv_->block_size(), window = model_.hparams().n_swa;
  // A sequence that reads its cached prefix back through a tap needs every position of it, and the
  // sliding layers keep only a window: such a request recomputes its prompt.
  if (s.req.tap && s.req.tap_cached_prefix) hits = 0;
  // The next position after j cached blocks sees [j*bs - window + 1, j*bs): all of those blocks
  // must still be in the sliding-window pool's cache. The longest usable prefix wins.
  // run[i]: how many blocks up to and including i are cached in an unbroken run (one lookup each).
  std::vector<int> run(static_cast<size_t>(hits));
  for (int i = 0; i < hits; ++i) run[i] = swa_kv_->pool().contains(s.hash_of_block(i, bs)) ? (i ? run[i - 1] : 0) + 1 : 0;
  int use = hits;
  for (; use > 0; --use)
    if (run[use - 1] >= use - std::max(0, use * bs - window + 1) / bs) break;
  if (use > 0) {
    const int first = std::max(0, use * bs - window + 1) / bs;
    for (int i = 0; i < first; ++i) s.swa_table.append_released();
    for (int i = first; i < use; ++i) s.swa_table.append_owned(*swa_kv_->pool().lookup(s.hash_of_block(i, bs)));
  }
  s.table.truncate(kv_->pool(), use * bs, bs);
  return use;
}

void Engine::release_window(Seq& s) {
  // The next position (n_computed) sees [n_computed - window + 1, n_computed]: blocks wholly
  // before that go back to the pool, keeping their hashes so a later prompt can still find them.
  const int first = s.n_computed - model_.hparams().n_swa + 1;
  if (first > 0) s.swa_table.release_front(swa_kv_->pool(), first / swa_kv_->block_size());
}

bool Engine::prepare(Seq& s, int begin, int end) {
  if (!s.table.prepare(*kv_, begin, end)) return false;
  return !swa_kv_ || s.swa_table.prepare(*swa_kv_, begin, end);
}

bool Engine::schedule_running(std::vector<std::pair<Seq*, int>>& plan, int& budget) {
  bool preempted = false;
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Seq* s = running_[i];
    const int n = std::min(static_cast<int>(s->tokens.size()) - s->n_computed, budget);
    bool self_preempted = false;
    while (!prepare(*s, s->n_computed, s->n_computed + n)) {
      if (evict_one_session()) continue;  // idle pinned history goes before running work
      Seq* victim = running_.back();  // lowest priority: the latest arrival
      preempt(victim);
      preempted = true;
      if (victim == s) {
        self_preempted = true;
        break;
      }
    }
    if (self_preempted) break;
    plan.emplace_back(s, n);
    budget -= n;
    ++i;
  }
  return preempted;
}

void Engine::schedule_waiting(std::vector<std::pair<Seq*, int>>& plan, int& budget) {
  while (!waiting_.empty() && budget > 0 && static_cast<int>(running_.size()) < p_.max_seqs) {
    Seq* s = waiting_.front();
    int cached = adopt_session(*s);
    const bool adopted = cached >= 0;
    if (!adopted) cached = attach_prefix(*s);
    const int len = static_cast<int>(s->tokens.size());
    const int n = std::min(len - cached, budget);
    if (!prepare(*s, cached, cached + n)) {
      if (adopted) {  // keep the session's history pinned for the retry
        Session& ss = sessions_[s->req.session_id];
        ss.table = std::move(s->table);
        ss.swa_table = std::move(s->swa_table);
        ss.tokens.assign(s->tokens.begin(), s->tokens.begin() + cached);
        ss.last_used = std::chrono::steady_clock::now();
      } else {
        s->table.release_all(kv_->pool());  // give back the prefix hits
        if (swa_kv_) s->swa_table.release_all(swa_kv_->pool());
      }
      s->n_published = 0;
      if (evict_one_session()) continue;
      break;  // retry next step
    }
    waiting_.pop_front();
    s->n_computed = cached;
    s->n_cached = cached;
    if (cached > 0 && s->req.tap && s->req.tap_cached_prefix && !s->req.tap->pre_rope) replay_cached(*s, cached);
    s->running = true;
    stats_.prompt_tokens_cached += cached;
    running_.push_back(s);
    plan.emplace_back(s, n);
    budget -= n;
  }
}

void Engine::replay_cached(Seq& s, int n) {
  const HParams& hp = model_.hparams();
  const int kvd = hp.n_kv_dim(), bs = kv_->block_size();
  std::vector<float> k(static_cast<size_t>(n) * kvd), v(k.size());
  for (int l = 0; l < hp.n_layer; ++l) {
    for (int p = 0; p < n; ++p) {
      const BlockId b = s.table.blocks()[p / bs];
      kv_->read_k(l, b, p % bs, k.data() + static_cast<size_t>(p) * kvd);
      kv_->read_v(l, b, p % bs, v.data() + static_cast<size_t>(p) * kvd);
    }
    s.req.tap->on_kv(l, 0, n, k.data(), v.data());
  }
}

void Engine::publish_hashes(Seq& s) {
  if (!p_.prefix_caching) return;
  const int bs = kv_->block_size();
  BlockPool& pool = kv_->pool();
  for (int i = s.n_published; i < s.n_computed / bs; ++i) {
    const BlockId b = s.table.blocks()[i];
    const bool fresh = !pool.hash_of(b);
    pool.set_hash(b, s.hash_of_block(i, bs));
    if (swa_kv_ && i >= s.swa_table.n_released()) swa_kv_->pool().set_hash(s.swa_table.blocks()[i], s.hash_of_block(i, bs));
    // Only blocks published now (not a second copy of a cached one, not re-published history).
    if (sink_ && fresh && pool.hash_of(b))
      sink_->block_full(*kv_, b, s.hashes[i], i ? s.hashes[i - 1] : 0, s.req.cache_salt,
                        s.tokens.data() + static_cast<size_t>(i) * bs, bs);
  }
  s.n_published = std::max(s.n_published, s.n_computed / bs);
}

bool Engine::step() {
  std::lock_guard step_lock(step_mu_);
  admit_incoming();
  apply_cancels();
  expire_sessions();
  if (running_.empty() && waiting_.empty()) {
    // Cancels and instant finishes above still changed the pool: stats() must not go stale.
    publish_stats(0, 0);
    return false;
  }

  std::vector<std::pair<Seq*, int>> plan;
  int budget = p_.max_batch_tokens;
  // No admissions in a step that had to preempt: the pool is already short.
  if (!schedule_running(plan, budget)) schedule_waiting(plan, budget);
  if (plan.empty()) return true;

  const int nv = model_.hparams().n_vocab;
  std::vector<BatchSeq> batch;
  int n_logits = 0;
  for (auto& [s, n] : plan) n_logits += s->n_computed + n == static_cast<int>(s->tokens.size());
  if (logits_.size() < static_cast<size_t>(n_logits) * nv) logits_.resize(static_cast<size_t>(n_logits) * nv);
  int li = 0;
  for (auto& [s, n] : plan) {
    BatchSeq b;
    b.table = &s->table;
    if (swa_kv_) b.swa_table = &s->swa_table;
    b.tokens = s->tokens.data() + s->n_computed;
    b.n_tokens = n;
    b.pos0 = s->n_computed;
    b.tap = s->req.tap;
    if (s->n_computed + n == static_cast<int>(s->tokens.size())) {
      b.logits = LogitsMode::Last;
      b.logits_out = logits_.data() + static_cast<size_t>(li++) * nv;
    }
    batch.push_back(b);
  }
  fwd_->run(batch);

  std::vector<TokenEvent> events;
  uint64_t alloc = 0, used = 0;
  const auto& tk = model_.tokenizer();
  for (size_t i = 0; i < plan.size(); ++i) {
    Seq* s = plan[i].first;
    if (s->n_computed < s->n_prompt) stats_.prompt_tokens_computed += std::min(plan[i].second, s->n_prompt - s->n_computed);
    s->n_computed += plan[i].second;
    publish_hashes(*s);
    if (swa_kv_) release_window(*s);
    if (batch[i].logits == LogitsMode::None) continue;
    float* lg = batch[i].logits_out;
    if (s->n_generated > 0 && s->req.on_step && s->req.on_step(s->n_generated)) {
      finish(s, StopReason::Stop, events);
      continue;
    }
    if (s->n_generated == 0 && s->req.first_token_allowed) keep_only(lg, nv, *s->req.first_token_allowed);
    if (s->req.constraint && !s->req.constraint->mask(lg, nv)) {  // nothing may follow
      finish(s, StopReason::Stop, events);
      continue;
    }
    if (s->req.on_logits) s->req.on_logits(lg, nv);
    const int32_t tok = s->sampler.sample(lg, nv, s->tokens);
    if (s->req.constraint) s->req.constraint->accept(tok);
    if (!s->req.ignore_eos && tk.is_eog(tok)) {
      finish(s, StopReason::Eos, events);
      continue;
    }
    if (s->n_generated > 0 && s->req.continue_allowed && !s->req.continue_allowed->empty() &&
        !(*s->req.continue_allowed)[static_cast<size_t>(tok)]) {
      finish(s, StopReason::Stop, events);
      continue;
    }
    s->tokens.push_back(tok);
    ++s->n_generated;
    ++stats_.generated_tokens;
    TokenEvent ev{s->id, tok, false, StopReason::None};
    if (s->req.on_token) s->req.on_token(ev);
    if (s->req.constraint && s->req.constraint->done())  // the structured output is whole
      finish(s, StopReason::Stop, events);
    else if (s->n_generated >= s->req.max_tokens)
      finish(s, StopReason::Length, events);
    else if (s->n_computed >= limit_)
      finish(s, StopReason::Context, events);
  }
  for (Seq* s : running_) {
    alloc += s->table.capacity(kv_->block_size());
    used += s->n_computed;
  }
  {
    std::lock_guard lk(mu_);
    ++stats_.steps;
  }
  publish_stats(alloc, used);
  return true;
}

void Engine::publish_stats(uint64_t alloc, uint64_t used) {
  std::lock_guard lk(mu_);
  stats_.slots_allocated += alloc;
  stats_.slots_used += used;
  stats_.blocks = kv_->pool().stats();
  if (swa_kv_) stats_.swa_blocks = swa_kv_->pool().stats();
  stats_.running = static_cast<int>(running_.size());
  stats_.waiting = static_cast<int>(waiting_.size());
  stats_.sessions = static_cast<int>(sessions_.size());
}

int Engine::adopt_session(Seq& s) {
  if (s.req.session_id.empty() || s.n_preempted > 0) return -1;
  if (swa_kv_ && s.req.tap && s.req.tap_cached_prefix) return -1;  // see attach_window
  auto it = sessions_.find(s.req.session_id);
  if (it == sessions_.end()) return -1;
  Session& ss = it->second;
  const int len = static_cast<int>(s.tokens.size());
  int k = 0;
  const int m = std::min(len, static_cast<int>(ss.tokens.size()));
  while (k < m && ss.tokens[k] == s.tokens[k]) ++k;
  k = std::min(k, len - 1);  // the last prompt token is always recomputed
  // Going back to k needs the sliding window before k, which the session may have released.
  if (swa_kv_ && std::max(0, k - model_.hparams().n_swa + 1) < ss.swa_table.n_released() * swa_kv_->block_size()) k = 0;
  if (k <= 0) {
    ss.table.release_all(kv_->pool());
    if (swa_kv_) ss.swa_table.release_all(swa_kv_->pool());
    sessions_.erase(it);
    return -1;
  }
  s.table = std::move(ss.table);
  s.table.truncate(kv_->pool(), k, kv_->block_size());
  if (swa_kv_) {
    s.swa_table = std::move(ss.swa_table);
    s.swa_table.truncate(swa_kv_->pool(), k, swa_kv_->block_size());
  }
  sessions_.erase(it);
  s.n_published = 0;  // restored blocks get their hashes published as the sequence runs
  return k;
}

bool Engine::evict_one_session() {
  if (sessions_.empty()) return false;
  auto lru = sessions_.begin();
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it)
    if (it->second.last_used < lru->second.last_used) lru = it;
  lru->second.table.release_all(kv_->pool());
  if (swa_kv_) lru->second.swa_table.release_all(swa_kv_->pool());
  sessions_.erase(lru);
  return true;
}

void Engine::expire_sessions() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (std::chrono::duration<double>(now - it->second.last_used).count() > p_.session_idle_s) {
      it->second.table.release_all(kv_->pool());
      if (swa_kv_) it->second.swa_table.release_all(swa_kv_->pool());
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
}

std::optional<std::vector<uint8_t>> Engine::export_session(const std::string& id, const std::string& secret) {
  std::lock_guard lk(step_mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return std::nullopt;
  if (swa_kv_) throw InputError(kSwaSessionError);
  auto bytes = encode_session(fingerprint_, *kv_, it->second.table, it->second.tokens, secret);
  it->second.last_used = std::chrono::steady_clock::now();
  return bytes;
}

void Engine::save_session(const std::string& id, const std::string& path, const std::string& secret) {
  auto bytes = export_session(id, secret);
  if (!bytes) throw InputError("unknown session '" + id + "'");
  write_session_bytes(path, *bytes);
}

SessionImage Engine::verify_session(std::vector<uint8_t> bytes, const std::string& secret) const {
  if (swa_kv_) throw InputError(kSwaSessionError);
  // kv_'s shape is fixed at construction: reading it needs no lock.
  return decode_session(std::move(bytes), fingerprint_, *kv_, secret);
}

void Engine::import_session(const std::string& id, const SessionImage& img) {
  if (static_cast<int>(img.tokens.size()) > limit_) throw LimitError("session longer than this engine's context");
  std::lock_guard lk(step_mu_);
  if (swa_kv_) throw InputError(kSwaSessionError);
  BlockTable t;
  for (;;) {
    try {
      kvscope::install_session(img, *kv_, t);  // the file-image one, not Engine::install_session
      break;
    } catch (const LimitError&) {
      if (!evict_one_session()) throw;
    }
  }
  Session& ss = sessions_[id];
  ss.table.release_all(kv_->pool());
  ss.table = std::move(t);
  ss.tokens = img.tokens;
  ss.last_used = std::chrono::steady_clock::now();
}

void Engine::restore_session(const std::string& id, const std::string& path, const std::string& secret, size_t max_bytes) {
  auto bytes = read_session_bytes(path, max_bytes);
  if (!bytes) throw InputError("session file not found");
  import_session(id, verify_session(std::move(*bytes), secret));
}

void Engine::drop_session(const std::string& id) {
  std::lock_guard lk(step_mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  it->second.table.release_all(kv_->pool());
  if (swa_kv_) it->second.swa_table.release_all(swa_kv_->pool());
  sessions_.erase(it);
  publish_stats(0, 0);  // the freed blocks show in stats() without waiting for a step
}

bool Engine::has_session(const std::string& id) {
  std::lock_guard lk(step_mu_);
  return sessions_.count(id) > 0;
}

void Engine::set_block_sink(KVBlockSink* sink) {
  std::lock_guard lk(step_mu_);
  sink_ = sink;
}

int Engine::cached_prefix_blocks(const std::vector<BlockHash>& hashes) {
  if (!p_.prefix_caching) return 0;
  std::lock_guard lk(step_mu_);
  int n = 0;
  while (n < static_cast<int>(hashes.size()) && kv_->pool().contains(hashes[n])) ++n;
  return n;
}

int Engine::import_prefix_blocks(const std::vector<BlockHash>& hashes, const std::vector<const uint8_t*>& data) {
  if (!p_.prefix_caching || swa_kv_) return 0;  // a tier block holds kv_'s layers only
  std::lock_guard lk(step_mu_);
  BlockPool& pool = kv_->pool();
  // Imports go to the free queue's tail; more than the free blocks would evict each other.
  int budget = pool.n_free() - 1;
  int n = 0;
  for (; n < static_cast<int>(hashes.size()); ++n) {
    if (pool.contains(hashes[n])) continue;
    if (n >= static_cast<int>(data.size()) || !data[n] || budget <= 0) break;
    const auto b = pool.allocate();
    if (!b) break;
    --budget;
    kv_->import_block(*b, data[n]);
    pool.set_hash(*b, hashes[n]);
    pool.release(*b);  // unreferenced but cached: the next prompt with this prefix takes it
  }
  {
    std::lock_guard slk(mu_);
    stats_.blocks = pool.stats();
  }
  return n;
}

int Engine::install_session(const std::string& id, std::vector<int32_t> tokens, const std::vector<BlockHash>& full_hashes,
                            const uint8_t* tail, const std::vector<uint8_t>& tail_staging) {
  if (swa_kv_) return 0;  // the sliding-window layers' blocks are not in the tier
  std::lock_guard lk(step_mu_);
  const int bs = kv_->block_size();
  BlockPool& pool = kv_->pool();
  BlockTable t;
  int covered = 0;
  bool whole = true;
  for (BlockHash h : full_hashes) {
    const auto b = pool.lookup(h);
    if (!b) {
      whole = false;
      break;
    }
    t.append_owned(*b);
    covered += bs;
  }
  covered = std::min(covered, static_cast<int>(tokens.size()));
  if (whole && tail && covered < static_cast<int>(tokens.size()) && covered + bs >= static_cast<int>(tokens.size())) {
    if (const auto b = pool.allocate()) {
      kv_->import_block(*b, tail);
      try {
        kv_->import_staging(*b, tail_staging.data(), tail_staging.size());
        t.append_owned(*b);
        covered = static_cast<int>(tokens.size());
      } catch (const InputError&) {
        pool.release(*b);
      }
    }
  }
  if (covered == 0 || covered > limit_) {
    t.release_all(pool);
    return 0;
  }
  tokens.resize(covered);
  Session& ss = sessions_[id];
  ss.table.release_all(pool);
  ss.table = std::move(t);
  ss.tokens = std::move(tokens);
  ss.last_used = std::chrono::steady_clock::now();
  {
    std::lock_guard slk(mu_);
    stats_.blocks = pool.stats();
    stats_.sessions = static_cast<int>(sessions_.size());
  }
  return covered;
}

void Engine::loop() {
  for (;;) {
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stop_ || !incoming_.empty() || !cancels_.empty() || !live_.empty(); });
      if (stop_) return;
    }
    if (!step()) {
      // Nothing runnable although requests are live cannot last; yield briefly.
      std::this_thread::yield();
    }
  }
}

void Engine::start() {
  std::lock_guard lk(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { loop(); });
}

void Engine::stop() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard lk(mu_);
  done_cv_.notify_all();
}

EngineStats Engine::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

}  // namespace kvscope
