#include "runtime/call_order/call_order_queue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/collective_state.h"

namespace hvdrun {
namespace {

using Pending = CallOrderQueue::Pending;

Pending Named(const std::string& name) {
  Pending pending;
  pending.request.name = name;
  return pending;
}

// Records what ran, on which thread; fails the requests named "bad"; holds "slow" until released.
struct Recorder {
  Status Run(const Pending& pending) {
    std::unique_lock<std::mutex> lock(mutex);
    ran.push_back(pending.request.name);
    threads.push_back(std::this_thread::get_id());
    changed.notify_all();
    if (pending.request.name == "slow") changed.wait(lock, [this] { return released; });
    return pending.request.name == "bad" ? Status::Error("bad failed") : Status::Ok();
  }
  void WaitForRuns(size_t n) {
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return ran.size() >= n; }));
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex);
    released = true;
    changed.notify_all();
  }

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> ran;
  std::vector<std::thread::id> threads;
  bool released = false;
};

TEST(CallOrderQueue, RunOnAnIdleQueueRunsOnTheCallersThread) {
  Recorder recorder;
  CallOrderQueue queue([&](const Pending& pending) { return recorder.Run(pending); });
  ASSERT_TRUE(queue.Run(Named("a")).ok());
  ASSERT_TRUE(queue.RunAfterQueue(Named("b")).ok());
  EXPECT_EQ(recorder.ran, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(recorder.threads, (std::vector<std::thread::id>(2, std::this_thread::get_id())));
  queue.Stop();
  queue.RunQueued();  // nothing queued: returns at once
}

TEST(CallOrderQueue, RequestsRunInTheOrderOfTheCallsOnTheCollectiveThread) {
  Recorder recorder;
  CallOrderQueue queue([&](const Pending& pending) { return recorder.Run(pending); });
  CollectiveHandle slow = queue.Submit(Named("slow"));
  CollectiveHandle second = queue.Submit(Named("second"));
  std::thread collective([&] { queue.RunQueued(); });
  recorder.WaitForRuns(1);
  // A blocking call while others are queued or running waits its turn: it has not run while "slow"
  // holds the collective thread.
  std::thread caller([&] { EXPECT_TRUE(queue.Run(Named("third")).ok()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  {
    std::lock_guard<std::mutex> lock(recorder.mutex);
    EXPECT_EQ(recorder.ran, (std::vector<std::string>{"slow"}));
  }
  recorder.Release();
  caller.join();
  EXPECT_TRUE(slow.Wait().ok());
  EXPECT_TRUE(second.Wait().ok());
  queue.Stop();
  collective.join();
  EXPECT_EQ(recorder.ran, (std::vector<std::string>{"slow", "second", "third"}));
}

TEST(CallOrderQueue, TheFirstFailureRefusesEveryLaterRequest) {
  Recorder recorder;
  CallOrderQueue queue([&](const Pending& pending) { return recorder.Run(pending); });
  EXPECT_EQ(queue.Run(Named("bad")).message(), "bad failed");
  EXPECT_EQ(queue.Run(Named("after")).message(), "bad failed");
  EXPECT_EQ(queue.Submit(Named("queued")).Wait().message(), "bad failed");
  EXPECT_EQ(queue.RunAfterQueue(Named("baseline")).message(), "bad failed");
  queue.Break(Status::Error("later"));
  EXPECT_EQ(queue.broken().message(), "bad failed");
  EXPECT_EQ(recorder.ran, (std::vector<std::string>{"bad"}));
}

TEST(CallOrderQueue, BreakRefusesWhatIsQueuedWithoutRunningIt) {
  Recorder recorder;
  CallOrderQueue queue([&](const Pending& pending) { return recorder.Run(pending); });
  CollectiveHandle queued = queue.Submit(Named("queued"));
  queue.Break(Status::Error("bootstrap failed"));
  queue.Stop();
  queue.RunQueued();
  EXPECT_EQ(queued.Wait().message(), "bootstrap failed");
  EXPECT_TRUE(recorder.ran.empty());
}

}  // namespace
}  // namespace hvdrun
