// A context sized for a 128K-token window commits memory only for the KV blocks it writes: the
// pages of the cache's storage stay untouched (not resident) until their tokens arrive, so `run`
// on a long-context model costs memory (and start-up time) for the tokens used, not the window.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#include "engine/context.h"
#include "kvcache/lazy_bytes.h"
#include "model/random_model.h"
#include "test_util.h"

namespace lazy_kv_memory_test {

using namespace kvscope;

namespace {
// Bytes of [p, p + n) that are resident in memory.
size_t resident_bytes(const void* p, size_t n) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const auto lo = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const auto hi = (reinterpret_cast<uintptr_t>(p) + n + page - 1) & ~(page - 1);
  std::vector<unsigned char> v((hi - lo) / page);
  if (mincore(reinterpret_cast<void*>(lo), hi - lo, v.data()) != 0) return SIZE_MAX;
  size_t r = 0;
  for (unsigned char c : v) r += (c & 1) ? page : 0;
  return r;
}
}  // namespace

TEST(LazyKVMemory, LazyBytesCommitsOnlyTouchedPages) {
  LazyBytes b(256u << 20);
  EXPECT_EQ(b.size(), 256u << 20);
  EXPECT_EQ(resident_bytes(b.data(), b.size()), 0u);
  b.data()[12345] = 7;
  b.data()[(200u << 20) + 1] = 9;
  EXPECT_LE(resident_bytes(b.data(), b.size()), 2u * (2u << 20));  // 2 pages (2 MB each with transparent huge pages)
  EXPECT_EQ(b.data()[12345], 7);
  EXPECT_EQ(b.data()[777], 0);  // zero-filled
  LazyBytes moved(std::move(b));
  EXPECT_EQ(moved.data()[12345], 7);
  EXPECT_EQ(b.data(), nullptr);
}

TEST(LazyKVMemory, LongContextCommitsOnlyUsedBlocks) {
  RandomModelSpec s;
  s.dim = 128;
  s.layers = 2;
  s.heads = 4;
  s.kv_heads = 4;
  s.ffn = 256;
  s.vocab = 320;
  s.ctx = 131072;
  auto path = (test::temp_dir() / "long_ctx.gguf").string();
  write_random_model(s, path);
  auto m = Model::load(path);
  Context ctx(*m, {0, 1, 512, KVCacheTypes(KVType::F16, KVType::F16)});  // the model's 128K window
  ASSERT_EQ(ctx.n_ctx(), 131072);
  ctx.eval({1, 5, 9, 13, 17, 21, 25, 29});
  // Layer 0's K storage spans every block of the window; only the written block may be resident.
  const auto& kv = ctx.kv();
  const auto* first = static_cast<const uint8_t*>(kv.k_row(0, 0, 0));
  const auto* last = static_cast<const uint8_t*>(kv.k_row(0, kv.n_blocks() - 1, 0));
  const size_t span = static_cast<size_t>(last - first);
  ASSERT_GT(span, 30u << 20);  // 131072 tokens x 128 dims x 2 bytes
  EXPECT_LE(resident_bytes(first, span), 4u << 20) << "of " << span << " bytes";  // <= 2 huge pages
}

}  // namespace lazy_kv_memory_test
