// Horovod's prescale and postscale factors (TensorRequest::prescale, postscale), applied by the engine
// to the buffers a backend reduces: every rank's values are multiplied by the prescale factor before the
// reduction and the result by the postscale factor after it, on the fused buffer when requests are
// fused (runtime/negotiation/fused_execution.cc), else on the request's own (RunRequest).
#ifndef HVDRUN_RUNTIME_REQUEST_SCALE_FACTORS_H_
#define HVDRUN_RUNTIME_REQUEST_SCALE_FACTORS_H_

#include <cstddef>

#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/backend.h"
#include "runtime/request/tensor_request.h"

namespace hvdrun {

// Whether `request` has a factor other than 1.
inline bool Scaled(const TensorRequest& request) {
  return request.prescale != 1.0 || request.postscale != 1.0;
}

// Multiplies `count` elements of `type` at `values`, memory of `memory`'s kind, by `factor`: on the host
// with ScaleBy (runtime/reduction_kernels.h, Horovod's CPU arithmetic), in device memory by the backend
// (BackendMemory::Scale: NCCL's kernel on its stream, ordered before its next collective). Nothing for
// a factor of 1.
Status ScaleValues(BackendMemory& memory, void* values, size_t count, DataType type, double factor);

// A request's reduction with its factors, when it runs by itself: an allreduce scales a copy of `send`
// in `recv` (or `recv` in place) before `reduce(recv, recv)` and the result after it; a reducescatter
// scales a copy of `send` in a buffer of its own, reduces that into `recv` with `reduce(copy, recv)`
// and scales this rank's `received` elements of `recv`. Waits for the backend's work before returning.
template <typename Reduce>
Status RunScaled(BackendMemory& memory, const TensorRequest& request, const void* send, void* recv,
                 size_t received, Reduce reduce) {
  const bool scatters = request.kind == CollectiveKind::kReducescatter;
  BackendMemory::Buffer copy;
  void* scaled = recv;
  if (scatters) {
    StatusOr<BackendMemory::Buffer> allocated = memory.Allocate(request.bytes());
    if (!allocated.ok()) return allocated.status();
    copy = std::move(allocated).value();
    scaled = copy.get();
  }
  Status status = scaled != send ? memory.CopyAll({{scaled, send, request.bytes()}}) : Status::Ok();
  if (status.ok()) status = ScaleValues(memory, scaled, request.count, request.type, request.prescale);
  if (status.ok()) status = reduce(scaled, recv);
  if (status.ok()) {
    status = ScaleValues(memory, recv, scatters ? received : request.count, request.type, request.postscale);
  }
  return status.ok() ? memory.Flush() : status;
}

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_REQUEST_SCALE_FACTORS_H_
