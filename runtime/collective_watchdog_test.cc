#include "runtime/collective_watchdog.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/watched_backend.h"

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

// A backend whose allreduce never comes back by itself (a peer hung inside the library): it returns
// only once aborted, or, for a backend that cannot abort, after `release_after`.
class StuckBackend : public Backend {
 public:
  StuckBackend(bool can_abort, milliseconds release_after)
      : can_abort_(can_abort), release_after_(release_after) {}

  Status Allreduce(const void*, void*, size_t, DataType, ReduceOp) override {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, release_after_, [this] { return aborted_; });
    return aborted_ ? Status::Error("fake: the communicator was aborted") : Status::Ok();
  }
  Status Broadcast(void*, size_t, DataType, int) override { return Status::Ok(); }
  Status Allgather(const void*, void*, size_t, DataType) override { return Status::Ok(); }
  Status Alltoall(const void*, void*, size_t, DataType) override { return Status::Ok(); }
  Status Barrier() override { return Status::Ok(); }
  Status BaselineAllreduce(void*, size_t, DataType, ReduceOp) override { return Status::Ok(); }
  bool RequestAbort() override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++abort_requests_;
    if (!can_abort_) return false;
    aborted_ = true;
    changed_.notify_all();
    return true;
  }
  int abort_requests() {
    std::lock_guard<std::mutex> lock(mutex_);
    return abort_requests_;
  }

 private:
  const bool can_abort_;
  const milliseconds release_after_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool aborted_ = false;
  int abort_requests_ = 0;
};

struct Watched {
  StuckBackend* fake = nullptr;
  std::unique_ptr<WatchedBackend> backend;
  std::shared_ptr<std::vector<std::string>> lines = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<std::mutex> mutex = std::make_shared<std::mutex>();

  std::vector<std::string> Lines() const {
    std::lock_guard<std::mutex> lock(*mutex);
    return *lines;
  }
};

Watched Watch(bool can_abort, milliseconds release_after, milliseconds warn_after, milliseconds abort_after) {
  Watched watched;
  auto fake = std::make_unique<StuckBackend>(can_abort, release_after);
  watched.fake = fake.get();
  WatchdogSettings settings;
  settings.rank = 1;
  settings.backend = "fake";
  settings.waiting_for = ", after every rank submitted it";
  settings.warn_after = warn_after;
  settings.abort_after = abort_after;
  settings.log = [lines = watched.lines, mutex = watched.mutex](const std::string& line) {
    std::lock_guard<std::mutex> lock(*mutex);
    lines->push_back(line);
  };
  watched.backend = std::make_unique<WatchedBackend>(std::move(fake), std::move(settings));
  return watched;
}

// The fake's collective never returns: the watchdog names it while it is stuck, and at the stall
// shutdown time asks the backend to abort; the waiting caller gets the watchdog's error.
TEST(CollectiveWatchdogTest, NamesAStuckCollectiveAndAbortsItAtTheShutdownTime) {
  Watched watched = Watch(/*can_abort=*/true, milliseconds(20000), milliseconds(100), milliseconds(400));
  watched.backend->set_label("'grad.layer4'");
  std::vector<float> tensor(16);
  const auto started = std::chrono::steady_clock::now();
  Status status = watched.backend->Allreduce(tensor.data(), tensor.data(), tensor.size(), DataType::kFloat32,
                                             ReduceOp::kSum);
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(
      status.message(),
      "watchdog: 'grad.layer4' (allreduce, 64 bytes) was still in the fake backend on rank 1 at the stall "
      "shutdown time (400 ms, HOROVOD_STALL_SHUTDOWN_TIME_SECONDS) and was aborted: fake: the "
      "communicator was aborted");
  EXPECT_GE(took, milliseconds(400));
  EXPECT_LT(took, milliseconds(5000));
  EXPECT_EQ(watched.fake->abort_requests(), 1);
  const std::vector<std::string> lines = watched.Lines();
  ASSERT_FALSE(lines.empty());
  EXPECT_LE(lines.size(), 4u) << "one line per warning period, never more often";
  EXPECT_EQ(lines[0].rfind(
                "watchdog: rank 1: 'grad.layer4' (allreduce, 64 bytes) has been in the fake backend for ", 0),
            0u)
      << lines[0];
  EXPECT_NE(
      lines[0].find(", after every rank submitted it; it is aborted at 400 ms (the stall shutdown time)"),
      std::string::npos)
      << lines[0];
}

// Without a shutdown time the watchdog only warns, and the call returns whatever the backend says.
TEST(CollectiveWatchdogTest, WarnsWithoutAbortingWhenNoShutdownTimeIsSet) {
  Watched watched = Watch(/*can_abort=*/true, milliseconds(500), milliseconds(100), milliseconds(0));
  std::vector<double> tensor(2);
  Status status = watched.backend->Allreduce(tensor.data(), tensor.data(), tensor.size(), DataType::kFloat64,
                                             ReduceOp::kSum);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(watched.fake->abort_requests(), 0);
  const std::vector<std::string> lines = watched.Lines();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(
      lines[0].rfind("watchdog: rank 1: a call (allreduce, 16 bytes) has been in the fake backend for ", 0),
      0u)
      << lines[0];
  EXPECT_NE(lines[0].find("no stall shutdown time is set (HOROVOD_STALL_SHUTDOWN_TIME_SECONDS), so it waits"),
            std::string::npos)
      << lines[0];
}

// A backend that cannot abort from another thread keeps its own result (its own limit ends the call).
TEST(CollectiveWatchdogTest, ABackendThatCannotAbortKeepsItsResult) {
  Watched watched = Watch(/*can_abort=*/false, milliseconds(500), milliseconds(100), milliseconds(200));
  std::vector<float> tensor(1);
  Status status =
      watched.backend->Allreduce(tensor.data(), tensor.data(), 1, DataType::kFloat32, ReduceOp::kSum);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_GE(watched.fake->abort_requests(), 1);
}

// A collective that comes back in time is never mentioned.
TEST(CollectiveWatchdogTest, SaysNothingOfQuickCalls) {
  Watched watched = Watch(/*can_abort=*/true, milliseconds(0), milliseconds(100), milliseconds(200));
  std::vector<float> tensor(4);
  for (int call = 0; call < 20; ++call) {
    ASSERT_TRUE(
        watched.backend->Allreduce(tensor.data(), tensor.data(), 4, DataType::kFloat32, ReduceOp::kSum).ok());
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_TRUE(watched.Lines().empty());
  EXPECT_EQ(watched.fake->abort_requests(), 0);
}

TEST(CollectiveWatchdogTest, WatchdogTimeFollowsTheStallCheck) {
  NegotiationOptions negotiation;
  negotiation.stall_warning = milliseconds(60000);
  EXPECT_EQ(WatchdogTime(negotiation), milliseconds(60000));
  negotiation.watchdog = milliseconds(5000);
  EXPECT_EQ(WatchdogTime(negotiation), milliseconds(5000));
  negotiation.stall_check = false;
  EXPECT_EQ(WatchdogTime(negotiation), milliseconds(0));
}

}  // namespace
}  // namespace hvdrun
