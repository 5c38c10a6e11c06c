// Runtime::Join (Horovod's hvd.join) on 1-4 ranks as threads over real TCP (Gloo): ranks that run
// out of steps at different times, the joined ones standing in for the others' allreduces.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

// One named allreduce of every step.
using Tensor = testing::NamedTensor;

std::vector<Tensor> StepTensors() {
  return {
      {"w", DataType::kFloat32, ReduceOp::kAverage, 5},
      {"w2", DataType::kFloat32, ReduceOp::kAverage, 17},  // fused with "w" when fusion is on
      {"n", DataType::kInt64, ReduceOp::kSum, 3},
      {"n2", DataType::kInt64, ReduceOp::kSum, 6},
      {"d", DataType::kFloat64, ReduceOp::kAverage, 4},
      {"lo", DataType::kInt32, ReduceOp::kMin, 7},
      {"hi", DataType::kInt32, ReduceOp::kMax, 7},
      {"bf", DataType::kFloat32, ReduceOp::kSum, 9, CompressionFormat::kBFloat16},  // small integers: exact
  };
}

double Unit(size_t i) { return static_cast<double>(i % 7 + 1); }

// Rank r makes steps 0..r, then joins: step s is submitted by ranks s..size-1, the others (which
// have joined) add zeros. An average is divided by every rank, as Horovod does.
double Expected(const Tensor& tensor, int size, int step, size_t i) {
  double sum = 0;
  for (int rank = step; rank < size; ++rank) sum += (rank + 1) * Unit(i);
  const bool joined_ranks = step > 0;
  switch (tensor.op) {
    case ReduceOp::kSum:
      return sum;
    case ReduceOp::kAverage:
      return sum / size;
    case ReduceOp::kMin:
      return joined_ranks ? 0.0 : Unit(i);
    case ReduceOp::kMax:
      return size * Unit(i);
    case ReduceOp::kProduct: {  // a joined rank's zeros make it 0
      double product = 1;
      for (int rank = 0; rank < size; ++rank) product *= (rank + 1) * Unit(i);
      return joined_ranks ? 0.0 : product;
    }
  }
  return NAN;
}

void UnevenStepsThenJoin(Runtime& runtime, unsigned seed) {
  const std::vector<Tensor> tensors = StepTensors();
  std::mt19937 random(seed + static_cast<unsigned>(runtime.rank()) * 7919U);
  for (int step = 0; step <= runtime.rank(); ++step) {
    std::vector<size_t> order(tensors.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), random);
    testing::NamedAllreduceCheck check;
    check.value = [&](size_t i) { return (runtime.rank() + 1) * Unit(i); };
    check.expected = [&](const Tensor& tensor, size_t i) {
      return Expected(tensor, runtime.size(), step, i);
    };
    check.float32_relative_tolerance = 1e-6;
    check.where = " at step " + std::to_string(step);
    testing::SubmitAndCheckNamedAllreduces(runtime, tensors, order, check);
    if (::testing::Test::HasFatalFailure()) return;
  }
  StatusOr<int> last = runtime.Join();
  ASSERT_TRUE(last.ok()) << "rank " << runtime.rank() << ": " << last.status().message();
  // The rank with the most steps cannot join before the others have: its last step waits for them.
  EXPECT_EQ(last.value(), runtime.size() - 1) << "on rank " << runtime.rank();
}

NegotiationOptions Negotiation(bool fusion) {
  NegotiationOptions negotiation;
  negotiation.fusion_threshold_bytes = fusion ? size_t{1} << 20 : 0;
  return negotiation;
}

void RunNegotiated(int size, const NegotiationOptions& negotiation,
                   const std::function<void(Runtime&)>& body) {
  testing::RunRanks(size, body, CollectiveOrder::kNegotiated,
                    [&](RuntimeOptions& options) { options.negotiation = negotiation; });
}

class JoinTest : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(JoinTest, RanksWithFewerStepsStandInWithZerosUntilEveryRankJoins) {
  const int size = std::get<0>(GetParam());
  const bool fusion = std::get<1>(GetParam());
  RunNegotiated(size, Negotiation(fusion), [&](Runtime& runtime) {
    UnevenStepsThenJoin(runtime, 1);
    // Joined twice: the second round starts afresh, and the cache (warm now) agrees on the steps.
    UnevenStepsThenJoin(runtime, 2);
    const NegotiationCounters counters = runtime.negotiation_counters();
    if (fusion && size > 1) {
      EXPECT_LT(counters.responses, counters.tensors) << "rank " << runtime.rank();
    }
    if (!fusion) {
      EXPECT_EQ(counters.responses, counters.tensors) << "rank " << runtime.rank();
    }
  });
}

std::string JoinName(const ::testing::TestParamInfo<std::tuple<int, bool>>& param) {
  return std::to_string(std::get<0>(param.param)) + "Ranks" +
         (std::get<1>(param.param) ? "Fused" : "Unfused");
}

INSTANTIATE_TEST_SUITE_P(Ranks, JoinTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4), ::testing::Bool()), JoinName);

TEST(Join, BroadcastAllgatherAndBarrierFailWhileARankHasJoinedAndTheRuntimeGoesOn) {
  constexpr int kSize = 3;
  std::mutex mutex;
  std::vector<int> lasts;
  RunNegotiated(kSize, Negotiation(true), [&](Runtime& runtime) {
    StatusOr<int> last = 0;
    if (runtime.rank() == 0) {
      last = runtime.Join();
    } else {
      std::vector<int32_t> values(4, runtime.rank());
      std::vector<int32_t> gathered(size_t{4} * kSize);
      Status status = runtime.Broadcast(values.data(), values.size(), DataType::kInt32, 1);
      ASSERT_FALSE(status.ok());
      EXPECT_EQ(status.message(),
                "'(unnamed broadcast 1)': a broadcast of int32 x 4 from rank 1 cannot run while rank 0 has "
                "joined (Join): only allreduces run until every rank has joined, as in Horovod");
      status = runtime.Allgather(values.data(), gathered.data(), values.size(), DataType::kInt32);
      ASSERT_FALSE(status.ok());
      EXPECT_NE(status.message().find("allgather of int32 x 4 cannot run while rank 0 has joined"),
                std::string::npos)
          << status.message();
      status = runtime.Barrier();
      ASSERT_FALSE(status.ok());
      EXPECT_NE(status.message().find("barrier cannot run while rank 0 has joined"), std::string::npos)
          << status.message();
      // The runtime is not broken: an allreduce still runs, rank 0 adding zeros.
      status = runtime.Allreduce("x", values.data(), values.data(), values.size(), DataType::kInt32,
                                 ReduceOp::kSum);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_EQ(values[0], 1 + 2);
      last = runtime.Join();
    }
    ASSERT_TRUE(last.ok()) << "rank " << runtime.rank() << ": " << last.status().message();
    {
      std::lock_guard<std::mutex> lock(mutex);
      lasts.push_back(last.value());
    }
    // Ranks 1 and 2 made three unnamed calls that rank 0 did not: after Join they match again.
    std::vector<int32_t> root(2, runtime.rank() == 2 ? 42 : 0);
    Status status = runtime.Broadcast(root.data(), root.size(), DataType::kInt32, 2);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(root, std::vector<int32_t>(2, 42));
  });
  ASSERT_EQ(lasts.size(), static_cast<size_t>(kSize));
  EXPECT_NE(lasts[0], 0) << "rank 0 joined first";
  EXPECT_TRUE(std::all_of(lasts.begin(), lasts.end(), [&](int last) { return last == lasts[0]; }));
}

TEST(Join, ANamedBroadcastFailsWhileARankHasJoinedEvenWhenCached) {
  RunNegotiated(2, Negotiation(true), [&](Runtime& runtime) {
    int64_t value = runtime.rank() + 5;
    ASSERT_TRUE(runtime.Broadcast("p", &value, 1, DataType::kInt64, 1).ok());  // now in the cache
    EXPECT_EQ(value, 6);
    if (runtime.rank() == 0) {
      ASSERT_TRUE(runtime.Join().ok());
    } else {
      Status status = runtime.Broadcast("p", &value, 1, DataType::kInt64, 1);
      EXPECT_EQ(status.message(),
                "'p': a broadcast of int64 x 1 from rank 1 cannot run while rank 0 has joined (Join): only "
                "allreduces run until every rank has joined, as in Horovod");
      ASSERT_TRUE(runtime.Join().ok());
    }
    value = runtime.rank() + 7;
    ASSERT_TRUE(runtime.Broadcast("p", &value, 1, DataType::kInt64, 0).ok());
    EXPECT_EQ(value, 7);
  });
}

TEST(Join, ARankThatHasJoinedSubmitsNothingUntilJoinReturns) {
  constexpr int kAttempts = 10;
  RunNegotiated(2, Negotiation(true), [&](Runtime& runtime) {
    std::vector<float> values(kAttempts, 1.0F);
    if (runtime.rank() == 0) {
      std::thread joiner([&] { EXPECT_TRUE(runtime.Join().ok()); });
      // Once the join is under way (it waits for rank 1), a submission is refused; one made before
      // runs with rank 1's.
      std::string refused;
      for (int k = 0; k < kAttempts && refused.empty(); ++k) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        CollectiveHandle handle =
            runtime.AllreduceAsync("late" + std::to_string(k), &values[static_cast<size_t>(k)],
                                   &values[static_cast<size_t>(k)], 1, DataType::kFloat32, ReduceOp::kSum);
        if (handle.Ready() && !handle.Wait().ok()) refused = handle.Wait().message();
      }
      EXPECT_EQ(refused.rfind("'late", 0), 0U) << refused;
      EXPECT_NE(refused.find("': this rank has joined (Join) and submits nothing until Join returns"),
                std::string::npos)
          << refused;
      joiner.join();
    } else {
      // Rank 0 stands in with zeros for those it did not submit.
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      std::vector<CollectiveHandle> handles;
      handles.reserve(kAttempts);
      for (int k = 0; k < kAttempts; ++k) {
        handles.push_back(runtime.AllreduceAsync("late" + std::to_string(k), &values[static_cast<size_t>(k)],
                                                 &values[static_cast<size_t>(k)], 1, DataType::kFloat32,
                                                 ReduceOp::kSum));
      }
      for (CollectiveHandle& handle : handles) EXPECT_TRUE(handle.Wait().ok()) << handle.Wait().message();
      EXPECT_TRUE(runtime.Join().ok());
    }
  });
}

TEST(Join, NeedsNegotiation) {
  testing::RunRanks(1, [](Runtime& runtime) {
    StatusOr<int> last = runtime.Join();
    ASSERT_FALSE(last.ok());
    EXPECT_NE(
        last.status().message().find("Join needs a Runtime initialized with CollectiveOrder::kNegotiated"),
        std::string::npos);
  });
}

}  // namespace
}  // namespace hvdrun
