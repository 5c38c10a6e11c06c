// Broadcast, allgather, barrier and asynchronous allreduce over the Gloo backend, for world sizes
// 1..4, each rank a thread with its own Runtime over TCP on 127.0.0.1.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/collective_test_values.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

using testing::InputValue;
using testing::LoadElement;
using testing::StoreElement;

class GlooCollectivesTest : public ::testing::TestWithParam<int> {};

TEST_P(GlooCollectivesTest, BroadcastFromEveryRoot) {
  const int size = GetParam();
  testing::RunRanks(size, [](Runtime& runtime) {
    for (int root = 0; root < runtime.size(); ++root) {
      for (DataType type : {DataType::kFloat32, DataType::kFloat16, DataType::kInt64}) {
        for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{100'003}}) {
          std::vector<char> buffer(count * DataTypeSize(type));
          // Root's values depend on root; the others start with their own values, to be overwritten.
          for (size_t i = 0; i < count; ++i) {
            StoreElement(type, buffer.data(), i, InputValue(type, runtime.rank(), i));
          }
          Status status = runtime.Broadcast(buffer.data(), count, type, root);
          ASSERT_TRUE(status.ok()) << status.message();
          for (size_t i = 0; i < count; ++i) {
            std::vector<char> one(DataTypeSize(type));
            StoreElement(type, one.data(), 0, InputValue(type, root, i));
            ASSERT_EQ(LoadElement(type, buffer.data(), i), LoadElement(type, one.data(), 0))
                << DataTypeName(type) << " root " << root << " count " << count << " element " << i;
          }
        }
      }
    }
  });
}

TEST_P(GlooCollectivesTest, AllgatherInRankOrder) {
  const int size = GetParam();
  testing::RunRanks(size, [](Runtime& runtime) {
    for (DataType type : {DataType::kFloat64, DataType::kBFloat16, DataType::kInt32}) {
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{50'001}}) {
        const size_t element = DataTypeSize(type);
        std::vector<char> send(count * element);
        std::vector<char> recv(count * element * static_cast<size_t>(runtime.size()));
        for (size_t i = 0; i < count; ++i) {
          StoreElement(type, send.data(), i, InputValue(type, runtime.rank(), i));
        }
        Status status = runtime.Allgather(send.data(), recv.data(), count, type);
        ASSERT_TRUE(status.ok()) << status.message();
        for (int rank = 0; rank < runtime.size(); ++rank) {
          for (size_t i = 0; i < count; ++i) {
            std::vector<char> one(element);
            StoreElement(type, one.data(), 0, InputValue(type, rank, i));
            ASSERT_EQ(LoadElement(type, recv.data(), static_cast<size_t>(rank) * count + i),
                      LoadElement(type, one.data(), 0))
                << DataTypeName(type) << " count " << count << " block " << rank << " element " << i;
          }
        }
      }
    }
  });
}

TEST_P(GlooCollectivesTest, BarrierWaitsForEveryRank) {
  const int size = GetParam();
  std::atomic<int> entered{0};
  testing::RunRanks(size, [&entered](Runtime& runtime) {
    for (int round = 1; round <= 3; ++round) {
      // The last rank is late; nobody may leave the barrier before it has entered.
      if (runtime.rank() == runtime.size() - 1) std::this_thread::sleep_for(std::chrono::milliseconds(30));
      entered.fetch_add(1);
      Status status = runtime.Barrier();
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_GE(entered.load(), round * runtime.size());
      // A second barrier keeps the next round's early increments out of this round's check.
      ASSERT_TRUE(runtime.Barrier().ok());
    }
  });
}

TEST_P(GlooCollectivesTest, AsyncHandlesWaitedInAnyOrder) {
  const int size = GetParam();
  testing::RunRanks(size, [](Runtime& runtime) {
    constexpr int kInFlight = 8;
    constexpr size_t kCount = 10'007;
    std::vector<std::vector<int64_t>> buffers(kInFlight, std::vector<int64_t>(kCount));
    std::vector<CollectiveHandle> handles;
    handles.reserve(kInFlight);
    for (int k = 0; k < kInFlight; ++k) {
      for (size_t i = 0; i < kCount; ++i) {
        buffers[k][i] = int64_t{runtime.rank() + 1} * (k + 1) + static_cast<int64_t>(i);
      }
      handles.push_back(runtime.AllreduceAsync(buffers[k].data(), buffers[k].data(), kCount, DataType::kInt64,
                                               k % 2 == 0 ? ReduceOp::kSum : ReduceOp::kMax));
    }
    // Waited last to first, every other one twice.
    const int64_t n = runtime.size();
    for (int k = kInFlight - 1; k >= 0; --k) {
      Status status = handles[k].Wait();
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_TRUE(handles[k].Ready());
      if (k % 2 == 1) {
        EXPECT_TRUE(handles[k].Wait().ok());
      }
      for (size_t i = 0; i < kCount; ++i) {
        const auto offset = static_cast<int64_t>(i);
        const int64_t expected = k % 2 == 0 ? (k + 1) * n * (n + 1) / 2 + n * offset : n * (k + 1) + offset;
        ASSERT_EQ(buffers[k][i], expected) << "handle " << k << " element " << i;
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Gloo, GlooCollectivesTest, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return "size" + std::to_string(param_info.param);
                         });

}  // namespace
}  // namespace hvdrun
