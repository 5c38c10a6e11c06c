// A rank busy in user code is no failure: the others wait for it past every timeout (Horovod's
// behaviour), and only the stall shutdown time, when set, ends the wait. A rank that is gone fails
// the others at once. Each rank is a thread with its own Runtime over real TCP (and the host's
// shared memory), with short limits so that each case takes seconds.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/in_memory_store.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// The bootstrap timeout (HOROVOD_GLOO_TIMEOUT_SECONDS) and the stall check time of these jobs; the
// busy rank works three times as long before its collective.
constexpr milliseconds kLimit{1000};
constexpr milliseconds kBusy{3 * kLimit};

struct Job {
  bool shared_memory = false;
  CollectiveOrder order = CollectiveOrder::kCallOrder;
  size_t count = 1;                // elements of the float32 allreduce: 1 (Gloo's direct exchange) or many
  milliseconds stall_shutdown{0};  // 0: none
  milliseconds busy = kBusy;       // how long rank 0 works before its collective
};

// Runs two ranks; rank 0 first works `job.busy` in user code. Each rank's allreduce status, and every
// line the ranks logged.
struct Outcome {
  std::vector<Status> status = std::vector<Status>(2);
  std::vector<std::vector<float>> result = std::vector<std::vector<float>>(2);
  std::vector<std::string> lines;
};

Outcome RunWithABusyRank(const Job& job) {
  Outcome outcome;
  std::mutex mutex;
  auto store = NewInMemoryStore();
  std::vector<std::thread> threads;
  threads.reserve(2);
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      RuntimeOptions options = testing::TestOptions(rank, 2, store, kLimit);
      options.shared_memory = job.shared_memory;
      options.order = job.order;
      options.negotiation.stall_warning = kLimit;
      options.negotiation.stall_shutdown = job.stall_shutdown;
      options.negotiation.warn = [&](const std::string& line) {
        std::lock_guard<std::mutex> lock(mutex);
        outcome.lines.push_back(line);
      };
      StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
      ASSERT_TRUE(runtime.ok()) << runtime.status().message();
      if (rank == 0) std::this_thread::sleep_for(job.busy);  // validation, a checkpoint...
      std::vector<float>& values = outcome.result[static_cast<size_t>(rank)];
      values.assign(job.count, static_cast<float>(rank + 1));
      outcome.status[static_cast<size_t>(rank)] =
          job.order == CollectiveOrder::kNegotiated
              ? runtime.value()->Allreduce("busy", values.data(), values.data(), job.count,
                                           DataType::kFloat32, ReduceOp::kSum)
              : runtime.value()->Allreduce(values.data(), values.data(), job.count, DataType::kFloat32,
                                           ReduceOp::kSum);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return outcome;
}

class BusyRankTest : public ::testing::TestWithParam<std::tuple<bool, CollectiveOrder, size_t>> {};

TEST_P(BusyRankTest, IsWaitedForPastTheTimeouts) {
  Job job;
  std::tie(job.shared_memory, job.order, job.count) = GetParam();
  Outcome outcome = RunWithABusyRank(job);
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_TRUE(outcome.status[rank].ok()) << "rank " << rank << ": " << outcome.status[rank].message();
    for (float value : outcome.result[rank]) ASSERT_EQ(value, 3.0F) << "rank " << rank;
  }
  if (job.order == CollectiveOrder::kCallOrder) {
    // The waiting rank's watchdog said what it waited in, while it waited.
    bool named = false;
    for (const std::string& line : outcome.lines) {
      named = named || line.rfind("watchdog: rank 1: '(unnamed allreduce 1)' (allreduce, " +
                                      std::to_string(job.count * 4) + " bytes) has been in the ",
                                  0) == 0;
    }
    EXPECT_TRUE(named) << "no watchdog line of rank 1 among " << outcome.lines.size();
    if (job.shared_memory) {  // the segment's arrivals name the rank waited for
      bool waiting_for = false;
      for (const std::string& line : outcome.lines) {
        waiting_for =
            waiting_for || line.find("; waiting for rank 0 (local rank 0, pid ") != std::string::npos;
      }
      EXPECT_TRUE(waiting_for) << "no watchdog line names rank 0";
    }
  }
}

std::string JobName(const ::testing::TestParamInfo<BusyRankTest::ParamType>& info) {
  const auto& [shared_memory, order, count] = info.param;
  return std::string(shared_memory ? "SharedMemory" : "Gloo") +
         (order == CollectiveOrder::kNegotiated ? "Negotiated" : "CallOrder") +
         (count > 1 ? "Large" : "Small");
}

INSTANTIATE_TEST_SUITE_P(TwoRanks, BusyRankTest,
                         ::testing::Values(std::make_tuple(false, CollectiveOrder::kCallOrder, size_t{1}),
                                           std::make_tuple(false, CollectiveOrder::kCallOrder,
                                                           size_t{1} << 16),
                                           std::make_tuple(true, CollectiveOrder::kCallOrder, size_t{1}),
                                           std::make_tuple(false, CollectiveOrder::kNegotiated, size_t{1})),
                         JobName);

// The stall shutdown time, when set, is the one limit of a wait for a live rank: the waiting rank's
// collective fails at it (as every such wait failed at the timeout before).
TEST(BusyRankLimitTest, TheStallShutdownTimeEndsTheWait) {
  for (bool shared_memory : {false, true}) {
    Job job;
    job.shared_memory = shared_memory;
    job.count = shared_memory ? 1 : size_t{1} << 16;  // through gloo::allreduce, whose wait says so
    job.stall_shutdown = kLimit;
    job.busy = kLimit + kLimit / 2;
    Outcome outcome = RunWithABusyRank(job);
    const std::string expected =
        shared_memory
            ? "shared memory: allreduce: rank(s) 0 did not arrive within the stall shutdown time (1000 "
              "ms, HOROVOD_STALL_SHUTDOWN_TIME_SECONDS)"
            : "Timed out waiting 1000ms for ";
    EXPECT_NE(outcome.status[1].message().find(expected), std::string::npos) << outcome.status[1].message();
  }
}

// A rank whose runtime is gone fails the others' next collective at once, far inside every limit,
// with the rank named (Gloo's allreduces of more than GlooExchange::kMaxBytes: its address).
TEST(GonePeerTest, FailsTheOthersAtOnce) {
  for (bool shared_memory : {false, true}) {
    for (size_t count : {size_t{1}, size_t{1} << 16}) {
      auto store = NewInMemoryStore();
      std::unique_ptr<Runtime> survivor;
      std::vector<std::thread> threads;
      threads.reserve(2);
      for (int rank = 0; rank < 2; ++rank) {
        threads.emplace_back([&, rank] {
          RuntimeOptions options = testing::TestOptions(rank, 2, store, milliseconds(30000));
          options.shared_memory = shared_memory;
          auto runtime = Runtime::Init(options);
          ASSERT_TRUE(runtime.ok()) << runtime.status().message();
          if (rank == 1) survivor = std::move(runtime).value();
          // Rank 0's runtime ends here: it exits.
        });
      }
      for (std::thread& thread : threads) thread.join();
      ASSERT_NE(survivor, nullptr);
      std::vector<float> values(count, 1.0F);
      const Clock::time_point started = Clock::now();
      Status failed =
          survivor->Allreduce(values.data(), values.data(), count, DataType::kFloat32, ReduceOp::kSum);
      EXPECT_LT(Clock::now() - started, milliseconds(5000));
      ASSERT_FALSE(failed.ok());
      const std::string expected =
          shared_memory ? "shared memory: rank 0 (local rank 0, pid " : "gloo: allreduce failed: ";
      EXPECT_EQ(failed.message().rfind(expected, 0), 0U) << failed.message();
      if (!shared_memory && count == 1) {  // Gloo's direct exchange knows the peer's rank
        EXPECT_NE(failed.message().find("with rank 0: "), std::string::npos) << failed.message();
      }
    }
  }
}

}  // namespace
}  // namespace hvdrun
