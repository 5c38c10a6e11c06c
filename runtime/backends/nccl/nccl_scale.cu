#include "runtime/backends/nccl/nccl_scale.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace hvdrun {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

template <typename T>
__device__ T Divided(T value, int divisor) {
  return value / static_cast<T>(divisor);
}

template <>
__device__ __half Divided(__half value, int divisor) {
  return __float2half_rn(__half2float(value) / static_cast<float>(divisor));
}

template <>
__device__ __nv_bfloat16 Divided(__nv_bfloat16 value, int divisor) {
  return __float2bfloat16_rn(__bfloat162float(value) / static_cast<float>(divisor));
}

template <typename T>
__global__ void DivideKernel(T* values, size_t count, int divisor) {
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    values[i] = Divided(values[i], divisor);
  }
}

template <typename T>
__device__ T Scaled(T value, double factor) {
  return static_cast<T>(static_cast<double>(value) * factor);
}

template <>
__device__ float Scaled(float value, double factor) {
  return value * static_cast<float>(factor);
}

template <>
__device__ __half Scaled(__half value, double factor) {
  return __float2half_rn(__half2float(value) * static_cast<float>(factor));
}

template <>
__device__ __nv_bfloat16 Scaled(__nv_bfloat16 value, double factor) {
  return __float2bfloat16_rn(__bfloat162float(value) * static_cast<float>(factor));
}

template <typename T>
__global__ void ScaleKernel(T* values, size_t count, double factor) {
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    values[i] = Scaled(values[i], factor);
  }
}

unsigned Blocks(size_t count) {
  const size_t wanted = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(wanted < kMaxBlocks ? wanted : kMaxBlocks);
}

template <typename T>
cudaError_t LaunchScale(void* values, size_t count, double factor, cudaStream_t stream) {
  ScaleKernel<T><<<Blocks(count), kThreads, 0, stream>>>(static_cast<T*>(values), count, factor);
  return cudaGetLastError();
}

template <typename T>
cudaError_t Launch(void* values, size_t count, int divisor, cudaStream_t stream) {
  const size_t wanted = (count + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(wanted < kMaxBlocks ? wanted : kMaxBlocks);
  DivideKernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<T*>(values), count, divisor);
  return cudaGetLastError();
}

}  // namespace

cudaError_t DivideOnStream(void* values, size_t count, DataType type, int divisor, cudaStream_t stream) {
  if (count == 0 || divisor == 1) return cudaSuccess;
  switch (type) {
    case DataType::kFloat32:
      return Launch<float>(values, count, divisor, stream);
    case DataType::kFloat64:
      return Launch<double>(values, count, divisor, stream);
    case DataType::kFloat16:
      return Launch<__half>(values, count, divisor, stream);
    case DataType::kBFloat16:
      return Launch<__nv_bfloat16>(values, count, divisor, stream);
    case DataType::kInt32:
      return Launch<int>(values, count, divisor, stream);
    case DataType::kInt64:
      break;
  }
  return Launch<long long>(values, count, divisor, stream);
}

cudaError_t ScaleOnStream(void* values, size_t count, DataType type, double factor, cudaStream_t stream) {
  if (count == 0 || factor == 1.0) return cudaSuccess;
  switch (type) {
    case DataType::kFloat32:
      return LaunchScale<float>(values, count, factor, stream);
    case DataType::kFloat64:
      return LaunchScale<double>(values, count, factor, stream);
    case DataType::kFloat16:
      return LaunchScale<__half>(values, count, factor, stream);
    case DataType::kBFloat16:
      return LaunchScale<__nv_bfloat16>(values, count, factor, stream);
    case DataType::kInt32:
      return LaunchScale<int>(values, count, factor, stream);
    case DataType::kInt64:
      break;
  }
  return LaunchScale<long long>(values, count, factor, stream);
}

}  // namespace hvdrun
