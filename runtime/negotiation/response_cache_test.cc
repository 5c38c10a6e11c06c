#include "runtime/negotiation/response_cache.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace hvdrun {
namespace {

TensorRequest Req(const std::string& name, uint64_t count = 4) {
  TensorRequest request;
  request.name = name;
  request.count = count;
  return request;
}

TEST(ResponseCache, HitMissAndMismatch) {
  ResponseCache cache(4);
  uint32_t bit = 99;
  EXPECT_EQ(cache.Find(Req("a"), &bit), ResponseCache::Lookup::kMiss);
  EXPECT_EQ(cache.Put(Req("a")), 0U);
  EXPECT_EQ(cache.Put(Req("b")), 1U);
  EXPECT_EQ(cache.Find(Req("b"), &bit), ResponseCache::Lookup::kHit);
  EXPECT_EQ(bit, 1U);
  EXPECT_EQ(cache.Find(Req("b", 5), &bit), ResponseCache::Lookup::kMismatch);
  EXPECT_EQ(bit, 1U);
  EXPECT_EQ(cache.At(1).name, "b");
  EXPECT_EQ(cache.size(), 2U);
}

TEST(ResponseCache, TheSameCountInAnotherShapeIsAMismatch) {
  ResponseCache cache(4);
  TensorRequest shaped = Req("w", 6);
  shaped.shape = {2, 3};
  cache.Put(shaped);
  uint32_t bit = 99;
  TensorRequest transposed = shaped;
  transposed.shape = {3, 2};
  EXPECT_EQ(cache.Find(transposed, &bit), ResponseCache::Lookup::kMismatch);
  EXPECT_EQ(cache.Find(shaped, &bit), ResponseCache::Lookup::kHit);
  // An allgather's first dimension is each rank's own: another one is still the cached request.
  TensorRequest gathered = shaped;
  gathered.name = "g";
  gathered.kind = CollectiveKind::kAllgatherv;
  gathered.row = 3;
  cache.Put(gathered);
  gathered.shape = {5, 3};
  gathered.count = 15;
  EXPECT_EQ(cache.Find(gathered, &bit), ResponseCache::Lookup::kHit);
}

TEST(ResponseCache, AFullCacheEvictsTheLeastRecentlyUsedAndReusesItsBit) {
  ResponseCache cache(3);
  cache.Put(Req("a"));
  cache.Put(Req("b"));
  cache.Put(Req("c"));
  cache.Put(Req("a"));  // a is now the most recent: b is the least
  EXPECT_EQ(cache.Put(Req("d")), 1U) << "b's bit";
  uint32_t bit = 0;
  EXPECT_EQ(cache.Find(Req("b"), &bit), ResponseCache::Lookup::kMiss);
  EXPECT_EQ(cache.Find(Req("a"), &bit), ResponseCache::Lookup::kHit);
  EXPECT_EQ(bit, 0U) << "bits never move";
  EXPECT_EQ(cache.evictions(), 1U);
  EXPECT_EQ(cache.size(), 3U);
}

TEST(ResponseCache, AnErasedBitIsTheNextToBeTaken) {
  ResponseCache cache(4);
  for (const char* name : {"a", "b", "c"}) cache.Put(Req(name));
  cache.Erase(1);
  EXPECT_FALSE(cache.InUse(1));
  EXPECT_EQ(cache.Put(Req("d")), 1U);
  EXPECT_EQ(cache.Put(Req("e")), 3U);
  EXPECT_EQ(cache.evictions(), 0U);
}

TEST(ResponseCache, NewParametersReplaceTheEntryUnderItsBit) {
  ResponseCache cache(2);
  cache.Put(Req("a", 4));
  EXPECT_EQ(cache.Put(Req("a", 8)), 0U);
  uint32_t bit = 0;
  EXPECT_EQ(cache.Find(Req("a", 8), &bit), ResponseCache::Lookup::kHit);
  EXPECT_EQ(cache.size(), 1U);
}

TEST(ResponseCache, MoreNamesThanTheCapacityKeepItFull) {
  ResponseCache cache(1024);
  for (int i = 0; i < 3000; ++i) cache.Put(Req("n" + std::to_string(i)));
  EXPECT_EQ(cache.size(), 1024U);
  EXPECT_EQ(cache.evictions(), 3000U - 1024U);
  uint32_t bit = 0;
  EXPECT_EQ(cache.Find(Req("n2999"), &bit), ResponseCache::Lookup::kHit);
  EXPECT_EQ(cache.Find(Req("n1975"), &bit), ResponseCache::Lookup::kMiss);
}

TEST(ResponseCache, CapacityZeroCachesNothing) {
  ResponseCache cache(0);
  cache.Put(Req("a"));
  uint32_t bit = 0;
  EXPECT_EQ(cache.Find(Req("a"), &bit), ResponseCache::Lookup::kMiss);
  EXPECT_EQ(cache.bit_count(), 0U);
}

TEST(ResponseCache, TheSameCallsGiveTheSameCacheOnEveryRank) {
  ResponseCache one(16);
  ResponseCache two(16);
  std::mt19937 random(7);
  for (int i = 0; i < 5000; ++i) {
    const std::string name = "t" + std::to_string(random() % 40);
    if (random() % 10 == 0) {
      uint32_t bit = 0;
      if (one.Find(Req(name), &bit) != ResponseCache::Lookup::kMiss) {
        one.Erase(bit);
        two.Erase(bit);
      }
      continue;
    }
    ASSERT_EQ(one.Put(Req(name)), two.Put(Req(name)));
  }
  for (uint32_t bit = 0; bit < 16; ++bit) {
    ASSERT_EQ(one.InUse(bit), two.InUse(bit));
    if (one.InUse(bit)) {
      EXPECT_EQ(one.At(bit).name, two.At(bit).name);
    }
  }
}

}  // namespace
}  // namespace hvdrun
