#include <cstdint>

#include "runtime/backends/nccl/nccl_copies.h"

namespace hvdrun {
namespace {

constexpr int kThreads = 256;

struct CopyBatch {
  DeviceCopy copies[kCopiesPerLaunch];
};

__global__ void CopyKernel(CopyBatch batch) {
  const DeviceCopy copy = batch.copies[blockIdx.x];
  const auto to = reinterpret_cast<uintptr_t>(copy.to);
  const auto from = reinterpret_cast<uintptr_t>(copy.from);
  size_t done = 0;
  if (to % sizeof(uint4) == 0 && from % sizeof(uint4) == 0) {
    const size_t words = copy.bytes / sizeof(uint4);
    auto* to_words = static_cast<uint4*>(copy.to);
    const auto* from_words = static_cast<const uint4*>(copy.from);
    for (size_t i = threadIdx.x; i < words; i += blockDim.x) to_words[i] = from_words[i];
    done = words * sizeof(uint4);
  }
  auto* to_bytes = static_cast<unsigned char*>(copy.to);
  const auto* from_bytes = static_cast<const unsigned char*>(copy.from);
  for (size_t i = done + threadIdx.x; i < copy.bytes; i += blockDim.x) to_bytes[i] = from_bytes[i];
}

}  // namespace

cudaError_t CopyBatchOnStream(const DeviceCopy* copies, size_t count, cudaStream_t stream) {
  for (size_t first = 0; first < count; first += kCopiesPerLaunch) {
    const size_t launch = count - first < kCopiesPerLaunch ? count - first : kCopiesPerLaunch;
    CopyBatch batch{};
    for (size_t i = 0; i < launch; ++i) batch.copies[i] = copies[first + i];
    CopyKernel<<<static_cast<unsigned>(launch), kThreads, 0, stream>>>(batch);
    if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

}  // namespace hvdrun
