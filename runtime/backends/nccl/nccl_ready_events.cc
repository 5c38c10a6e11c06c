#include "runtime/backends/nccl/nccl_ready_events.h"

#include <string>
#include <utility>

#include "runtime/backends/nccl/nccl_terms.h"

namespace hvdrun {

std::shared_ptr<HandlePool> ReadyEventPool() {
  return std::make_shared<HandlePool>(
      []() -> StatusOr<void*> {
        cudaEvent_t event = nullptr;
        if (const cudaError_t error = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
            error != cudaSuccess) {
          return Status::Error(CudaErrorText(error));
        }
        return static_cast<void*>(event);
      },
      [](void* event) { cudaEventDestroy(static_cast<cudaEvent_t>(event)); });
}

StatusOr<HandlePool::Lease> RecordOnDevice(int device, const std::shared_ptr<HandlePool>& events,
                                           cudaStream_t stream) {
  if (const cudaError_t error = cudaSetDevice(device); error != cudaSuccess) {
    return Status::Error(CudaErrorText(error));
  }
  StatusOr<HandlePool::Lease> event = HandlePool::Lend(events);
  if (!event.ok()) return event.status();
  if (const cudaError_t error = cudaEventRecord(static_cast<cudaEvent_t>(event.value().get()), stream);
      error != cudaSuccess) {
    return Status::Error(CudaErrorText(error));
  }
  return event;
}

BackendMemory::StreamWaiter StreamWaiterFor(int rank, HandlePool::Lease end) {
  return [rank, end = std::move(end)](void* caller_stream) {
    const cudaError_t error =
        cudaStreamWaitEvent(static_cast<cudaStream_t>(caller_stream), static_cast<cudaEvent_t>(end.get()), 0);
    if (error == cudaSuccess) return Status::Ok();
    return Status::Error(
        "nccl: rank " + std::to_string(rank) +
        ": making the caller's stream wait for the collective failed: " + CudaErrorText(error));
  };
}

}  // namespace hvdrun
