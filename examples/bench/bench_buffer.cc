#include "examples/bench/bench_buffer.h"

#include <cstring>
#include <string>

#ifdef HVDRUN_BENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace hvdrun {
namespace {

[[maybe_unused]] Status BuiltWithoutCuda() {
  return Status::Error(
      "the nccl backend needs device buffers, and this hvdrun-bench was built without CUDA (rebuild hvdrun "
      "where the CUDA toolkit and NCCL are found)");
}

}  // namespace

StatusOr<std::unique_ptr<BenchBuffer>> BenchBuffer::Allocate(bool on_device, size_t bytes) {
  std::unique_ptr<BenchBuffer> buffer(new BenchBuffer(bytes));
  if (!on_device) {
    buffer->host_.resize(bytes);
    return buffer;
  }
#ifdef HVDRUN_BENCH_HAVE_CUDA
  if (cudaError_t error = cudaMalloc(&buffer->device_, bytes); error != cudaSuccess) {
    return Status::Error("cudaMalloc of " + std::to_string(bytes) +
                         " bytes failed: " + cudaGetErrorString(error));
  }
  return buffer;
#else
  return BuiltWithoutCuda();
#endif
}

BenchBuffer::~BenchBuffer() {
#ifdef HVDRUN_BENCH_HAVE_CUDA
  if (device_ != nullptr) cudaFree(device_);
#endif
}

Status BenchBuffer::Upload(const void* host) {
  if (device_ == nullptr) {
    if (bytes_ > 0) std::memcpy(host_.data(), host, bytes_);
    return Status::Ok();
  }
#ifdef HVDRUN_BENCH_HAVE_CUDA
  // The runtime's backend reads the buffer once the default stream, where this copy lands, has
  // reached the call (Runtime::SetCallerStream): no synchronize here.
  if (cudaError_t error = cudaMemcpy(device_, host, bytes_, cudaMemcpyHostToDevice); error != cudaSuccess) {
    return Status::Error(std::string("copying to the device failed: ") + cudaGetErrorString(error));
  }
#endif
  return Status::Ok();
}

Status BenchBuffer::Download(void* host) const {
  if (device_ == nullptr) {
    if (bytes_ > 0) std::memcpy(host, host_.data(), bytes_);
    return Status::Ok();
  }
#ifdef HVDRUN_BENCH_HAVE_CUDA
  if (cudaError_t error = cudaMemcpy(host, device_, bytes_, cudaMemcpyDeviceToHost); error != cudaSuccess) {
    return Status::Error(std::string("copying from the device failed: ") + cudaGetErrorString(error));
  }
#endif
  return Status::Ok();
}

Status SelectRankDevice(const Runtime& runtime) {
#ifdef HVDRUN_BENCH_HAVE_CUDA
  int devices = 0;
  if (cudaError_t error = cudaGetDeviceCount(&devices); error != cudaSuccess || devices <= 0) {
    return Status::Error(std::string("no CUDA device for the benchmark's buffers (cudaGetDeviceCount: ") +
                         (error != cudaSuccess ? cudaGetErrorString(error) : "0 devices") + ")");
  }
  const int device = runtime.local_rank() % devices;
  if (cudaError_t error = cudaSetDevice(device); error != cudaSuccess) {
    return Status::Error("cudaSetDevice(" + std::to_string(device) +
                         ") failed: " + cudaGetErrorString(error));
  }
  return Status::Ok();
#else
  (void)runtime;
  return BuiltWithoutCuda();
#endif
}

}  // namespace hvdrun
