// The NCCL backend's harness of the backend conformance cases (runtime/backend_conformance.h), and
// its own checks. On a host without a CUDA device, Create must say so, and the GPU tests skip,
// saying why; on a host with devices, every case for world sizes 1..min(4, devices), each rank a
// thread with its own NcclBackend and device (local_rank = rank), bootstrapping through one
// in-memory store, on device buffers.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/backend.h"
#include "runtime/backend_conformance.h"
#include "runtime/backend_test_ranks.h"
#include "runtime/backends/nccl/nccl_average.h"
#include "runtime/in_memory_store.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

int DeviceCount() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return devices;
}

// `bytes` of device memory on the current device, filled from and read back into host memory.
class DeviceBuffer : public testing::TestBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) {
      EXPECT_EQ(cudaMalloc(&data_, bytes_), cudaSuccess) << "cudaMalloc of " << bytes_ << " bytes";
    }
  }
  ~DeviceBuffer() override { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  char* data() override { return static_cast<char*>(data_); }
  void Upload(const std::vector<char>& host) override {
    ASSERT_EQ(host.size(), bytes_);
    if (bytes_ > 0) {
      ASSERT_EQ(cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice), cudaSuccess);
      // From pageable memory cudaMemcpy returns once the data is staged, before it has landed;
      // the backend's own non-blocking stream does not wait for the default stream.
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    }
  }
  std::vector<char> Download() const override {
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

// Each rank's thread uses device rank % devices, for its buffers and, through local_rank = rank,
// for its backend.
void SelectDevice(int rank) { ASSERT_EQ(cudaSetDevice(rank % DeviceCount()), cudaSuccess); }

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

class NcclConformanceTest : public ::testing::TestWithParam<testing::ConformanceParam> {
 protected:
  void SetUp() override {
    const int devices = DeviceCount();
    const int size = std::get<1>(GetParam());
    if (devices == 0) GTEST_SKIP() << "no CUDA device on this host: the NCCL backend cannot run";
    if (size > devices) {
      GTEST_SKIP() << size << " ranks need " << size << " CUDA devices; this host has " << devices;
    }
  }
};

TEST_P(NcclConformanceTest, Case) {
  const auto [which, size] = GetParam();
  testing::RunConformanceCaseOnThreads(
      BackendKind::kNccl, size, testing::ConformanceCases()[which],
      [ranks = size](testing::ConformanceRank& rank) {
        int version = 0;
        ncclGetVersion(&version);
        rank.average = ChooseNcclAverage(version, ranks) == NcclAverage::kSumThenDivide
                           ? testing::AverageRounding::kSumThenDivide
                           : testing::AverageRounding::kScaleThenSum;
        rank.allocate = [](size_t bytes) -> std::unique_ptr<testing::TestBuffer> {
          return std::make_unique<DeviceBuffer>(bytes);
        };
      },
      SelectDevice);
}

INSTANTIATE_TEST_SUITE_P(Nccl, NcclConformanceTest, testing::EveryConformanceCaseAndSize(),
                         testing::ConformanceParamName);

// How NCCL 2.19-2.29.6 splits a one-rank pre-multiplied sum over its blocks (src/device/onerank.cu,
// nccl_average.h): blocks = min(32, ceil(bytes / 16 KiB)), each ceil-aligned to 16 bytes of
// floor(count / blocks) elements. The elements past blocks x that were never written.
size_t OneRankKernelTail(size_t count, size_t element_size) {
  const size_t blocks = std::min<size_t>(32, (count * element_size + 16383) / 16384);
  if (blocks == 0) return 0;
  const size_t per_pack = 16 / element_size;
  const size_t per_block = (count / blocks + per_pack - 1) / per_pack * per_pack;
  return blocks * per_block >= count ? 0 : count - blocks * per_block;
}

TEST(NcclAverageSplitTest, TheCountsBelowAreThoseNcclsOneRankKernelCutShort) {
  // The regression counts of OneRankAverageWritesEveryElement, checked against the formula, so
  // that they stay around the split: float64 1,000,003 loses 3 (the case seen on an H100),
  // 1,000,004 loses 4; float32 1,000,003 and 1,000,000 lose nothing, 1,000,067 loses 3; the 2-byte
  // types lose 5 of 1,000,197.
  EXPECT_EQ(OneRankKernelTail(1'000'003, 8), 3U);
  EXPECT_EQ(OneRankKernelTail(1'000'004, 8), 4U);
  EXPECT_EQ(OneRankKernelTail(1'000'000, 8), 0U);
  EXPECT_EQ(OneRankKernelTail(1'000'003, 4), 0U);
  EXPECT_EQ(OneRankKernelTail(1'000'067, 4), 3U);
  EXPECT_EQ(OneRankKernelTail(1'000'197, 2), 5U);
  EXPECT_EQ(OneRankKernelTail(4095, 8), 0U);  // one block: always whole
}

// Every element of a one-rank average written, out of place into a buffer holding a sentinel and
// in place, for each floating type at counts on both sides of NCCL's split (above).
TEST(NcclBackendDeviceTest, OneRankAverageWritesEveryElement) {
  if (DeviceCount() == 0) GTEST_SKIP() << "no CUDA device on this host: the NCCL backend cannot run";
  const DataType types[] = {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16};
  const size_t counts[] = {1'000'000, 1'000'003, 1'000'004, 1'000'067, 1'000'197, 65'537, 4095};
  testing::RunBackendRanks(
      BackendKind::kNccl, 1,
      [&](Backend& backend, const BackendContext&) {
        for (DataType type : types) {
          for (size_t count : counts) {
            const size_t bytes = count * DataTypeSize(type);
            std::vector<char> input(bytes);
            for (size_t i = 0; i < bytes; ++i) {
              input[i] = static_cast<char>((i * 7 + 3) % 61);  // finite in every type
            }
            DeviceBuffer send(bytes);
            DeviceBuffer recv(bytes);
            send.Upload(input);
            recv.Upload(std::vector<char>(bytes, static_cast<char>(0x7f)));
            for (bool in_place : {false, true}) {
              void* out = in_place ? send.data() : recv.data();
              Status status = backend.Allreduce(send.data(), out, count, type, ReduceOp::kAverage);
              ASSERT_TRUE(status.ok()) << status.message();
              const std::vector<char> result = in_place ? send.Download() : recv.Download();
              size_t first_wrong = bytes;
              for (size_t i = 0; i < bytes && first_wrong == bytes; ++i) {
                if (result[i] != input[i]) first_wrong = i;
              }
              EXPECT_EQ(first_wrong, bytes)
                  << DataTypeName(type) << " count " << count << (in_place ? " in place" : " out of place")
                  << ": element " << first_wrong / DataTypeSize(type) << " differs from the input";
            }
          }
        }
      },
      SelectDevice);
}

TEST(NcclBackendDeviceTest, HostMemoryIsAClearError) {
  if (DeviceCount() == 0) GTEST_SKIP() << "no CUDA device on this host: the NCCL backend cannot run";
  testing::RunBackendRanks(
      BackendKind::kNccl, 1,
      [](Backend& backend, const BackendContext&) {
        std::vector<float> host(16, 1.0F);
        Status status =
            backend.Allreduce(host.data(), host.data(), host.size(), DataType::kFloat32, ReduceOp::kSum);
        ASSERT_FALSE(status.ok());
        EXPECT_NE(status.message().find("nccl: allreduce: the send buffer 0x"), std::string::npos)
            << status.message();
        EXPECT_NE(status.message().find("is host memory; the nccl backend takes device memory (cudaMalloc)"),
                  std::string::npos)
            << status.message();
      },
      SelectDevice);
}

}  // namespace
}  // namespace hvdrun
