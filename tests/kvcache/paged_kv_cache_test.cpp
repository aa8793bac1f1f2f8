#include "kvcache/paged_kv_cache.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kvcache/block_table.h"
#include "util/error.h"

namespace paged_kv_cache_test {

using namespace kvscope;
using kernels::DType;

namespace {
PagedKVConfig cfg(int n_blocks, int block_size = 4, std::vector<DType> types = {}) {
  PagedKVConfig c;
  c.n_layer = 2;
  c.kv_dim = 8;
  c.block_size = block_size;
  c.n_blocks = n_blocks;
  c.layer_types = std::move(types);
  return c;
}
std::vector<float> row(float base) {
  std::vector<float> r(8);
  for (int i = 0; i < 8; ++i) r[i] = base + i * 0.25f;
  return r;
}
}  // namespace

TEST(PagedKVCache, SizedFromBudgetAndPerLayerTypes) {
  PagedKVConfig c = cfg(0, 16, {DType::F32, DType::F16});
  EXPECT_EQ(PagedKVCache::bytes_per_token(2, 8, c.layer_types), 2u * 8 * 4 + 2u * 8 * 2);
  c.mem_bytes = 96 * 16 * 10 + 5;  // room for 10 blocks
  PagedKVCache kv(c);
  EXPECT_EQ(kv.n_blocks(), 10);
  EXPECT_EQ(kv.bytes(), 96u * 16 * 10);
  EXPECT_EQ(kv.k_type(1), KVType::F16);
  c.mem_bytes = 10;
  EXPECT_THROW(PagedKVCache{c}, InputError);
  EXPECT_THROW(PagedKVCache(cfg(4, 4, {DType::Q8_0, DType::F32})), InputError);
  EXPECT_THROW(PagedKVCache(cfg(4, 4, {DType::F32})), InputError);
}

TEST(PagedKVCache, WriteReadAndF16Rounding) {
  PagedKVCache kv(cfg(3, 4, {DType::F32, DType::F16}));
  auto k = row(1.0f), v = row(-2.0f);
  kv.write(0, 2, 3, k.data(), v.data());
  kv.write(1, 2, 3, k.data(), v.data());
  EXPECT_EQ(std::memcmp(kv.k_row(0, 2, 3), k.data(), 32), 0);
  EXPECT_EQ(std::memcmp(kv.v_row(0, 2, 3), v.data(), 32), 0);
  const uint16_t* h = static_cast<const uint16_t*>(kv.k_row(1, 2, 3));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(kernels::fp16_to_fp32(h[i]), k[i]);  // exactly representable
  kv.copy_block(2, 0);
  EXPECT_EQ(std::memcmp(kv.k_row(0, 0, 3), k.data(), 32), 0);
  std::vector<uint8_t> buf(kv.block_bytes());
  kv.export_block(2, buf.data());
  kv.import_block(1, buf.data());
  EXPECT_EQ(std::memcmp(kv.v_row(1, 1, 3), kv.v_row(1, 2, 3), 16), 0);
}

TEST(BlockTable, AllocatesAsTokensArriveAndCopiesOnWrite) {
  PagedKVCache kv(cfg(6));
  BlockPool& pool = kv.pool();
  BlockTable a;
  ASSERT_TRUE(a.prepare(kv, 0, 1));
  EXPECT_EQ(a.blocks(), (std::vector<BlockId>{0}));
  ASSERT_TRUE(a.prepare(kv, 1, 4));  // still one block of 4
  EXPECT_EQ(a.n_blocks(), 1);
  ASSERT_TRUE(a.prepare(kv, 4, 6));
  EXPECT_EQ(a.blocks(), (std::vector<BlockId>{0, 1}));
  auto k = row(3.0f);
  kv.write(0, 1, 1, k.data(), k.data());  // position 5
  BlockTable b = a.fork(pool);
  EXPECT_EQ(pool.ref_count(0), 2);
  EXPECT_EQ(pool.ref_count(1), 2);
  // b writes position 6 (block 1, shared): it gets a private copy holding position 5 as well.
  EXPECT_EQ(b.blocks_needed(kv, 6, 7), 1);
  ASSERT_TRUE(b.prepare(kv, 6, 7));
  EXPECT_EQ(b.blocks(), (std::vector<BlockId>{0, 2}));
  EXPECT_EQ(pool.ref_count(1), 1);
  EXPECT_EQ(pool.ref_count(0), 2);  // untouched shared prefix stays shared
  EXPECT_EQ(std::memcmp(kv.k_row(0, 2, 1), k.data(), 32), 0);
  // Not enough blocks: nothing changes.
  BlockTable c;
  EXPECT_TRUE(c.prepare(kv, 0, 12));  // 3 blocks: 3, 4, 5
  EXPECT_EQ(pool.n_free(), 0);
  BlockTable d;
  EXPECT_FALSE(d.prepare(kv, 0, 1));
  EXPECT_EQ(d.n_blocks(), 0);
  c.truncate(pool, 5, 4);
  EXPECT_EQ(c.blocks(), (std::vector<BlockId>{3, 4}));
  a.release_all(pool);
  b.release_all(pool);
  c.release_all(pool);
  EXPECT_EQ(pool.n_free(), 6);
}

TEST(BlockTable, RandomizedForksWritesAndReleasesNeverLeak) {
  PagedKVCache kv(cfg(24));
  BlockPool& pool = kv.pool();
  std::mt19937 rng(7);
  std::vector<BlockTable> tables;
  std::vector<int> lens;
  for (int step = 0; step < 5000; ++step) {
    const int op = static_cast<int>(rng() % 4);
    if (op == 0 || tables.empty()) {
      tables.emplace_back();
      lens.push_back(0);
    } else {
      const size_t i = rng() % tables.size();
      if (op == 1) {
        const int n = 1 + static_cast<int>(rng() % 6);
        if (tables[i].prepare(kv, lens[i], lens[i] + n)) {
          lens[i] += n;
          // Every block this table writes into must be exclusively its own.
          for (int p = lens[i] - n; p < lens[i]; ++p) ASSERT_EQ(pool.ref_count(tables[i].block_of(p, 4)), 1);
        }
      } else if (op == 2) {
        tables.push_back(tables[i].fork(pool));
        lens.push_back(lens[i]);
      } else {
        tables[i].release_all(pool);
        tables.erase(tables.begin() + static_cast<long>(i));
        lens.erase(lens.begin() + static_cast<long>(i));
      }
    }
    std::vector<int> refs(24, 0);
    for (auto& t : tables)
      for (BlockId b : t.blocks()) ++refs[b];
    for (BlockId b = 0; b < 24; ++b) ASSERT_EQ(pool.ref_count(b), refs[b]);
  }
  for (auto& t : tables) t.release_all(pool);
  EXPECT_EQ(pool.n_free(), 24);
}

}  // namespace paged_kv_cache_test
