#include "kvcache/block_pool.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

namespace block_pool_test {

using namespace kvscope;

TEST(BlockPool, ScriptedAllocFreeForkEvict) {
  BlockPool p(4);
  EXPECT_EQ(p.free_order(), (std::vector<BlockId>{0, 1, 2, 3}));
  BlockId a = *p.allocate(), b = *p.allocate(), c = *p.allocate();
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(c, 2);
  EXPECT_EQ(p.free_order(), (std::vector<BlockId>{3}));
  p.retain(b);  // fork: a second sequence shares block 1
  EXPECT_EQ(p.ref_count(b), 2);
  const int32_t toks[2] = {5, 6};
  BlockHash h = hash_block(0, toks, 2);
  p.set_hash(a, h);
  p.release(a);  // freed but cached
  p.release(c);
  EXPECT_EQ(p.free_order(), (std::vector<BlockId>{3, 0, 2}));
  EXPECT_EQ(p.stats().cached_free, 1);
  p.release(b);
  EXPECT_EQ(p.ref_count(b), 1);
  // A prefix hit reclaims block 0 from the free queue.
  EXPECT_EQ(p.lookup(h), std::optional<BlockId>(0));
  EXPECT_EQ(p.free_order(), (std::vector<BlockId>{3, 2}));
  p.release(0);
  EXPECT_EQ(p.free_order(), (std::vector<BlockId>{3, 2, 0}));
  // Allocation takes LRU blocks first; taking block 0 evicts its hash.
  EXPECT_EQ(*p.allocate(), 3);
  EXPECT_EQ(*p.allocate(), 2);
  EXPECT_EQ(*p.allocate(), 0);
  EXPECT_FALSE(p.allocate().has_value());
  EXPECT_FALSE(p.lookup(h).has_value());
  auto s = p.stats();
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.prefix_queries, 2u);
  EXPECT_EQ(s.prefix_hits, 1u);
  EXPECT_EQ(s.used, 4);
  p.release(3);
  EXPECT_THROW(p.release(3), std::logic_error);  // double free
}

TEST(BlockPool, HashesChainAndSaltSeparatesTenants) {
  const int32_t t[3] = {1, 2, 3};
  EXPECT_EQ(hash_block(7, t, 3), hash_block(7, t, 3));
  EXPECT_NE(hash_block(7, t, 3), hash_block(8, t, 3));
  EXPECT_NE(hash_block(7, t, 3, 1), hash_block(7, t, 3, 2));
  EXPECT_NE(hash_block(7, t, 3), hash_block(7, t, 2));
}

TEST(BlockPool, RandomizedOperationsNeverLeakOrShareWrongly) {
  std::mt19937 rng(1234);
  const int n = 32;
  BlockPool p(n);
  std::map<BlockId, int> refs;  // model of the expected reference counts
  for (int step = 0; step < 20000; ++step) {
    int op = static_cast<int>(rng() % 4);
    if (op == 0) {
      auto id = p.allocate();
      if (id) {
        ASSERT_EQ(refs[*id], 0) << "allocated a block still referenced";
        refs[*id] = 1;
      } else {
        int live = 0;
        for (auto& [k, v] : refs) live += v > 0;
        ASSERT_EQ(live, n);
      }
    } else if (op == 1 && !refs.empty()) {
      auto it = std::next(refs.begin(), static_cast<long>(rng() % refs.size()));
      if (it->second > 0) {
        p.release(it->first);
        --it->second;
      }
    } else if (op == 2 && !refs.empty()) {
      auto it = std::next(refs.begin(), static_cast<long>(rng() % refs.size()));
      if (it->second > 0) {
        p.retain(it->first);
        ++it->second;
      }
    } else if (op == 3 && !refs.empty()) {
      auto it = std::next(refs.begin(), static_cast<long>(rng() % refs.size()));
      int32_t tok = static_cast<int32_t>(rng() % 8);
      BlockHash h = hash_block(0, &tok, 1);
      if (it->second > 0) p.set_hash(it->first, h);
      if (auto hit = p.lookup(h)) refs[*hit]++;
    }
    int free_expected = 0;
    for (BlockId i = 0; i < n; ++i) {
      ASSERT_EQ(p.ref_count(i), refs.count(i) ? refs[i] : 0);
      free_expected += p.ref_count(i) == 0;
    }
    ASSERT_EQ(p.n_free(), free_expected);
  }
}

}  // namespace block_pool_test
