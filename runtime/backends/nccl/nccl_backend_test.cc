// The NCCL backend. On a host without a CUDA device, Create must say so (and the GPU tests skip,
// saying why); on a host with devices, collectives for world sizes 1..min(4, devices), each rank a
// thread with its own Runtime and device (local_rank = rank), bootstrapping through one
// in-memory store, on device buffers filled from and checked against the float64 references of
// runtime/collective_test_values.h.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/backend.h"
#include "runtime/collective_test_values.h"
#include "runtime/in_memory_store.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

using testing::InputValue;
using testing::LoadElement;
using testing::StoreElement;

constexpr DataType kAllTypes[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                                  DataType::kBFloat16, DataType::kInt32,   DataType::kInt64};
constexpr ReduceOp kAllOps[] = {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax};
constexpr size_t kCounts[] = {0, 1, 7, 1'000'003};

int DeviceCount() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return devices;
}

// `bytes` of device memory on the current device, filled from and read back into host memory.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) {
      EXPECT_EQ(cudaMalloc(&data_, bytes_), cudaSuccess) << "cudaMalloc of " << bytes_ << " bytes";
    }
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  char* data() const { return static_cast<char*>(data_); }
  void Upload(const std::vector<char>& host) const {
    ASSERT_EQ(host.size(), bytes_);
    if (bytes_ > 0) {
      ASSERT_EQ(cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice), cudaSuccess);
    }
  }
  std::vector<char> Download() const {
    std::vector<char> host(bytes_);
    if (bytes_ > 0) {
      EXPECT_EQ(cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost), cudaSuccess);
    }
    return host;
  }

 private:
  size_t bytes_;
  void* data_ = nullptr;
};

// Runs body(runtime) on `size` ranks, each a thread using device rank % devices for its own
// buffers and, through local_rank = rank, for its backend.
void RunNcclRanks(int size, const std::function<void(Runtime&)>& body) {
  auto store = NewInMemoryStore();
  const int devices = DeviceCount();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([rank, size, devices, store, &body] {
      ASSERT_EQ(cudaSetDevice(rank % devices), cudaSuccess);
      RuntimeOptions options = testing::TestOptions(rank, size, store);
      options.backend = BackendKind::kNccl;
      StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
      ASSERT_TRUE(runtime.ok()) << "rank " << rank << ": " << runtime.status().message();
      body(*runtime.value());
    });
  }
  for (std::thread& thread : threads) thread.join();
}

std::vector<char> Inputs(DataType type, int rank, size_t count) {
  std::vector<char> host(count * DataTypeSize(type));
  for (size_t i = 0; i < count; ++i) StoreElement(type, host.data(), i, InputValue(type, rank, i));
  return host;
}

TEST(NcclBackendTest, CreateWithoutDeviceSaysSo) {
  const int devices = DeviceCount();
  if (devices > 0) {
    GTEST_SKIP() << "this host has " << devices << " CUDA devices, so there is no error to see";
  }
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  BackendContext context;
  context.rank = 2;
  context.size = 4;
  context.local_rank = 2;
  context.local_size = 4;
  context.store = store.get();
  context.host_address = "10.1.2.3";
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(BackendKind::kNccl, context);
  ASSERT_FALSE(backend.ok());
  const std::string& message = backend.status().message();
  EXPECT_EQ(message.rfind("nccl: no CUDA device on host 10.1.2.3 for rank 2 (cudaGetDeviceCount: ", 0), 0U)
      << message;
  const std::string advice = "); use --gloo or --mpi on machines without a GPU";
  ASSERT_GE(message.size(), advice.size()) << message;
  EXPECT_EQ(message.substr(message.size() - advice.size()), advice) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;

  // Runtime::Init reports the same line.
  RuntimeOptions options = testing::TestOptions(0, 1, NewInMemoryStore());
  options.backend = BackendKind::kNccl;
  StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.status().message().rfind("nccl: no CUDA device on host 127.0.0.1 for rank 0 (", 0), 0U)
      << runtime.status().message();
}

class NcclCollectivesTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    const int devices = DeviceCount();
    if (devices == 0) GTEST_SKIP() << "no CUDA device on this host: the NCCL backend cannot run";
    if (GetParam() > devices) {
      GTEST_SKIP() << GetParam() << " ranks need " << GetParam() << " CUDA devices; this host has "
                   << devices;
    }
  }
};

TEST_P(NcclCollectivesTest, AllreduceEveryTypeOpCountAndPlacement) {
  RunNcclRanks(GetParam(), [](Runtime& runtime) {
    const int size = runtime.size();
    for (DataType type : kAllTypes) {
      for (ReduceOp op : kAllOps) {
        for (size_t count : kCounts) {
          for (bool in_place : {true, false}) {
            const size_t bytes = count * DataTypeSize(type);
            const std::vector<char> input = Inputs(type, runtime.rank(), count);
            DeviceBuffer send(bytes);
            DeviceBuffer recv(bytes);
            send.Upload(input);
            DeviceBuffer& output = in_place ? send : recv;
            Status status = runtime.Allreduce(send.data(), output.data(), count, type, op);
            ASSERT_TRUE(status.ok()) << status.message();
            const std::vector<char> result = output.Download();
            // ncclAvg scales each input by 1/size before summing: besides the final rounding, each
            // input's scaling and each addition round, relative to the inputs' magnitudes.
            const double unit = testing::UnitRoundoff(type);
            int wrong = 0;
            for (size_t i = 0; i < count && wrong < 3; ++i) {
              const double expected = testing::Reference(type, op, size, i);
              const double got = LoadElement(type, result.data(), i);
              const double bound = op == ReduceOp::kAverage
                                       ? (size + 2) * unit * testing::MagnitudeSum(type, size, i) / size
                                       : 0;
              if (std::fabs(got - expected) > bound) {
                ++wrong;
                ADD_FAILURE() << DataTypeName(type) << " " << ReduceOpName(op) << " size " << size
                              << " count " << count << (in_place ? " in place" : " out of place") << " rank "
                              << runtime.rank() << ": element " << i << " is " << got << ", expected "
                              << expected;
              }
            }
            if (!in_place) {
              EXPECT_TRUE(send.Download() == input) << "the input of an out-of-place allreduce changed";
            }
          }
        }
      }
    }
  });
}

TEST_P(NcclCollectivesTest, BroadcastFromEveryRoot) {
  RunNcclRanks(GetParam(), [](Runtime& runtime) {
    for (int root = 0; root < runtime.size(); ++root) {
      for (DataType type : kAllTypes) {
        for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{100'003}}) {
          DeviceBuffer buffer(count * DataTypeSize(type));
          buffer.Upload(Inputs(type, runtime.rank(), count));
          Status status = runtime.Broadcast(buffer.data(), count, type, root);
          ASSERT_TRUE(status.ok()) << status.message();
          EXPECT_TRUE(buffer.Download() == Inputs(type, root, count))
              << DataTypeName(type) << " count " << count << " root " << root;
        }
      }
    }
  });
}

TEST_P(NcclCollectivesTest, AllgatherFromEveryPlacement) {
  RunNcclRanks(GetParam(), [](Runtime& runtime) {
    const auto size = static_cast<size_t>(runtime.size());
    const auto rank = static_cast<size_t>(runtime.rank());
    for (DataType type : kAllTypes) {
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{50'001}}) {
        const size_t bytes = count * DataTypeSize(type);
        std::vector<char> expected;
        for (size_t block = 0; block < size; ++block) {
          const std::vector<char> input = Inputs(type, static_cast<int>(block), count);
          expected.insert(expected.end(), input.begin(), input.end());
        }
        const std::vector<char> mine = Inputs(type, runtime.rank(), count);
        // 0: a separate buffer; 1: this rank's block of recv (in place); 2: the start of recv.
        for (int placement = 0; placement < 3; ++placement) {
          DeviceBuffer recv(bytes * size);
          recv.Upload(std::vector<char>(bytes * size, 0x55));
          DeviceBuffer separate(bytes);
          char* send = placement == 0 ? separate.data() : recv.data() + (placement == 1 ? rank * bytes : 0);
          if (bytes > 0) {
            ASSERT_EQ(cudaMemcpy(send, mine.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
          }
          Status status = runtime.Allgather(send, recv.data(), count, type);
          ASSERT_TRUE(status.ok()) << status.message();
          EXPECT_TRUE(recv.Download() == expected)
              << DataTypeName(type) << " count " << count << " placement " << placement;
        }
      }
    }
  });
}

TEST_P(NcclCollectivesTest, BarrierWaitsForEveryRank) {
  std::atomic<int> entered{0};
  RunNcclRanks(GetParam(), [&entered](Runtime& runtime) {
    for (int round = 1; round <= 3; ++round) {
      if (runtime.rank() == runtime.size() - 1) std::this_thread::sleep_for(std::chrono::milliseconds(30));
      entered.fetch_add(1);
      Status status = runtime.Barrier();
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_GE(entered.load(), round * runtime.size());
      ASSERT_TRUE(runtime.Barrier().ok());
    }
  });
}

TEST_P(NcclCollectivesTest, BaselineIsNcclSum) {
  RunNcclRanks(GetParam(), [](Runtime& runtime) {
    const int size = runtime.size();
    std::vector<float> host(1001, static_cast<float>(runtime.rank() + 1));
    DeviceBuffer buffer(host.size() * sizeof(float));
    ASSERT_EQ(cudaMemcpy(buffer.data(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
    Status status = runtime.BaselineAllreduce(buffer.data(), host.size(), DataType::kFloat32, ReduceOp::kSum);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_EQ(cudaMemcpy(host.data(), buffer.data(), host.size() * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    EXPECT_EQ(host, std::vector<float>(1001, static_cast<float>(size) * static_cast<float>(size + 1) / 2));
    Status unsupported = runtime.BaselineAllreduce(buffer.data(), 4, DataType::kFloat16, ReduceOp::kSum);
    EXPECT_EQ(unsupported.message(),
              "nccl: the baseline allreduce supports float32 and float64 with sum, not float16 with sum");
  });
}

INSTANTIATE_TEST_SUITE_P(Nccl, NcclCollectivesTest, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return "size" + std::to_string(param_info.param);
                         });

TEST(NcclBackendDeviceTest, HostMemoryIsAClearError) {
  if (DeviceCount() == 0) GTEST_SKIP() << "no CUDA device on this host: the NCCL backend cannot run";
  RunNcclRanks(1, [](Runtime& runtime) {
    std::vector<float> host(16, 1.0F);
    Status status =
        runtime.Allreduce(host.data(), host.data(), host.size(), DataType::kFloat32, ReduceOp::kSum);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find("nccl: allreduce: the send buffer 0x"), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("is host memory; the nccl backend takes device memory (cudaMalloc)"),
              std::string::npos)
        << status.message();
  });
}

}  // namespace
}  // namespace hvdrun
