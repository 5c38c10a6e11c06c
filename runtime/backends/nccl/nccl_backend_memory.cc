// NcclBackend's BackendMemory (runtime/backends/nccl/nccl_backend.h): the engine's fusion buffer in
// device memory of the rank's device, copies in and out of it on the backend's stream (small ones in
// batches through one kernel, nccl_copies.h), and the ready marks of callers' streams
// (nccl_ready_events.h). Every call selects the device first (Prepare) and fails once the
// communicator was aborted; Flush waits for the stream as a collective does (Finish).
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "runtime/backends/nccl/nccl_backend.h"
#include "runtime/backends/nccl/nccl_copies.h"
#include "runtime/backends/nccl/nccl_ready_events.h"
#include "runtime/backends/nccl/nccl_scale.h"
#include "runtime/backends/nccl/nccl_terms.h"
#include "runtime/handle_pool.h"
#include "runtime/stream_points.h"

namespace hvdrun {

// Device copies larger than this go by cudaMemcpyAsync (the copy engines), smaller ones in batches
// through one kernel.
constexpr size_t kBatchedCopyLimit = size_t{256} << 10;

StatusOr<BackendMemory::Buffer> NcclBackend::Allocate(size_t bytes) {
  Status status = Prepare("allocating the fusion buffer");
  if (!status.ok()) return status;
  void* memory = nullptr;
  if (const cudaError_t error = cudaMalloc(&memory, std::max<size_t>(bytes, 1)); error != cudaSuccess) {
    return Status::Error("nccl: rank " + std::to_string(rank_) + ": cudaMalloc of " + std::to_string(bytes) +
                         " bytes on device " + std::to_string(device_) + " failed: " + CudaErrorText(error));
  }
  return Buffer(static_cast<std::byte*>(memory), [](std::byte* p) { cudaFree(p); });
}

Status NcclBackend::CopyAll(const std::vector<Copy>& copies) {
  Status status = Prepare("copying through the fusion buffer");
  if (!status.ok()) return status;
  std::vector<DeviceCopy> batched;
  cudaError_t error = cudaSuccess;
  for (const Copy& copy : copies) {
    if (copy.bytes == 0) continue;
    if (copy.bytes <= kBatchedCopyLimit) {
      batched.push_back({copy.to, copy.from, copy.bytes});
    } else if (error == cudaSuccess) {
      error = cudaMemcpyAsync(copy.to, copy.from, copy.bytes, cudaMemcpyDeviceToDevice, resources_.stream);
    }
  }
  if (error == cudaSuccess && batched.size() == 1) {
    error = cudaMemcpyAsync(batched[0].to, batched[0].from, batched[0].bytes, cudaMemcpyDeviceToDevice,
                            resources_.stream);
  } else if (error == cudaSuccess && !batched.empty()) {
    error = CopyBatchOnStream(batched.data(), batched.size(), resources_.stream);
  }
  if (error != cudaSuccess) {
    return Status::Error("nccl: rank " + std::to_string(rank_) + ": copying " +
                         std::to_string(copies.size()) +
                         " tensors through the fusion buffer failed: " + CudaErrorText(error));
  }
  return Status::Ok();
}

Status NcclBackend::Zero(void* to, size_t bytes) {
  Status status = Prepare("zeroing the fusion buffer");
  if (!status.ok() || bytes == 0) return status;
  if (const cudaError_t error = cudaMemsetAsync(to, 0, bytes, resources_.stream); error != cudaSuccess) {
    return Status::Error("nccl: rank " + std::to_string(rank_) + ": zeroing " + std::to_string(bytes) +
                         " bytes of the fusion buffer failed: " + CudaErrorText(error));
  }
  return Status::Ok();
}

Status NcclBackend::Scale(void* values, size_t count, DataType type, double factor) {
  Status status = Prepare("scaling by a prescale or postscale factor");
  if (!status.ok()) return status;
  if (const cudaError_t error = ScaleOnStream(values, count, type, factor, resources_.stream);
      error != cudaSuccess) {
    return Status::Error("nccl: rank " + std::to_string(rank_) + ": scaling " + std::to_string(count) +
                         " elements by " + std::to_string(factor) + " failed: " + CudaErrorText(error));
  }
  return Status::Ok();
}

Status NcclBackend::Flush() {
  Status status = Prepare("copying out of the fusion buffer");
  return status.ok() ? Finish("copying out of the fusion buffer") : status;
}

StatusOr<BackendMemory::ReadyMark> NcclBackend::MarkReady(void* caller_stream) {
  // On the caller's thread: the event must belong to this rank's device, as the default stream it
  // stands for; the caller's current device is put back.
  int current = -1;
  cudaGetDevice(&current);
  StatusOr<ReadyMark> mark = ready_points_.Record(caller_stream, [&]() -> StatusOr<std::shared_ptr<void>> {
    StatusOr<HandlePool::Lease> event =
        RecordOnDevice(device_, ready_events_, static_cast<cudaStream_t>(caller_stream));
    if (!event.ok()) return event.status();
    return std::shared_ptr<void>(std::move(event).value());
  });
  if (current >= 0 && current != device_) cudaSetDevice(current);
  if (!mark.ok()) {
    return Status::Error(
        "nccl: rank " + std::to_string(rank_) +
        ": recording when the caller's stream has written the tensor failed: " + mark.status().message());
  }
  return mark;
}

Status NcclBackend::WaitFor(const ReadyMark& mark) { return WaitForAll({&mark}); }

Status NcclBackend::WaitForAll(const std::vector<const ReadyMark*>& marks) {
  const std::vector<const StreamPoint*> latest = LatestPerStream(marks);
  if (latest.empty()) return Status::Ok();
  Status status = Prepare("waiting for the caller's stream");
  if (!status.ok()) return status;
  for (const StreamPoint* point : latest) {
    if (const cudaError_t error =
            cudaStreamWaitEvent(resources_.stream, static_cast<cudaEvent_t>(point->event.get()), 0);
        error != cudaSuccess) {
      return Status::Error("nccl: rank " + std::to_string(rank_) +
                           ": waiting for the caller's stream failed: " + CudaErrorText(error));
    }
  }
  return Status::Ok();
}

}  // namespace hvdrun
