#include "runtime/handle_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace hvdrun {
namespace {

// Counts what the pool creates and destroys; handles are ints of its own.
struct Counted {
  std::atomic<int> created{0};
  std::atomic<int> destroyed{0};
  std::atomic<bool> fail{false};

  std::shared_ptr<HandlePool> Pool() {
    return std::make_shared<HandlePool>(
        [this]() -> StatusOr<void*> {
          if (fail) return Status::Error("no more handles");
          ++created;
          return static_cast<void*>(new int(created));
        },
        [this](void* handle) {
          ++destroyed;
          delete static_cast<int*>(handle);
        });
  }
};

TEST(HandlePool, AHandleGivenBackIsLentAgainInsteadOfANewOne) {
  Counted counted;
  auto pool = counted.Pool();
  void* first = nullptr;
  {
    StatusOr<HandlePool::Lease> lease = HandlePool::Lend(pool);
    ASSERT_TRUE(lease.ok());
    first = lease.value().get();
    EXPECT_EQ(pool->free_count(), 0u);
  }
  EXPECT_EQ(pool->free_count(), 1u);
  StatusOr<HandlePool::Lease> again = HandlePool::Lend(pool);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value().get(), first);
  EXPECT_EQ(counted.created, 1);
  EXPECT_EQ(counted.destroyed, 0);
}

TEST(HandlePool, LeasesHeldAtOnceAreDistinctHandles) {
  Counted counted;
  auto pool = counted.Pool();
  std::vector<HandlePool::Lease> leases;
  std::set<void*> handles;
  for (int i = 0; i < 5; ++i) {
    StatusOr<HandlePool::Lease> lease = HandlePool::Lend(pool);
    ASSERT_TRUE(lease.ok());
    handles.insert(lease.value().get());
    leases.push_back(lease.value());
  }
  EXPECT_EQ(handles.size(), 5u);
  EXPECT_EQ(counted.created, 5);
  leases.clear();
  EXPECT_EQ(pool->free_count(), 5u);
}

TEST(HandlePool, EveryHandleIsDestroyedOnceWhenTheLastLeaseOutlivesThePoolsOwner) {
  Counted counted;
  auto pool = counted.Pool();
  StatusOr<HandlePool::Lease> kept = HandlePool::Lend(pool);
  ASSERT_TRUE(kept.ok());
  { ASSERT_TRUE(HandlePool::Lend(pool).ok()); }  // created and given back at once
  pool.reset();
  EXPECT_EQ(counted.destroyed, 0);
  kept.value().reset();
  EXPECT_EQ(counted.created, 2);
  EXPECT_EQ(counted.destroyed, 2);
}

TEST(HandlePool, AHandleThatCannotBeCreatedIsTheCreatorsError) {
  Counted counted;
  counted.fail = true;
  auto pool = counted.Pool();
  StatusOr<HandlePool::Lease> lease = HandlePool::Lend(pool);
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.status().message(), "no more handles");
  EXPECT_EQ(pool->free_count(), 0u);
}

TEST(HandlePool, ThreadsLendingAndGivingBackNeverShareAHandle) {
  Counted counted;
  auto pool = counted.Pool();
  constexpr int kThreads = 4;
  constexpr int kRounds = 2000;
  std::atomic<bool> shared{false};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&pool, &shared] {
      for (int round = 0; round < kRounds; ++round) {
        StatusOr<HandlePool::Lease> lease = HandlePool::Lend(pool);
        if (!lease.ok()) return;
        // Whoever holds a handle owns it alone: mark it, check nobody else did, unmark it.
        auto* value = static_cast<int*>(lease.value().get());
        const int mine = -*value;
        *value = mine;
        std::this_thread::yield();
        if (*value != mine) shared = true;
        *value = -mine;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(shared);
  EXPECT_LE(counted.created, kThreads);
  EXPECT_EQ(pool->free_count(), static_cast<size_t>(counted.created));
}

}  // namespace
}  // namespace hvdrun
