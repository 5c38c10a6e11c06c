// Tensors of the same element count but different shapes on different ranks (Runtime::SetCallerShape):
// every collective kind fails on every rank with one line naming both ranks and shapes, as Horovod's
// coordinator refuses them, and the runtime goes on. On 2, 3 and 4 ranks as threads over real TCP (Gloo).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

using Shape = std::vector<int64_t>;

// The last rank gives `odd`, the others `shape`.
Shape ShapeOf(const Runtime& runtime, const Shape& shape, const Shape& odd) {
  return runtime.rank() == runtime.size() - 1 ? odd : shape;
}

// Runs body on `size` negotiated ranks; each rank's caller shape is cleared when body returns.
void RunShapedRanks(int size, const std::function<void(Runtime&)>& body) {
  testing::RunRanks(
      size,
      [&](Runtime& runtime) {
        body(runtime);
        Runtime::SetCallerShape({});
      },
      CollectiveOrder::kNegotiated);
}

// After a failure, a later collective of another name still runs on every rank.
void ExpectLaterAllreduceRuns(Runtime& runtime) {
  Runtime::SetCallerShape({2});
  std::vector<float> values(2, 1.0F);
  Status status =
      runtime.Allreduce("after", values.data(), values.data(), 2, DataType::kFloat32, ReduceOp::kSum);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(values, std::vector<float>(2, static_cast<float>(runtime.size())));
}

// The mismatch of `name` between `usual` (every rank but the last) and `odd` (the last rank's): the
// first rank named is whichever the negotiation compared the last one with.
void ExpectMismatch(const Status& status, int size, const std::string& name, const std::string& usual,
                    const std::string& odd) {
  bool found = false;
  for (int rank = 0; rank < size - 1; ++rank) {
    found = found || status.message() == "'" + name + "' was submitted as " + usual + " by rank " +
                                             std::to_string(rank) + " but as " + odd + " by rank " +
                                             std::to_string(size - 1);
  }
  EXPECT_TRUE(found) << status.message();
}

class ShapeMismatch : public ::testing::TestWithParam<int> {};

TEST_P(ShapeMismatch, AllreduceFailsOnEveryRankAndACachedNameMissesTheCache) {
  const int size = GetParam();
  RunShapedRanks(size, [&](Runtime& runtime) {
    std::vector<float> values(6, 1.0F);
    // Cached first under [2, 3] everywhere: the changed shape must not pass as a cache hit.
    Runtime::SetCallerShape({2, 3});
    Status status =
        runtime.Allreduce("w", values.data(), values.data(), 6, DataType::kFloat32, ReduceOp::kSum);
    ASSERT_TRUE(status.ok()) << status.message();
    Runtime::SetCallerShape(ShapeOf(runtime, {2, 3}, {3, 2}));
    status = runtime.Allreduce("w", values.data(), values.data(), 6, DataType::kFloat32, ReduceOp::kSum);
    ASSERT_FALSE(status.ok());
    ExpectMismatch(status, size, "w", "allreduce of float32 x 6 sum, shape [2, 3]",
                   "allreduce of float32 x 6 sum, shape [3, 2]");
    // The same name in one shape everywhere runs again.
    Runtime::SetCallerShape({3, 2});
    values.assign(6, 1.0F);
    status = runtime.Allreduce("w", values.data(), values.data(), 6, DataType::kFloat32, ReduceOp::kSum);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(values, std::vector<float>(6, static_cast<float>(size)));
  });
}

TEST_P(ShapeMismatch, InAGroupOfAllreducesOnlyTheMismatchedOneFails) {
  const int size = GetParam();
  RunShapedRanks(size, [&](Runtime& runtime) {
    std::vector<std::vector<float>> values(3, std::vector<float>(4, 1.0F));
    std::vector<CollectiveHandle> handles;
    for (size_t i = 0; i < values.size(); ++i) {
      Runtime::SetCallerShape(i == 1 ? ShapeOf(runtime, {4}, {2, 2}) : Shape{4});
      handles.push_back(runtime.AllreduceAsync("group." + std::to_string(i), values[i].data(),
                                               values[i].data(), 4, DataType::kFloat32, ReduceOp::kSum));
    }
    for (size_t i = 0; i < values.size(); ++i) {
      Status status = handles[i].Wait();
      if (i == 1) {
        ExpectMismatch(status, size, "group.1", "allreduce of float32 x 4 sum, shape [4]",
                       "allreduce of float32 x 4 sum, shape [2, 2]");
      } else {
        ASSERT_TRUE(status.ok()) << status.message();
        EXPECT_EQ(values[i], std::vector<float>(4, static_cast<float>(size)));
      }
    }
    ExpectLaterAllreduceRuns(runtime);
  });
}

TEST_P(ShapeMismatch, BroadcastFails) {
  const int size = GetParam();
  RunShapedRanks(size, [&](Runtime& runtime) {
    std::vector<int32_t> values(4, runtime.rank());
    Runtime::SetCallerShape(ShapeOf(runtime, {4}, {2, 2}));
    Status status = runtime.Broadcast("b", values.data(), 4, DataType::kInt32, 0);
    ExpectMismatch(status, size, "b", "broadcast of int32 x 4 from rank 0, shape [4]",
                   "broadcast of int32 x 4 from rank 0, shape [2, 2]");
    ExpectLaterAllreduceRuns(runtime);
  });
}

TEST_P(ShapeMismatch, ReducescatterComparesEveryDimension) {
  const int size = GetParam();
  RunShapedRanks(size, [&](Runtime& runtime) {
    // Rows of 6 elements on every rank, as [6, 6] and [6, 2, 3].
    std::vector<float> send(36, 1.0F);
    std::vector<float> part(36);
    Runtime::SetCallerShape(ShapeOf(runtime, {6, 6}, {6, 2, 3}));
    Status status =
        runtime.Reducescatter("r", send.data(), part.data(), 36, DataType::kFloat32, ReduceOp::kSum, 6);
    ExpectMismatch(status, size, "r", "reducescatter of float32 x 36 sum in rows of 6, shape [6, 6]",
                   "reducescatter of float32 x 36 sum in rows of 6, shape [6, 2, 3]");
    ExpectLaterAllreduceRuns(runtime);
  });
}

TEST_P(ShapeMismatch, AllgatherComparesTheDimensionsAfterTheFirst) {
  const int size = GetParam();
  RunShapedRanks(size, [&](Runtime& runtime) {
    // First dimensions that differ are an allgather's own: [1 + rank, 3] runs.
    const size_t rows = static_cast<size_t>(runtime.rank()) + 1;
    std::vector<float> send(rows * 3, static_cast<float>(runtime.rank()));
    AllgatherResult result;
    Runtime::SetCallerShape({static_cast<int64_t>(rows), 3});
    Status status =
        runtime.AllgatherAsync("g", send.data(), send.size(), DataType::kFloat32, 3, &result).Wait();
    ASSERT_TRUE(status.ok()) << status.message();
    // Equal blocks of 6 elements as [2, 3] and [3, 2].
    std::vector<float> block(6, 1.0F);
    std::vector<float> gathered(6 * static_cast<size_t>(size));
    Runtime::SetCallerShape(ShapeOf(runtime, {2, 3}, {3, 2}));
    status = runtime.AllgatherAsync("e", block.data(), gathered.data(), 6, DataType::kFloat32).Wait();
    ExpectMismatch(status, size, "e", "allgather of float32 x 6, shape [2, 3]",
                   "allgather of float32 x 6, shape [3, 2]");
    ExpectLaterAllreduceRuns(runtime);
  });
}

TEST_P(ShapeMismatch, AlltoallComparesTheNumberOfDimensions) {
  const int size = GetParam();
  RunShapedRanks(size, [&](Runtime& runtime) {
    const size_t count = 3;  // per rank
    std::vector<float> send(count * static_cast<size_t>(size), 1.0F);
    std::vector<float> recv(send.size());
    const int64_t rows = size;
    Runtime::SetCallerShape(ShapeOf(runtime, {rows, 3}, {rows, 3, 1}));
    Status status = runtime.AlltoallAsync("a", send.data(), recv.data(), count, DataType::kFloat32).Wait();
    const std::string shape = "[" + std::to_string(rows) + ", 3";
    ExpectMismatch(status, size, "a", "alltoall of float32 x 3 to each rank, shape " + shape + "]",
                   "alltoall of float32 x 3 to each rank, shape " + shape + ", 1]");
    ExpectLaterAllreduceRuns(runtime);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, ShapeMismatch, ::testing::Values(2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return std::to_string(param.param) + "Ranks";
                         });

TEST(CallerShape, AShapeThatDoesNotHoldTheCountRefusesTheCallAlone) {
  RunShapedRanks(2, [&](Runtime& runtime) {
    std::vector<float> values(6, 1.0F);
    Runtime::SetCallerShape({2, 2});
    Status status =
        runtime.Allreduce("w", values.data(), values.data(), 6, DataType::kFloat32, ReduceOp::kSum);
    EXPECT_EQ(status.message(), "allreduce 'w': the shape [2, 2] holds 4 elements, not the call's 6");
    ExpectLaterAllreduceRuns(runtime);
  });
}

}  // namespace
}  // namespace hvdrun
