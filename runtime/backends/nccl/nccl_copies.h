// Many small device-to-device copies in one kernel launch: a fused response's members copied in
// and out of the fusion buffer (Horovod batches them the same way). One cudaMemcpyAsync costs a few
// microseconds of launch each; ResNet-50's 161 gradients would cost more than their reduction.
//
// Enqueues the copies on `stream` (each block of the kernel copies one of them, in 16-byte words
// where both ends allow, else byte by byte) and returns the launch error; the caller waits on the
// stream. The copies must not overlap one another.
#ifndef HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_COPIES_H_
#define HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_COPIES_H_

#include <cuda_runtime_api.h>

#include <cstddef>

namespace hvdrun {

struct DeviceCopy {
  void* to;
  const void* from;
  size_t bytes;
};

// Copies per kernel launch (the kernel's parameter holds them by value).
constexpr size_t kCopiesPerLaunch = 64;

cudaError_t CopyBatchOnStream(const DeviceCopy* copies, size_t count, cudaStream_t stream);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_COPIES_H_
