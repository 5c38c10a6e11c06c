// Process sets (Runtime::AddProcessSet and the process_set argument) on 4 ranks as threads over real
// TCP: overlapping sets used concurrently from several threads, in both collective orders, over Gloo
// alone and through shared memory; registration before and after collectives; removal; calls on a
// set the rank is not in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

constexpr int kRanks = 4;
const std::vector<std::vector<int>> kSets = {{0, 1}, {1, 2, 3}, {0, 2}};

// Rank r's element i.
int64_t Value(int rank, size_t i) { return int64_t{rank + 1} * 10 + static_cast<int64_t>(i % 7); }

bool Contains(const std::vector<int>& ranks, int rank) {
  return std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
}

// A reducescatter of 5 rows of 3 (an uneven split over 2, 3 or 4 ranks) on set `id`, this rank's
// part checked against what one process computes from every member's values.
void ReducescatterInSet(Runtime& runtime, int id, const std::vector<int>& ranks, const std::string& name,
                        int step) {
  constexpr size_t kRow = 3;
  constexpr size_t kCount = 5 * kRow;
  const int me = runtime.rank();
  const std::string where = " in set " + std::to_string(id) + " on rank " + std::to_string(me);
  const int place = static_cast<int>(std::find(ranks.begin(), ranks.end(), me) - ranks.begin());
  std::vector<int64_t> send(kCount);
  for (size_t i = 0; i < kCount; ++i) send[i] = Value(me, i) + step;
  const size_t own = runtime.ReducescatterCount(kCount, kRow, place, id);
  std::vector<int64_t> part(std::max<size_t>(own, 1));
  Status status = runtime.Reducescatter(name, send.data(), part.data(), kCount, DataType::kInt64,
                                        ReduceOp::kSum, kRow, id);
  ASSERT_TRUE(status.ok()) << status.message() << where;
  size_t first = 0;
  for (int before = 0; before < place; ++before) {
    first += runtime.ReducescatterCount(kCount, kRow, before, id);
  }
  for (size_t j = 0; j < own; ++j) {
    int64_t expected = 0;
    for (int rank : ranks) expected += Value(rank, first + j) + step;
    ASSERT_EQ(part[j], expected) << "reducescatter[" << first + j << "]" << where;
  }
}

// Steps of allreduce, allgather, broadcast, barrier (and, named, reducescatter) on set `id` (its job
// ranks `ranks`), each result checked against what one process computes from every member's values.
void Exercise(Runtime& runtime, int id, const std::vector<int>& ranks, bool named) {
  const int me = runtime.rank();
  const std::string where = " in set " + std::to_string(id) + " on rank " + std::to_string(me);
  constexpr size_t kCount = 33;
  for (int step = 0; step < 5; ++step) {
    std::vector<int64_t> sum(kCount);
    for (size_t i = 0; i < kCount; ++i) sum[i] = Value(me, i) + step;
    const std::string name = "s" + std::to_string(id) + "." + std::to_string(step);
    Status status =
        named ? runtime.Allreduce(name, sum.data(), sum.data(), kCount, DataType::kInt64, ReduceOp::kSum, id)
              : runtime.Allreduce(sum.data(), sum.data(), kCount, DataType::kInt64, ReduceOp::kSum, id);
    ASSERT_TRUE(status.ok()) << status.message() << where;
    for (size_t i = 0; i < kCount; ++i) {
      int64_t expected = 0;
      for (int rank : ranks) expected += Value(rank, i) + step;
      ASSERT_EQ(sum[i], expected) << "allreduce[" << i << "]" << where;
    }
    int64_t mine = Value(me, 0) + step;
    std::vector<int64_t> gathered(ranks.size());
    status = named
                 ? runtime.AllgatherAsync(name + "g", &mine, gathered.data(), 1, DataType::kInt64, id).Wait()
                 : runtime.Allgather(&mine, gathered.data(), 1, DataType::kInt64, id);
    ASSERT_TRUE(status.ok()) << status.message() << where;
    for (size_t k = 0; k < ranks.size(); ++k) ASSERT_EQ(gathered[k], Value(ranks[k], 0) + step) << where;
    const int root = ranks[static_cast<size_t>(step) % ranks.size()];
    int64_t value = Value(me, 1) + step;
    status = named ? runtime.Broadcast(name + "b", &value, 1, DataType::kInt64, root, id)
                   : runtime.Broadcast(&value, 1, DataType::kInt64, root, id);
    ASSERT_TRUE(status.ok()) << status.message() << where;
    ASSERT_EQ(value, Value(root, 1) + step) << "broadcast from job rank " << root << where;
    status = runtime.Barrier(id);
    ASSERT_TRUE(status.ok()) << status.message() << where;
    if (named) ReducescatterInSet(runtime, id, ranks, name + "r", step);
  }
}

// Every set this rank is in, and the whole job, each from a thread of its own at once.
void ExerciseConcurrently(Runtime& runtime, const std::vector<int>& ids, bool named) {
  std::vector<std::thread> threads;
  for (size_t s = 0; s < ids.size(); ++s) {
    if (!Contains(kSets[s], runtime.rank())) continue;
    threads.emplace_back([&runtime, &ids, s, named] { Exercise(runtime, ids[s], kSets[s], named); });
  }
  threads.emplace_back([&runtime, named] { Exercise(runtime, 0, {0, 1, 2, 3}, named); });
  for (std::thread& thread : threads) thread.join();
}

class ProcessSetTest : public ::testing::TestWithParam<std::tuple<CollectiveOrder, bool>> {
 protected:
  CollectiveOrder order() const { return std::get<0>(GetParam()); }
  bool named() const { return order() == CollectiveOrder::kNegotiated; }
  std::function<void(RuntimeOptions&)> configure() const {
    const bool shared_memory = std::get<1>(GetParam());
    return [shared_memory](RuntimeOptions& options) { options.shared_memory = shared_memory; };
  }
};

TEST_P(ProcessSetTest, OverlappingSetsRunConcurrentlyWithExactResults) {
  testing::RunRanks(
      kRanks,
      [this](Runtime& runtime) {
        std::vector<int> ids;
        for (const std::vector<int>& ranks : kSets) {  // static: before the first collective
          StatusOr<int> id = runtime.AddProcessSet(ranks);
          ASSERT_TRUE(id.ok()) << id.status().message();
          ids.push_back(id.value());
        }
        EXPECT_EQ(ids, (std::vector<int>{1, 2, 3}));
        for (size_t s = 0; s < kSets.size(); ++s) {
          const bool member = Contains(kSets[s], runtime.rank());
          EXPECT_EQ(runtime.ProcessSetIncluded(ids[s]).value(), member);
          EXPECT_EQ(runtime.ProcessSetSize(ids[s]).value(), static_cast<int>(kSets[s].size()));
          if (member) {
            const auto place = std::find(kSets[s].begin(), kSets[s].end(), runtime.rank()) - kSets[s].begin();
            EXPECT_EQ(runtime.ProcessSetRank(ids[s]).value(), static_cast<int>(place));
          }
        }
        ExerciseConcurrently(runtime, ids, named());
      },
      order(), configure());
}

TEST_P(ProcessSetTest, DynamicSetsAreAddedAndRemovedBetweenCollectives) {
  testing::RunRanks(
      kRanks,
      [this](Runtime& runtime) {
        Exercise(runtime, 0, {0, 1, 2, 3}, named());
        std::vector<int> ids(kSets.size());
        for (size_t s = 0; s < kSets.size(); ++s) ids[s] = runtime.AddProcessSet(kSets[s]).value();
        ExerciseConcurrently(runtime, ids, named());
        for (int id : ids) ASSERT_TRUE(runtime.RemoveProcessSet(id).ok());
        EXPECT_EQ(runtime.ProcessSetIds(), std::vector<int>{0});
        // Ids are never reused; the job goes on.
        StatusOr<int> again = runtime.AddProcessSet({3, 1});
        ASSERT_TRUE(again.ok()) << again.status().message();
        EXPECT_EQ(again.value(), 4);
        if (runtime.rank() == 1 || runtime.rank() == 3) Exercise(runtime, 4, {1, 3}, named());
        Exercise(runtime, 0, {0, 1, 2, 3}, named());
      },
      order(), configure());
}

TEST_P(ProcessSetTest, ACallOnASetTheRankIsNotInIsAOneLineErrorAndTheJobGoesOn) {
  testing::RunRanks(
      kRanks,
      [this](Runtime& runtime) {
        const int id = runtime.AddProcessSet({0, 1}).value();
        if (runtime.rank() >= 2) {
          int64_t value = 1;
          Status refused = runtime.Allreduce(&value, &value, 1, DataType::kInt64, ReduceOp::kSum, id);
          ASSERT_FALSE(refused.ok());
          EXPECT_EQ(refused.message(), "Allreduce: rank " + std::to_string(runtime.rank()) +
                                           " is not in process set 1 (ranks 0,1)");
          EXPECT_FALSE(runtime.ProcessSetRank(id).ok());
          Status unknown = runtime.Barrier(9);
          EXPECT_EQ(unknown.message(), "Barrier: no process set 9 is registered");
        } else {
          int64_t value = 1;
          Status outside = runtime.Broadcast(&value, 1, DataType::kInt64, 3, id);
          EXPECT_EQ(outside.message(), "Broadcast: root 3 is not in process set 1 (ranks 0,1)");
          Exercise(runtime, id, {0, 1}, named());
        }
        Exercise(runtime, 0, {0, 1, 2, 3}, named());
        EXPECT_FALSE(runtime.AddProcessSet({0, 4}).ok());
        EXPECT_FALSE(runtime.RemoveProcessSet(0).ok());
      },
      order(), configure());
}

INSTANTIATE_TEST_SUITE_P(OrdersAndPaths, ProcessSetTest,
                         ::testing::Combine(::testing::Values(CollectiveOrder::kCallOrder,
                                                              CollectiveOrder::kNegotiated),
                                            ::testing::Bool()));

TEST(ProcessSet, RemovingASetWithAPendingCollectiveIsRefused) {
  testing::RunRanks(
      2,
      [](Runtime& runtime) {
        const int id = runtime.AddProcessSet({0, 1}).value();
        int64_t value = runtime.rank() + 1;
        CollectiveHandle handle;
        if (runtime.rank() == 0) {
          handle = runtime.AllreduceAsync("late", &value, &value, 1, DataType::kInt64, ReduceOp::kSum, id);
          Status refused = runtime.RemoveProcessSet(id);
          EXPECT_EQ(refused.message(),
                    "RemoveProcessSet: process set 1 (ranks 0,1) has 1 collective(s) pending on rank 0; wait "
                    "for them first");
        }
        ASSERT_TRUE(runtime.Barrier().ok());
        if (runtime.rank() == 1) {
          handle = runtime.AllreduceAsync("late", &value, &value, 1, DataType::kInt64, ReduceOp::kSum, id);
        }
        ASSERT_TRUE(handle.Wait().ok());
        EXPECT_EQ(value, 3);
        EXPECT_TRUE(runtime.RemoveProcessSet(id).ok());
      },
      CollectiveOrder::kNegotiated);
}

}  // namespace
}  // namespace hvdrun
