#include "runtime/in_memory_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

TEST(InMemoryStoreTest, SetThenGet) {
  InMemoryStore store;
  ASSERT_TRUE(store.Set("a", std::string("x\0y", 3)).ok());
  StatusOr<std::string> value = store.Get("a", milliseconds(0));
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(value.value(), std::string("x\0y", 3));
  ASSERT_TRUE(store.Set("a", "z").ok());
  EXPECT_EQ(store.Get("a", milliseconds(0)).value(), "z");
}

TEST(InMemoryStoreTest, GetTimesOutNamingTheKey) {
  InMemoryStore store;
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::string> value = store.Get("missing/key", milliseconds(50));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(50));
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().message(), "store: key 'missing/key' was not set within 50 ms");
}

TEST(InMemoryStoreTest, GetWaitsForAnotherThreadsSet) {
  InMemoryStore store;
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(20));
    EXPECT_TRUE(store.Set("late", "v").ok());
  });
  StatusOr<std::string> value = store.Get("late", milliseconds(5000));
  setter.join();
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(value.value(), "v");
}

TEST(InMemoryStoreTest, WaitNamesOnlyTheMissingKeys) {
  InMemoryStore store;
  ASSERT_TRUE(store.Set("b", "1").ok());
  Status status = store.Wait({"a", "b", "c"}, milliseconds(20));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "store: keys 'a', 'c' were not set within 20 ms");
  EXPECT_EQ(store.Wait({"a"}, milliseconds(1)).message(), "store: key 'a' was not set within 1 ms");
  ASSERT_TRUE(store.Set("a", "").ok());
  ASSERT_TRUE(store.Set("c", "").ok());
  EXPECT_TRUE(store.Wait({"a", "b", "c"}, milliseconds(0)).ok());
  EXPECT_TRUE(store.Wait({}, milliseconds(0)).ok());
}

TEST(InMemoryStoreTest, WaitReturnsOnceEveryKeyIsSetByOtherThreads) {
  InMemoryStore store;
  std::vector<std::thread> setters;
  setters.reserve(4);
  for (int i = 0; i < 4; ++i) {
    setters.emplace_back([&store, i] { EXPECT_TRUE(store.Set("k" + std::to_string(i), "v").ok()); });
  }
  Status status = store.Wait({"k0", "k1", "k2", "k3"}, milliseconds(5000));
  for (std::thread& setter : setters) setter.join();
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(InMemoryStoreTest, AddCountsFromZeroAndIsAtomic) {
  InMemoryStore store;
  EXPECT_EQ(store.Add("n", 5).value(), 5);
  EXPECT_EQ(store.Add("n", -7).value(), -2);
  EXPECT_EQ(store.Get("n", milliseconds(0)).value(), "-2");
  std::vector<std::thread> adders;
  adders.reserve(8);
  for (int i = 0; i < 8; ++i) {
    adders.emplace_back([&store] {
      for (int j = 0; j < 1000; ++j) EXPECT_TRUE(store.Add("counter", 1).ok());
    });
  }
  for (std::thread& adder : adders) adder.join();
  EXPECT_EQ(store.Add("counter", 0).value(), 8000);
}

TEST(InMemoryStoreTest, AddRejectsANonInteger) {
  InMemoryStore store;
  ASSERT_TRUE(store.Set("text", "12abc").ok());
  StatusOr<int64_t> sum = store.Add("text", 1);
  ASSERT_FALSE(sum.ok());
  EXPECT_EQ(sum.status().message(), "store: Add on key 'text' whose value is not an integer");
  EXPECT_EQ(store.Get("text", milliseconds(0)).value(), "12abc");
}

TEST(InMemoryStoreTest, CompareAndSet) {
  InMemoryStore store;
  // Absent counts as equal to an empty expected value.
  EXPECT_EQ(store.CompareAndSet("k", "", "first").value(), "first");
  EXPECT_EQ(store.CompareAndSet("k", "", "second").value(), "first");
  EXPECT_EQ(store.CompareAndSet("k", "wrong", "second").value(), "first");
  EXPECT_EQ(store.CompareAndSet("k", "first", "second").value(), "second");
  EXPECT_EQ(store.Get("k", milliseconds(0)).value(), "second");
  // A mismatch on an absent key leaves it absent and returns the empty string.
  EXPECT_EQ(store.CompareAndSet("absent", "x", "y").value(), "");
  EXPECT_FALSE(store.Get("absent", milliseconds(0)).ok());
}

TEST(InMemoryStoreTest, DeleteRemovesTheKey) {
  InMemoryStore store;
  ASSERT_TRUE(store.Set("k", "v").ok());
  ASSERT_TRUE(store.Delete("k").ok());
  EXPECT_FALSE(store.Get("k", milliseconds(0)).ok());
  EXPECT_TRUE(store.Delete("never-set").ok());
  EXPECT_EQ(store.Add("k", 1).value(), 1);
}

TEST(InMemoryStoreTest, HugeTimeoutDoesNotOverflow) {
  InMemoryStore store;
  ASSERT_TRUE(store.Set("k", "v").ok());
  EXPECT_TRUE(store.Get("k", milliseconds::max()).ok());
  EXPECT_TRUE(store.Wait({"k"}, milliseconds::max()).ok());
}

}  // namespace
}  // namespace hvdrun
