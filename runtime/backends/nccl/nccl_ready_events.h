// The CUDA events that order the NCCL backend's stream against its callers' streams: a pool of
// events that MarkReady records on a caller's stream, and waiters that make a caller's stream wait
// for a point of the backend's stream. Neither makes the host wait, nor the device as a whole.
#ifndef HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_READY_EVENTS_H_
#define HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_READY_EVENTS_H_

#include <cuda_runtime_api.h>

#include <memory>

#include "hvdrun/status.h"
#include "runtime/backend.h"
#include "runtime/handle_pool.h"

namespace hvdrun {

// The events MarkReady records: created without timing (the cheaper kind) on the current device.
std::shared_ptr<HandlePool> ReadyEventPool();

// An event of `events` recorded on `stream` of `device` (made current on this thread). A reused
// event needs nothing but the new record: a stream that waited on it waits for the record it saw.
StatusOr<HandlePool::Lease> RecordOnDevice(int device, const std::shared_ptr<HandlePool>& events,
                                           cudaStream_t stream);

// A waiter that makes a caller's stream wait for `end`, an event of the backend's stream on `rank`;
// it holds the event (and its pool) for as long as it lives.
BackendMemory::StreamWaiter StreamWaiterFor(int rank, HandlePool::Lease end);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_READY_EVENTS_H_
