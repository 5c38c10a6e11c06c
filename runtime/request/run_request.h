// RunRequest: what each kind of collective does when it runs by itself, on one backend; the one
// definition that both collective orders use (a negotiated request that was not fused, and every
// call-order call, whose name is its place in the sequence of calls).
#ifndef HVDRUN_RUNTIME_REQUEST_RUN_REQUEST_H_
#define HVDRUN_RUNTIME_REQUEST_RUN_REQUEST_H_

#include <string>

#include "hvdrun/status.h"
#include "runtime/backend.h"
#include "runtime/compression/compressed_allreduce.h"
#include "runtime/request/tensor_request.h"

namespace hvdrun {

// Runs `request` of rank `rank` on `backend`: `send` and `recv` are its buffers (for kAllgatherv
// and kAlltoallv, recv is the caller's AllgatherResult; a kAllgatherv's request.counts must hold
// every rank's count). Allreduces go through `compressed`, with error feedback keyed on
// `feedback_name` (none when empty). Scale factors (request.prescale, postscale) are applied around the
// reduction (runtime/request/scale_factors.h).
Status RunRequest(Backend& backend, CompressedAllreduce& compressed, const TensorRequest& request,
                  const void* send, void* recv, int rank, const std::string& feedback_name);

// Whether RunRequest runs `request` as one backend call, so that the backend's first wait for its
// queued work is the request's end (BackendMemory::OnQueued): not a compressed or scaled allreduce or
// reducescatter, a varied allgather or an alltoall with splits, which make several.
bool RunsAsOneCall(const TensorRequest& request);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_REQUEST_RUN_REQUEST_H_
