#include "runtime/request/run_request.h"

#include <vector>

#include "hvdrun/collective_handle.h"
#include "runtime/request/scale_factors.h"
#include "runtime/request/varied_allgather.h"
#include "runtime/request/varied_alltoall.h"

namespace hvdrun {

Status RunRequest(Backend& backend, CompressedAllreduce& compressed, const TensorRequest& request,
                  const void* send, void* recv, int rank, const std::string& feedback_name) {
  if (request.count == 0 && request.kind != CollectiveKind::kBarrier &&
      request.kind != CollectiveKind::kAllgatherv && request.kind != CollectiveKind::kAlltoallv) {
    return Status::Ok();  // a varied allgather or alltoall still receives the others' elements
  }
  if (Scaled(request) && request.kind == CollectiveKind::kAllreduce) {
    return RunScaled(backend.memory(), request, send, recv, request.count, [&](const void* from, void* to) {
      TensorRequest unscaled = request;
      unscaled.prescale = unscaled.postscale = 1.0;
      return RunRequest(backend, compressed, unscaled, from, to, rank, feedback_name);
    });
  }
  if (Scaled(request) && request.kind == CollectiveKind::kReducescatter) {
    const size_t received = static_cast<size_t>(request.counts[static_cast<size_t>(rank)]);
    return RunScaled(backend.memory(), request, send, recv, received, [&](const void* from, void* to) {
      return backend.Reducescatter(from, to,
                                   std::vector<size_t>(request.counts.begin(), request.counts.end()), rank,
                                   request.type, request.op);
    });
  }
  switch (request.kind) {
    case CollectiveKind::kAllreduce:
      // No spans: the whole buffer is one tensor without feedback (what an unnamed call is).
      if (feedback_name.empty()) {
        return compressed.Allreduce(backend, send, recv, request.count, request.type, request.op,
                                    request.compression);
      }
      return compressed.Allreduce(backend, send, recv, request.count, request.type, request.op,
                                  request.compression, {{feedback_name, 0, request.count}});
    case CollectiveKind::kBroadcast:
      return backend.Broadcast(recv, request.count, request.type, request.root);
    case CollectiveKind::kAllgather:
      return backend.Allgather(send, recv, request.count, request.type);
    case CollectiveKind::kBarrier:
      return backend.Barrier();
    case CollectiveKind::kBaselineAllreduce:
      return backend.BaselineAllreduce(recv, request.count, request.type, request.op);
    case CollectiveKind::kAllgatherv:
      return VariedAllgather(backend, send, request.type, request.counts, rank,
                             static_cast<AllgatherResult*>(recv));
    case CollectiveKind::kAlltoallv:
      return VariedAlltoall(backend, send, request.type, request.splits, rank,
                            static_cast<AlltoallResult*>(recv));
    case CollectiveKind::kAlltoall:
      return backend.Alltoall(send, recv, request.count, request.type);
    case CollectiveKind::kReducescatter:
      return backend.Reducescatter(send, recv,
                                   std::vector<size_t>(request.counts.begin(), request.counts.end()), rank,
                                   request.type, request.op);
  }
  return Status::Error("'" + request.name + "': unknown collective");
}

bool RunsAsOneCall(const TensorRequest& request) {
  if (Scaled(request)) return false;  // the factors are applied around the reduction
  switch (request.kind) {
    case CollectiveKind::kAllreduce:
      return !CompressedAllreduce::Compresses(request.type, request.op, request.compression);
    case CollectiveKind::kAllgatherv:
    case CollectiveKind::kAlltoallv:
      return false;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kAllgather:
    case CollectiveKind::kBarrier:
    case CollectiveKind::kBaselineAllreduce:
    case CollectiveKind::kAlltoall:
    case CollectiveKind::kReducescatter:
      break;
  }
  return true;
}

}  // namespace hvdrun
