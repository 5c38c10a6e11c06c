#include "hvdrun/runtime.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/backend.h"
#include "runtime/in_memory_store.h"
#include "runtime/test_job.h"

#if defined(HVDRUN_HAVE_NCCL)
#include <cuda_runtime_api.h>
#endif

namespace hvdrun {
namespace {

using std::chrono::milliseconds;
using testing::TestOptions;

std::string InitError(RuntimeOptions options) {
  StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(std::move(options));
  return runtime.ok() ? "OK" : runtime.status().message();
}

TEST(RuntimeOptionsTest, RejectsBadOptions) {
  auto store = NewInMemoryStore();
  RuntimeOptions options = TestOptions(4, 4, store);
  EXPECT_EQ(InitError(options), "Runtime::Init: rank 4 is out of range for size 4 (0..3)");
  options = TestOptions(-1, 4, store);
  EXPECT_EQ(InitError(options), "Runtime::Init: rank -1 is out of range for size 4 (0..3)");
  options = TestOptions(0, 0, store);
  EXPECT_EQ(InitError(options), "Runtime::Init: size 0 is not positive");
  options = TestOptions(0, 2, store);
  options.local_rank = 2;
  EXPECT_EQ(InitError(options), "Runtime::Init: local_rank 2 is out of range for local_size 2 (0..1)");
  options = TestOptions(0, 2, store);
  options.local_size = 3;
  EXPECT_EQ(InitError(options), "Runtime::Init: local_size 3 is not in 1..2");
  options = TestOptions(0, 2, store);
  options.cross_rank = 1;
  EXPECT_EQ(InitError(options), "Runtime::Init: cross_rank 1 is out of range for cross_size 1 (0..0)");
  options = TestOptions(0, 1, nullptr);
  EXPECT_EQ(InitError(options),
            "Runtime::Init: no store: pass a KeyValueStore shared by every rank, or use InitFromEnvironment "
            "under hvdrun");
  options = TestOptions(0, 1, store);
  options.host_address.clear();
  EXPECT_EQ(InitError(options), "Runtime::Init: host_address is empty");
  options = TestOptions(0, 1, store, milliseconds(0));
  EXPECT_EQ(InitError(options), "Runtime::Init: timeout 0 ms is not positive");
  options = TestOptions(0, 1, store);
  options.backend = static_cast<BackendKind>(7);
  EXPECT_EQ(InitError(options), "Runtime::Init: unknown backend 7");
  options = TestOptions(0, 1, store);
  options.compression.format = static_cast<CompressionFormat>(9);
  EXPECT_EQ(InitError(options), "Runtime::Init: unknown compression format 9");
  options = TestOptions(0, 1, store);
  options.backend = BackendKind::kNccl;
  options.compression.format = CompressionFormat::kFloat16;
  EXPECT_EQ(
      InitError(options),
      "Runtime::Init: fp16 compression converts values in host memory; the nccl backend's are on the GPU "
      "(compress over gloo or mpi)");
}

// What Init says for a backend this libhvdrun lacks, or, for NCCL built in, on a machine without
// a GPU. (With MPI built in, a single-rank MPI runtime initialises: mpi_backend_check covers it.)
TEST(RuntimeInitTest, BackendNotBuiltInIsAnError) {
  auto store = NewInMemoryStore();
  RuntimeOptions options = TestOptions(0, 1, store);
#if !defined(HVDRUN_HAVE_MPI)
  options.backend = BackendKind::kMpi;
  EXPECT_EQ(InitError(options),
            "backend 'mpi' is not built into this libhvdrun (rebuild hvdrun with mpi installed, or run with "
            "another backend: --gloo)");
#endif
  options.backend = BackendKind::kNccl;
#if defined(HVDRUN_HAVE_NCCL)
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    EXPECT_EQ(InitError(options).rfind("nccl: no CUDA device on host ", 0), 0U) << InitError(options);
  }
#else
  EXPECT_EQ(InitError(options).rfind("backend 'nccl' is not built into this libhvdrun (", 0), 0U);
#endif
}

TEST(RuntimeInitTest, SingleRankNeedsNoPeers) {
  StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(TestOptions(0, 1, NewInMemoryStore()));
  ASSERT_TRUE(runtime.ok()) << runtime.status().message();
  EXPECT_EQ(runtime.value()->rank(), 0);
  EXPECT_EQ(runtime.value()->size(), 1);
  EXPECT_EQ(runtime.value()->backend(), BackendKind::kGloo);
  float value = 2.5F;
  EXPECT_TRUE(runtime.value()->Allreduce(&value, &value, 1, DataType::kFloat32, ReduceOp::kSum).ok());
  EXPECT_EQ(value, 2.5F);
}

TEST(RuntimeInitTest, MissingRanksAreNamed) {
  auto store = NewInMemoryStore();
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back(
        [&, rank] { errors[rank] = InitError(TestOptions(rank, 4, store, milliseconds(300))); });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& error : errors) {
    EXPECT_EQ(error,
              "rendezvous: ranks 2, 3 of 4 did not arrive within 300 ms; every rank must start and call "
              "Runtime::Init");
  }
}

TEST(RuntimeInitTest, OneMissingRankIsNamed) {
  auto store = NewInMemoryStore();
  EXPECT_EQ(
      InitError(TestOptions(1, 2, store, milliseconds(1500))),
      "rendezvous: rank 0 of 2 did not arrive within 1.5 s; every rank must start and call Runtime::Init");
}

TEST(RuntimeInitTest, SuccessiveRuntimesShareOneStore) {
  auto store = NewInMemoryStore();
  for (int round = 0; round < 3; ++round) {
    std::vector<std::thread> threads;
    threads.reserve(2);
    threads.reserve(4);
    for (int rank = 0; rank < 2; ++rank) {
      threads.emplace_back([&, rank, round] {
        auto runtime = Runtime::Init(TestOptions(rank, 2, store));
        ASSERT_TRUE(runtime.ok()) << runtime.status().message();
        int64_t value = rank + round;
        ASSERT_TRUE(runtime.value()->Allreduce(&value, &value, 1, DataType::kInt64, ReduceOp::kSum).ok());
        EXPECT_EQ(value, 1 + 2 * round);
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
}

TEST(RuntimeCollectiveTest, CountZeroIsANoOp) {
  testing::RunRanks(2, [](Runtime& runtime) {
    EXPECT_TRUE(runtime.Allreduce(nullptr, nullptr, 0, DataType::kFloat32, ReduceOp::kSum).ok());
    EXPECT_TRUE(runtime.Broadcast(nullptr, 0, DataType::kInt32, 1).ok());
    EXPECT_TRUE(runtime.Allgather(nullptr, nullptr, 0, DataType::kInt64).ok());
    EXPECT_TRUE(runtime.BaselineAllreduce(nullptr, 0, DataType::kFloat64, ReduceOp::kSum).ok());
  });
}

TEST(RuntimeCollectiveTest, BadArgumentsAreRefusedWithoutBreakingTheRuntime) {
  testing::RunRanks(1, [](Runtime& runtime) {
    float value = 1;
    EXPECT_EQ(runtime.Allreduce(nullptr, &value, 1, DataType::kFloat32, ReduceOp::kSum).message(),
              "Allreduce: null buffer for 1 elements");
    EXPECT_EQ(runtime.Allreduce(&value, &value, 1, static_cast<DataType>(42), ReduceOp::kSum).message(),
              "Allreduce: unknown data type 42");
    EXPECT_EQ(runtime.Allreduce(&value, &value, 1, DataType::kFloat32, static_cast<ReduceOp>(9)).message(),
              "Allreduce: unknown reduce op 9");
    EXPECT_EQ(runtime.Broadcast(&value, 1, DataType::kFloat32, 1).message(),
              "Broadcast: root 1 is out of range for size 1");
    EXPECT_EQ(runtime.BaselineAllreduce(&value, 1, DataType::kInt32, ReduceOp::kSum).message(),
              "gloo: the baseline allreduce supports float32 and float64 with sum, not int32 with sum");
    // An unsupported baseline is a failed collective: the runtime is broken from here on.
    EXPECT_EQ(runtime.Barrier().message(),
              "gloo: the baseline allreduce supports float32 and float64 with sum, not int32 with sum");
  });
  testing::RunRanks(1, [](Runtime& runtime) {
    float value = 1;
    EXPECT_FALSE(runtime.Allreduce(&value, nullptr, 1, DataType::kFloat32, ReduceOp::kSum).ok());
    EXPECT_TRUE(runtime.Allreduce(&value, &value, 1, DataType::kFloat32, ReduceOp::kSum).ok());
  });
}

// Through Gloo, and through the host's shared memory (RuntimeOptions::shared_memory), whose
// error names the rank that left.
TEST(RuntimeCollectiveTest, AFailedCollectiveBreaksTheRuntime) {
  for (bool shared_memory : {false, true}) {
    auto store = NewInMemoryStore();
    std::unique_ptr<Runtime> survivor;
    std::vector<std::thread> threads;
    threads.reserve(4);
    for (int rank = 0; rank < 2; ++rank) {
      threads.emplace_back([&, rank] {
        RuntimeOptions options = TestOptions(rank, 2, store, milliseconds(1000));
        options.shared_memory = shared_memory;
        auto runtime = Runtime::Init(options);
        ASSERT_TRUE(runtime.ok()) << runtime.status().message();
        if (rank == 0) survivor = std::move(runtime).value();
        // Rank 1's runtime is destroyed here: its connections close.
      });
    }
    for (std::thread& thread : threads) thread.join();
    ASSERT_NE(survivor, nullptr);
    float value = 1;
    Status failed = survivor->Allreduce(&value, &value, 1, DataType::kFloat32, ReduceOp::kSum);
    ASSERT_FALSE(failed.ok());
    const std::string expected =
        shared_memory ? "shared memory: rank 1 (local rank 1, pid " : "gloo: allreduce failed: ";
    EXPECT_EQ(failed.message().rfind(expected, 0), 0U) << failed.message();
    EXPECT_EQ(failed.message().find('\n'), std::string::npos);
    EXPECT_EQ(survivor->Barrier().message(), failed.message());
    EXPECT_EQ(
        survivor->AllreduceAsync(&value, &value, 1, DataType::kFloat32, ReduceOp::kMax).Wait().message(),
        failed.message());
    EXPECT_EQ(survivor->BaselineAllreduce(&value, 1, DataType::kFloat32, ReduceOp::kSum).message(),
              failed.message());
  }
}

TEST(RuntimeCollectiveTest, EmptyHandle) {
  CollectiveHandle handle;
  EXPECT_TRUE(handle.Ready());
  EXPECT_FALSE(handle.Wait().ok());
  EXPECT_FALSE(handle.WaitOnStream(nullptr).ok());
}

// A blocking call made while asynchronous ones are still queued must wait its turn: run at once on
// the caller's thread, it would meet a peer's earlier collective (other counts, other values).
TEST(RuntimeCollectiveTest, BlockingCallsRunAfterQueuedOnes) {
  constexpr int kRanks = 3;
  constexpr int kQueued = 16;
  testing::RunRanks(kRanks, [](Runtime& runtime) {
    const int rank = runtime.rank();
    std::vector<std::vector<int64_t>> queued(kQueued);
    std::vector<CollectiveHandle> handles;
    for (int call = 0; call < kQueued; ++call) {
      // Distinct counts, so that a collective paired with the wrong peer call fails or is wrong.
      queued[call].assign(1000 + 37 * static_cast<size_t>(call), rank + call);
      handles.push_back(runtime.AllreduceAsync(queued[call].data(), queued[call].data(), queued[call].size(),
                                               DataType::kInt64, ReduceOp::kSum));
      if (call % 4 == 3) {
        std::vector<int64_t> blocking(7, rank * 10 + call);
        ASSERT_TRUE(runtime
                        .Allreduce(blocking.data(), blocking.data(), blocking.size(), DataType::kInt64,
                                   ReduceOp::kMax)
                        .ok());
        EXPECT_EQ(blocking.front(), (kRanks - 1) * 10 + call);
      }
    }
    for (CollectiveHandle& handle : handles) ASSERT_TRUE(handle.Wait().ok());
    for (int call = 0; call < kQueued; ++call) {
      // sum over ranks of (rank + call) = 0 + 1 + 2 + 3 * call
      EXPECT_EQ(queued[call].back(), 3 + kRanks * call) << "call " << call;
    }
  });
}

TEST(RuntimeCollectiveTest, DestructorRunsQueuedCollectives) {
  std::vector<std::vector<int32_t>> results(3, std::vector<int32_t>(64));
  auto store = NewInMemoryStore();
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int rank = 0; rank < 3; ++rank) {
    threads.emplace_back([&, rank] {
      auto runtime = Runtime::Init(TestOptions(rank, 3, store));
      ASSERT_TRUE(runtime.ok()) << runtime.status().message();
      std::vector<int32_t>& data = results[rank];
      for (size_t i = 0; i < data.size(); ++i) data[i] = rank + static_cast<int32_t>(i);
      // Queued, never waited for: the destructor must still run them before it returns.
      for (int repeat = 0; repeat < 4; ++repeat) {
        runtime.value()->AllreduceAsync(data.data(), data.data(), data.size(), DataType::kInt32,
                                        ReduceOp::kMax);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& data : results) {
    for (size_t i = 0; i < data.size(); ++i) EXPECT_EQ(data[i], 2 + static_cast<int32_t>(i));
  }
}

// Asynchronous allreduces over Gloo, for world sizes 1..4: handles waited in any order, some twice,
// some by WaitOnStream, which over host memory is Wait.
class RuntimeAsyncTest : public ::testing::TestWithParam<int> {};

TEST_P(RuntimeAsyncTest, HandlesWaitedInAnyOrder) {
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
      Status status = k % 3 == 0 ? handles[k].WaitOnStream(nullptr) : handles[k].Wait();
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

INSTANTIATE_TEST_SUITE_P(Gloo, RuntimeAsyncTest, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return "size" + std::to_string(param_info.param);
                         });

}  // namespace
}  // namespace hvdrun
