#include "runtime/in_memory_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

TEST(InMemoryStoreTest, SetThenGet) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  ASSERT_TRUE(store->Set("a", std::string("x\0y", 3)).ok());
  StatusOr<std::string> value = store->Get("a", milliseconds(0));
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(value.value(), std::string("x\0y", 3));
  ASSERT_TRUE(store->Set("a", "z").ok());
  EXPECT_EQ(store->Get("a", milliseconds(0)).value(), "z");
}

TEST(InMemoryStoreTest, GetTimesOutNamingTheKey) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::string> value = store->Get("missing/key", milliseconds(50));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(50));
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().message(), "store: timed out after 50 ms waiting for key 'missing/key'");
}

TEST(InMemoryStoreTest, GetWaitsForAnotherThreadsSet) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(20));
    EXPECT_TRUE(store->Set("late", "v").ok());
  });
  StatusOr<std::string> value = store->Get("late", milliseconds(5000));
  setter.join();
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(value.value(), "v");
}

TEST(InMemoryStoreTest, WaitNamesOnlyTheMissingKeys) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  ASSERT_TRUE(store->Set("b", "1").ok());
  Status status = store->Wait({"a", "b", "c"}, milliseconds(20));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "store: timed out after 20 ms waiting for 3 keys; 2 still missing: 'a', 'c'");
  ASSERT_TRUE(store->Set("a", "").ok());
  ASSERT_TRUE(store->Set("c", "").ok());
  EXPECT_TRUE(store->Wait({"a", "b", "c"}, milliseconds(0)).ok());
  EXPECT_TRUE(store->Wait({}, milliseconds(0)).ok());
}

TEST(InMemoryStoreTest, WaitReturnsOnceEveryKeyIsSetByOtherThreads) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  std::vector<std::thread> setters;
  setters.reserve(4);
  for (int i = 0; i < 4; ++i) {
    setters.emplace_back([store, i] { EXPECT_TRUE(store->Set("k" + std::to_string(i), "v").ok()); });
  }
  Status status = store->Wait({"k0", "k1", "k2", "k3"}, milliseconds(5000));
  for (std::thread& setter : setters) setter.join();
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(InMemoryStoreTest, AddCountsFromZeroAndIsAtomic) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  EXPECT_EQ(store->Add("n", 5).value(), 5);
  EXPECT_EQ(store->Add("n", -7).value(), -2);
  EXPECT_EQ(store->Get("n", milliseconds(0)).value(), "-2");
  std::vector<std::thread> adders;
  adders.reserve(8);
  for (int i = 0; i < 8; ++i) {
    adders.emplace_back([store] {
      for (int j = 0; j < 1000; ++j) EXPECT_TRUE(store->Add("counter", 1).ok());
    });
  }
  for (std::thread& adder : adders) adder.join();
  EXPECT_EQ(store->Add("counter", 0).value(), 8000);
}

// The rules are common/protocol/key_value_table.h's (tested there); the store passes on their errors.
TEST(InMemoryStoreTest, ErrorsAreTheTablesWithTheStoresName) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  ASSERT_TRUE(store->Set("text", "12abc").ok());
  StatusOr<int64_t> sum = store->Add("text", 1);
  ASSERT_FALSE(sum.ok());
  EXPECT_EQ(sum.status().message(),
            "store: cannot add to key 'text': its value '12abc' is not a whole number");
  EXPECT_EQ(store->CompareAndSet("text", "12abc", "x").value(), "x");
  ASSERT_TRUE(store->Delete("text").ok());
  EXPECT_FALSE(store->Get("text", milliseconds(0)).ok());
}

TEST(InMemoryStoreTest, HugeTimeoutDoesNotOverflow) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  ASSERT_TRUE(store->Set("k", "v").ok());
  EXPECT_TRUE(store->Get("k", milliseconds::max()).ok());
  EXPECT_TRUE(store->Wait({"k"}, milliseconds::max()).ok());
}

}  // namespace
}  // namespace hvdrun
