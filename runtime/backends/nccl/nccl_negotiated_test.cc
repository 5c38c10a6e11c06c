// The negotiated engine over NCCL, on device buffers, through the Runtime: named allreduces of every
// type and op submitted in a shuffled order on each rank, fused and unfused, each buffer written
// on a stream of the caller's own that nothing waits for before submission (the runtime's backend
// must wait for it: Runtime::SetCallerStream), their results waited for by the host or by the
// caller's stream alone (CollectiveHandle::WaitOnStream); and the timeline's NCCL events. Ranks
// are threads, one per device (NCCL takes one rank a device), up to 4. On a host without a CUDA
// device every test skips, saying why; scripts/gpu-check.sh runs them on a GPU machine
// (hvdrun-nccl-tests).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/element_conversion.h"
#include "runtime/in_memory_store.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

int Devices() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return devices;
}

// Values exact in every type, and their results over `size` ranks.
double Value(int rank, size_t i) { return static_cast<double>((rank + 1) * static_cast<int>(i % 7 + 1)); }

double Expected(ReduceOp op, DataType type, int size, size_t i) {
  const double unit = static_cast<double>(i % 7 + 1);
  const double sum = unit * size * (size + 1) / 2;
  switch (op) {
    case ReduceOp::kSum:
      return sum;
    case ReduceOp::kAverage:
      return type == DataType::kInt32 || type == DataType::kInt64 ? std::trunc(sum / size) : sum / size;
    case ReduceOp::kMin:
      return unit;
    case ReduceOp::kMax:
      return unit * size;
    case ReduceOp::kProduct: {
      double product = 1;
      for (int rank = 1; rank <= size; ++rank) product *= unit * rank;
      return product;
    }
  }
  return NAN;
}

struct DeviceTensor {
  std::string name;
  DataType type;
  ReduceOp op;
  size_t count;
  void* device = nullptr;
  std::vector<char> host;  // pageable: cudaMemcpyAsync from it is not done when it returns
};

// How a step's handles are waited for, and its results read.
enum class Waiting {
  kHost,    // Wait(), then a plain cudaMemcpy
  kStream,  // WaitOnStream(caller), then a copy on the caller's stream: only the stream waits
};

// On `size` ranks (one per device), `steps` rounds of every type x op x a few counts, submitted in a
// shuffled order per rank; the fusion threshold decides fused or not.
void ShuffledDeviceAllreduces(int size, size_t fusion_threshold, int steps,
                              const std::string& timeline = std::string(), Waiting waiting = Waiting::kHost) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([rank, size, store, fusion_threshold, steps, timeline, waiting] {
      ASSERT_EQ(cudaSetDevice(rank), cudaSuccess);
      RuntimeOptions options = testing::TestOptions(rank, size, store);
      options.backend = BackendKind::kNccl;
      options.order = CollectiveOrder::kNegotiated;
      options.negotiation.fusion_threshold_bytes = fusion_threshold;
      if (!timeline.empty()) options.timeline.path = timeline + "." + std::to_string(rank);
      StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
      ASSERT_TRUE(runtime.ok()) << "rank " << rank << ": " << runtime.status().message();

      cudaStream_t caller = nullptr;
      ASSERT_EQ(cudaStreamCreateWithFlags(&caller, cudaStreamNonBlocking), cudaSuccess);
      Runtime::SetCallerStream(caller);
      std::vector<DeviceTensor> tensors;
      for (DataType type : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16,
                            DataType::kInt32, DataType::kInt64}) {
        for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax}) {
          for (size_t count : {size_t{1}, size_t{17}, size_t{1000}, size_t{300000}}) {
            // The name appended, not "t" + to_string(...): GCC 12's -Wrestrict misreads that at -O3.
            std::string name = "t";
            name += std::to_string(tensors.size());
            DeviceTensor tensor{std::move(name), type, op, count, nullptr, {}};
            ASSERT_EQ(cudaMalloc(&tensor.device, count * DataTypeSize(type)), cudaSuccess);
            tensor.host.resize(count * DataTypeSize(type));
            tensors.push_back(std::move(tensor));
          }
        }
      }
      std::mt19937 random(static_cast<unsigned>(rank) * 7919U + 3);
      for (int step = 0; step < steps; ++step) {
        std::vector<size_t> order(tensors.size());
        for (size_t t = 0; t < order.size(); ++t) order[t] = t;
        std::shuffle(order.begin(), order.end(), random);
        std::vector<CollectiveHandle> handles;
        for (size_t t : order) {
          DeviceTensor& tensor = tensors[t];
          std::vector<double> values(tensor.count);
          for (size_t i = 0; i < tensor.count; ++i) values[i] = Value(rank, i);
          ConvertFromDouble(tensor.type, values.data(), tensor.host.data(), tensor.count);
          // Written on the caller's stream, not waited for: the backend must wait for it.
          ASSERT_EQ(cudaMemcpyAsync(tensor.device, tensor.host.data(), tensor.host.size(),
                                    cudaMemcpyHostToDevice, caller),
                    cudaSuccess);
          handles.push_back(runtime.value()->AllreduceAsync(tensor.name, tensor.device, tensor.device,
                                                            tensor.count, tensor.type, tensor.op));
        }
        for (CollectiveHandle& handle : handles) {
          const Status status = waiting == Waiting::kStream ? handle.WaitOnStream(caller) : handle.Wait();
          ASSERT_TRUE(status.ok()) << "rank " << rank << ": " << status.message();
        }
        for (DeviceTensor& tensor : tensors) {
          std::vector<char> bytes(tensor.host.size());
          if (waiting == Waiting::kStream) {
            ASSERT_EQ(
                cudaMemcpyAsync(bytes.data(), tensor.device, bytes.size(), cudaMemcpyDeviceToHost, caller),
                cudaSuccess);
            ASSERT_EQ(cudaStreamSynchronize(caller), cudaSuccess);
          } else {
            ASSERT_EQ(cudaMemcpy(bytes.data(), tensor.device, bytes.size(), cudaMemcpyDeviceToHost),
                      cudaSuccess);
          }
          std::vector<double> result(tensor.count);
          ConvertToDouble(tensor.type, bytes.data(), result.data(), tensor.count);
          for (size_t i = 0; i < tensor.count; ++i) {
            ASSERT_EQ(result[i], Expected(tensor.op, tensor.type, size, i))
                << "rank " << rank << " " << tensor.name << " " << DataTypeName(tensor.type) << " "
                << ReduceOpName(tensor.op) << " [" << i << "] step " << step;
          }
        }
      }
      const NegotiationCounters counters = runtime.value()->negotiation_counters();
      if (fusion_threshold > 0) {
        EXPECT_LT(counters.responses, counters.tensors) << "nothing was fused";
      } else {
        EXPECT_EQ(counters.responses, counters.tensors);
      }
      Runtime::SetCallerStream(nullptr);
      runtime.value().reset();
      for (DeviceTensor& tensor : tensors) cudaFree(tensor.device);
      cudaStreamDestroy(caller);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

int Ranks() { return std::min(Devices(), 4); }

constexpr const char* kNoDevice =
    "no CUDA device on this host: scripts/gpu-check.sh runs it on a GPU machine";

TEST(NcclNegotiatedTest, ShuffledNamedAllreducesOfEveryTypeAndOpFused) {
  if (Ranks() == 0) GTEST_SKIP() << kNoDevice;
  ShuffledDeviceAllreduces(Ranks(), size_t{128} << 20, 3);
}

TEST(NcclNegotiatedTest, ShuffledNamedAllreducesOfEveryTypeAndOpUnfused) {
  if (Ranks() == 0) GTEST_SKIP() << kNoDevice;
  ShuffledDeviceAllreduces(Ranks(), 0, 2);
}

// The caller's stream waits for the results, the host only until they are queued; the next step
// submits the same names while the last ones may still be completing.
TEST(NcclNegotiatedTest, ResultsWaitedForOnTheCallersStreamFused) {
  if (Ranks() == 0) GTEST_SKIP() << kNoDevice;
  ShuffledDeviceAllreduces(Ranks(), size_t{128} << 20, 3, std::string(), Waiting::kStream);
}

TEST(NcclNegotiatedTest, ResultsWaitedForOnTheCallersStreamUnfused) {
  if (Ranks() == 0) GTEST_SKIP() << kNoDevice;
  ShuffledDeviceAllreduces(Ranks(), 0, 2, std::string(), Waiting::kStream);
}

TEST(NcclNegotiatedTest, TheTimelineHoldsNcclAllreduces) {
  if (Ranks() == 0) GTEST_SKIP() << kNoDevice;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("hvdrun-nccl-timeline-" + std::to_string(::getpid())))
          .string();
  ShuffledDeviceAllreduces(1, size_t{128} << 20, 1, path);
  std::ifstream file(path + ".0");
  std::stringstream text;
  text << file.rdbuf();
  std::filesystem::remove(path + ".0");
  EXPECT_NE(text.str().find("NCCL_ALLREDUCE"), std::string::npos) << text.str().substr(0, 400);
  EXPECT_NE(text.str().find("MEMCPY_IN_FUSION_BUFFER"), std::string::npos);
}

}  // namespace
}  // namespace hvdrun
