// Elastic runtimes (RuntimeOptions::elastic, docs/elastic.md) as threads over real TCP (Gloo) and one
// in-memory store, the test playing hvdrun's driver by writing the rounds' keys: re-initialization in
// the same process, a lost rank's recoverable error, the survivors' new round, a silent rank's wait
// ended by the next round, a removed worker, the assignment's timeout, a round that moved on, the
// hosts-updated counter, MPI's refusal.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hvdrun/error_kind.h"
#include "hvdrun/runtime.h"
#include "runtime/elastic/membership.h"
#include "runtime/elastic/round_store.h"
#include "runtime/in_memory_store.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Every waiting thread goes on once `count` have arrived.
class Latch {
 public:
  explicit Latch(int count) : left_(count) {}
  void ArriveAndWait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (--left_ == 0) arrived_.notify_all();
    arrived_.wait(lock, [this] { return left_ <= 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  int left_;
};

// Worker ids are unique per test, as hvdrun's are per job: the process remembers each one's round.
std::string WorkerId(const std::string& test, int rank) { return test + "/" + std::to_string(rank); }

RuntimeOptions ElasticOptionsFor(const std::string& test, int rank, int size,
                                 std::shared_ptr<KeyValueStore> store, CollectiveOrder order,
                                 bool shared_memory) {
  RuntimeOptions options = testing::TestOptions(rank, size, std::move(store), std::chrono::seconds(4));
  options.order = order;
  options.shared_memory = shared_memory;
  options.elastic.enabled = true;
  options.elastic.worker_id = WorkerId(test, rank);
  options.elastic.round = 0;
  options.elastic.assignment_timeout = std::chrono::seconds(20);
  return options;
}

// A float32 sum of `value` over the runtime's ranks.
Status SumOf(Runtime& runtime, float value, float* result) {
  *result = value;
  if (runtime.order() == CollectiveOrder::kNegotiated) {
    return runtime.Allreduce("sum", result, result, 1, DataType::kFloat32, ReduceOp::kSum);
  }
  return runtime.Allreduce(result, result, 1, DataType::kFloat32, ReduceOp::kSum);
}

TEST(RuntimeReinitTest, ARankDestroysItsRuntimeAndCreatesOneAgainInTheSameProcess) {
  for (const bool shared_memory : {false, true}) {
    testing::RunRanks(
        2,
        [](Runtime& first) {
          float sum = 0;
          ASSERT_TRUE(SumOf(first, 1.0F, &sum).ok());
          EXPECT_EQ(sum, 2.0F);
        },
        CollectiveOrder::kCallOrder,
        [shared_memory](RuntimeOptions& options) { options.shared_memory = shared_memory; });
    // Twice over one store: the second Runtime of each rank meets the others' second ones.
    auto store = NewInMemoryStore();
    std::vector<std::thread> ranks;
    ranks.reserve(2);
    for (int rank = 0; rank < 2; ++rank) {
      ranks.emplace_back([rank, store, shared_memory] {
        for (int time = 0; time < 2; ++time) {
          RuntimeOptions options = testing::TestOptions(rank, 2, store);
          options.shared_memory = shared_memory;
          StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
          ASSERT_TRUE(runtime.ok()) << runtime.status().message();
          float sum = 0;
          ASSERT_TRUE(SumOf(**runtime, static_cast<float>(rank + time), &sum).ok());
          EXPECT_EQ(sum, static_cast<float>(1 + 2 * time));
        }
      });
    }
    for (std::thread& rank : ranks) rank.join();
  }
}

struct LostRankCase {
  CollectiveOrder order;
  bool shared_memory;
};

class ElasticLostRankTest : public ::testing::TestWithParam<LostRankCase> {};

// Round 0 has 3 ranks; rank 2 leaves; the others' next allreduce fails with the recoverable error
// within the runtime's timeout (4 s) plus a margin; the test writes round 1 (the survivors, 2 ranks),
// and they re-initialize and reduce again.
TEST_P(ElasticLostRankTest, SurvivorsFailRecoverablyThenReformInTheNextRound) {
  const LostRankCase param = GetParam();
  const std::string test = std::string("lost-") +
                           (param.order == CollectiveOrder::kNegotiated ? "neg" : "call") +
                           (param.shared_memory ? "-shm" : "");
  auto store = NewInMemoryStore();
  Latch reduced(3);
  Latch failed(2);
  std::vector<std::thread> ranks;
  ranks.reserve(3);
  for (int rank = 0; rank < 3; ++rank) {
    ranks.emplace_back([&, rank] {
      RuntimeOptions options = ElasticOptionsFor(test, rank, 3, store, param.order, param.shared_memory);
      StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
      ASSERT_TRUE(runtime.ok()) << runtime.status().message();
      EXPECT_EQ((*runtime)->round(), 0);
      float sum = 0;
      Status first = SumOf(**runtime, 1.0F, &sum);
      reduced.ArriveAndWait();
      ASSERT_TRUE(first.ok()) << first.message();
      EXPECT_EQ(sum, 3.0F);
      if (rank == 2) return;  // leaves the job: its Runtime ends here
      const Clock::time_point start = Clock::now();
      Status lost = SumOf(**runtime, 1.0F, &sum);
      EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
      EXPECT_EQ(KindOf(lost), ErrorKind::kRecoverable) << lost.message();
      runtime->reset();
      failed.ArriveAndWait();
      // Re-initialization: waits for round 1's place, which the test writes meanwhile.
      StatusOr<std::unique_ptr<Runtime>> again = Runtime::Init(options);
      ASSERT_TRUE(again.ok()) << again.status().message();
      EXPECT_EQ((*again)->round(), 1);
      EXPECT_EQ((*again)->size(), 2);
      EXPECT_EQ((*again)->rank(), 1 - rank);  // the driver's new order
      Status reformed = SumOf(**again, static_cast<float>(10 + rank), &sum);
      ASSERT_TRUE(reformed.ok()) << reformed.message();
      EXPECT_EQ(sum, 21.0F);
    });
  }
  std::this_thread::sleep_for(milliseconds(200));
  ASSERT_TRUE(store->Set("elastic/1/rank/" + WorkerId(test, 0), "1 2 1 2 0 1 localhost").ok());
  ASSERT_TRUE(store->Set("elastic/1/rank/" + WorkerId(test, 1), "0 2 0 2 0 1 localhost").ok());
  ASSERT_TRUE(store->Set("elastic/round", "1").ok());
  for (std::thread& rank : ranks) rank.join();
}

INSTANTIATE_TEST_SUITE_P(Orders, ElasticLostRankTest,
                         ::testing::Values(LostRankCase{CollectiveOrder::kCallOrder, false},
                                           LostRankCase{CollectiveOrder::kNegotiated, false},
                                           LostRankCase{CollectiveOrder::kCallOrder, true},
                                           LostRankCase{CollectiveOrder::kNegotiated, true}));

// Rank 1 stays alive but silent, as a rank whose host's link was cut: rank 0's allreduce waits for
// it. Once the test writes round 1 (hvdrun's re-formation without the host), the round's watch ends
// the wait with the recoverable error (round_watch.h); when hvdrun has announced new hosts first
// (hosts_updated moved), the round goes on and the allreduce completes once rank 1 calls it.
TEST(ElasticRoundWatchTest, ACollectiveWaitingForASilentPeerEndsWhenTheJobMovesOnWithoutNewHosts) {
  for (const bool hosts_added : {false, true}) {
    const std::string test = hosts_added ? "silent-grow" : "silent";
    auto store = NewInMemoryStore();
    // Without the watch the wait would last for the backend's limit: 20 s, not the default 30 days.
    const auto options = [&](int rank) {
      RuntimeOptions bounded = ElasticOptionsFor(test, rank, 2, store, CollectiveOrder::kCallOrder, false);
      bounded.negotiation.stall_shutdown = std::chrono::seconds(20);
      return bounded;
    };
    Latch started(3);
    std::promise<void> speak;
    std::shared_future<void> spoken = speak.get_future().share();
    Status waited;
    Clock::duration took{};
    std::thread silent([&] {
      StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options(1));
      started.ArriveAndWait();
      ASSERT_TRUE(runtime.ok()) << runtime.status().message();
      spoken.wait();
      float sum = 0;
      Status late = SumOf(**runtime, 2.0F, &sum);
      if (hosts_added) {
        EXPECT_TRUE(late.ok()) << late.message();
      }
    });
    std::thread waiting([&] {
      StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options(0));
      started.ArriveAndWait();
      ASSERT_TRUE(runtime.ok()) << runtime.status().message();
      const Clock::time_point start = Clock::now();
      float sum = 0;
      waited = SumOf(**runtime, 1.0F, &sum);
      took = Clock::now() - start;
      if (waited.ok()) {
        EXPECT_EQ(sum, 3.0F);
      }
    });
    started.ArriveAndWait();
    std::this_thread::sleep_for(milliseconds(300));
    if (hosts_added) {
      ASSERT_TRUE(store->Add("elastic/hosts_updated", 1).ok());
    }
    ASSERT_TRUE(store->Set("elastic/round", "1").ok());
    if (hosts_added) std::this_thread::sleep_for(milliseconds(1500));
    if (!hosts_added) waiting.join();
    speak.set_value();
    if (hosts_added) waiting.join();
    silent.join();
    if (hosts_added) {
      EXPECT_TRUE(waited.ok()) << waited.message();
      EXPECT_GE(took, milliseconds(1500));  // still waiting when round 1 was 1.5 s old
    } else {
      EXPECT_EQ(KindOf(waited), ErrorKind::kRecoverable) << waited.message();
      EXPECT_LT(took, std::chrono::seconds(5));
    }
  }
}

// As above, in a process set of both ranks: the set's engine opens sockets of its own after the
// runtime started (AddProcessSet), and the watch ends those too once the job moves on.
TEST(ElasticRoundWatchTest, ASetsCollectiveWaitingForASilentPeerEndsWhenTheJobMovesOn) {
  auto store = NewInMemoryStore();
  const auto options = [&](int rank) {
    RuntimeOptions bounded =
        ElasticOptionsFor("silent-set", rank, 2, store, CollectiveOrder::kCallOrder, false);
    bounded.negotiation.stall_shutdown = std::chrono::seconds(20);
    return bounded;
  };
  Latch started(3);
  std::promise<void> done;
  std::shared_future<void> finished = done.get_future().share();
  Status waited;
  Clock::duration took{};
  std::thread silent([&] {
    StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options(1));
    ASSERT_TRUE(runtime.ok()) << runtime.status().message();
    StatusOr<int> set = (*runtime)->AddProcessSet({0, 1});
    started.ArriveAndWait();
    ASSERT_TRUE(set.ok()) << set.status().message();
    finished.wait();  // silent until rank 0's wait has ended
  });
  std::thread waiting([&] {
    StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options(0));
    ASSERT_TRUE(runtime.ok()) << runtime.status().message();
    StatusOr<int> set = (*runtime)->AddProcessSet({0, 1});
    started.ArriveAndWait();
    ASSERT_TRUE(set.ok()) << set.status().message();
    const Clock::time_point start = Clock::now();
    float sum = 1.0F;
    waited = (*runtime)->Allreduce(&sum, &sum, 1, DataType::kFloat32, ReduceOp::kSum, set.value());
    took = Clock::now() - start;
    done.set_value();
  });
  started.ArriveAndWait();
  std::this_thread::sleep_for(milliseconds(300));
  ASSERT_TRUE(store->Set("elastic/round", "1").ok());
  waiting.join();
  silent.join();
  EXPECT_EQ(KindOf(waited), ErrorKind::kRecoverable) << waited.message();
  EXPECT_LT(took, std::chrono::seconds(5));  // the set's own limit: the 20 s stall shutdown
}

// A one-rank elastic runtime of `test` over `store`, initialized for round 0.
std::unique_ptr<Runtime> OneRank(const std::string& test, const std::shared_ptr<KeyValueStore>& store,
                                 RuntimeOptions* options) {
  *options = ElasticOptionsFor(test, 0, 1, store, CollectiveOrder::kCallOrder, false);
  StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(*options);
  EXPECT_TRUE(runtime.ok()) << runtime.status().message();
  return runtime.ok() ? std::move(runtime).value() : nullptr;
}

TEST(ElasticRuntimeTest, AWorkerWithNoPlaceInTheNewRoundIsRemoved) {
  auto store = NewInMemoryStore();
  RuntimeOptions options;
  std::unique_ptr<Runtime> runtime = OneRank("removed", store, &options);
  ASSERT_NE(runtime, nullptr);
  runtime.reset();
  ASSERT_TRUE(store->Set("elastic/3/rank/" + WorkerId("removed", 0), "removed").ok());
  ASSERT_TRUE(store->Set("elastic/round", "3").ok());
  StatusOr<std::unique_ptr<Runtime>> again = Runtime::Init(options);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(KindOf(again.status()), ErrorKind::kRemoved) << again.status().message();
  EXPECT_EQ(
      again.status().message(),
      "elastic: this worker has no place in the job's new round (elastic/3/rank/removed/0 is 'removed') "
      "[elastic: removed]");
}

TEST(ElasticRuntimeTest, ReinitializationGivesUpAfterTheAssignmentTimeout) {
  auto store = NewInMemoryStore();
  RuntimeOptions options;
  std::unique_ptr<Runtime> runtime = OneRank("timeout", store, &options);
  ASSERT_NE(runtime, nullptr);
  runtime.reset();
  options.elastic.assignment_timeout = milliseconds(300);
  const Clock::time_point start = Clock::now();
  StatusOr<std::unique_ptr<Runtime>> again = Runtime::Init(options);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(KindOf(again.status()), ErrorKind::kOther);
  EXPECT_EQ(again.status().message(),
            "elastic: worker 'timeout/0' got no place in a round after round 0 within 300 ms "
            "(HVDRUN_ELASTIC_TIMEOUT_SECONDS; the newest round is 0)");
}

TEST(ElasticRuntimeTest, KeysOfARoundAreUnderItsPrefix) {
  auto store = NewInMemoryStore();
  RuntimeOptions options;
  std::unique_ptr<Runtime> runtime = OneRank("prefix", store, &options);
  ASSERT_NE(runtime, nullptr);
  EXPECT_TRUE(store->Get("r0/runtime/instances/rank0", milliseconds(0)).ok());
  EXPECT_FALSE(store->Get("runtime/instances/rank0", milliseconds(0)).ok());
}

TEST(ElasticRuntimeTest, ARuntimeWaitingForARoundThatIsOverFailsRecoverably) {
  auto store = NewInMemoryStore();
  ASSERT_TRUE(store->Set("elastic/round", "1").ok());
  RuntimeOptions options = ElasticOptionsFor("over", 0, 2, store, CollectiveOrder::kCallOrder, false);
  options.timeout = std::chrono::seconds(30);
  const Clock::time_point start = Clock::now();
  StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);  // rank 1 never comes
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(KindOf(runtime.status()), ErrorKind::kRecoverable) << runtime.status().message();
  EXPECT_NE(runtime.status().message().find("elastic round 0 is over: the job is in round 1"),
            std::string::npos)
      << runtime.status().message();
}

TEST(RoundStoreTest, KeysAreUnderTheRoundAndATimeOutNamesTheWholeWait) {
  auto store = NewInMemoryStore();
  RoundStore round(store, 2);
  ASSERT_TRUE(round.Set("k", "v").ok());
  EXPECT_EQ(store->Get("r2/k", milliseconds(0)).value_or(""), "v");
  StatusOr<std::string> missing = round.Get("absent", milliseconds(1200));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "store: timed out after 1.2 s waiting for key 'r2/absent'");
  Status waited = round.Wait({"k", "absent"}, milliseconds(700));
  EXPECT_NE(waited.message().find("timed out after 700 ms waiting for"), std::string::npos)
      << waited.message();
}

TEST(ElasticRuntimeTest, HostsUpdatedSaysWhetherTheCounterMovedSinceInit) {
  auto store = NewInMemoryStore();
  RuntimeOptions options;
  std::unique_ptr<Runtime> runtime = OneRank("hosts", store, &options);
  ASSERT_NE(runtime, nullptr);
  StatusOr<bool> before = runtime->HostsUpdated();
  ASSERT_TRUE(before.ok()) << before.status().message();
  EXPECT_FALSE(before.value());
  ASSERT_TRUE(store->Add("elastic/hosts_updated", 1).ok());
  StatusOr<bool> after = runtime->HostsUpdated();
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_TRUE(after.value());
}

TEST(ElasticRuntimeTest, MpiJobsAreNotElastic) {
  RuntimeOptions options =
      ElasticOptionsFor("mpi", 0, 1, NewInMemoryStore(), CollectiveOrder::kCallOrder, false);
  options.backend = BackendKind::kMpi;
  StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(
      runtime.status().message(),
      "Runtime::Init: MPI jobs are not elastic (HVDRUN_ELASTIC=1): run an elastic job with --gloo or --nccl");
}

TEST(ElasticPlaceTest, ParsesHvdrunsAssignmentAndRefusesMalformedOnes) {
  StatusOr<ElasticPlace> place = ParseElasticPlace("k", "3 4 1 2 1 2 node-b");
  ASSERT_TRUE(place.ok()) << place.status().message();
  EXPECT_EQ(place->rank, 3);
  EXPECT_EQ(place->size, 4);
  EXPECT_EQ(place->local_rank, 1);
  EXPECT_EQ(place->local_size, 2);
  EXPECT_EQ(place->cross_rank, 1);
  EXPECT_EQ(place->cross_size, 2);
  EXPECT_EQ(place->hostname, "node-b");
  for (const char* bad : {"", "1 2 0 1 0 1", "2 2 0 1 0 1 h", "a 2 0 1 0 1 h", "0 2 0 1 0 1 h x"}) {
    StatusOr<ElasticPlace> refused = ParseElasticPlace("k", bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().message(), std::string("elastic: k is '") + bad +
                                              "', not 'RANK SIZE LOCAL_RANK LOCAL_SIZE CROSS_RANK CROSS_SIZE "
                                              "HOSTNAME' or 'removed'");
  }
  EXPECT_EQ(KindOf(ParseElasticPlace("k", "removed").status()), ErrorKind::kRemoved);
  EXPECT_EQ(ElasticPlaceKey(2, "h/0/1"), "elastic/2/rank/h/0/1");
}

}  // namespace
}  // namespace hvdrun
