#include "common/latch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace hvdrun {
namespace {

TEST(LatchTest, ZeroCountIsOpenAtOnce) {
  Latch latch(0);
  EXPECT_TRUE(latch.TryWait());
  latch.Wait();
}

TEST(LatchTest, OpensWhenCountedDownToZeroAndNotBefore) {
  Latch latch(3);
  latch.CountDown();
  EXPECT_FALSE(latch.TryWait());
  latch.CountDown(2);
  EXPECT_TRUE(latch.TryWait());
  latch.Wait();
}

// No thread passes ArriveAndWait before every thread has arrived: each one, once through, sees
// that all of them incremented the counter before arriving.
TEST(LatchTest, ArriveAndWaitReleasesEveryThreadOnlyAfterTheLastArrives) {
  constexpr int kThreads = 8;
  Latch latch(kThreads);
  std::atomic<int> arrived{0};
  std::atomic<int> early{0};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      arrived.fetch_add(1);
      latch.ArriveAndWait();
      if (arrived.load() != kThreads) early.fetch_add(1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(early.load(), 0);
  EXPECT_TRUE(latch.TryWait());
}

// A thread that counts down without waiting (a rank whose setup failed) still lets the others go.
TEST(LatchTest, CountDownWithoutWaitingReleasesTheWaiters) {
  Latch latch(2);
  std::thread waiter([&] { latch.ArriveAndWait(); });
  latch.CountDown();
  waiter.join();
  EXPECT_TRUE(latch.TryWait());
}

}  // namespace
}  // namespace hvdrun
