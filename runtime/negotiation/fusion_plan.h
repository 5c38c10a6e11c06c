// PlanFusion: how the requests that became ready in one cycle are packed into responses, each one
// backend call (runtime/negotiation/negotiated_stream.h runs them). Every rank plans the same ready list and
// so gets the same plan.
//
// Horovod's rules: an allreduce (a reducescatter) joins the response being built when its kind, type,
// operation and compression match and the response stays within the threshold; a request that does not match
// is skipped over (look-ahead, for mixed-precision models whose float16 and float32 gradients interleave) as
// long as the skipped bytes and the response together fit the threshold, and the first one that does not ends
// the response. A request larger than the threshold, every request when the threshold is 0, and every
// collective other than an allreduce or a reducescatter is a response of its own. Responses come out in the
// order of their first request.
//
// Members are packed back to back, each starting on a kFusionAlignment (hvdrun/types.h) boundary
// (whole vectors for the reduction kernels, and the alignment device copies want); sizes and the
// threshold count that padding. Members whose sizes are multiples of it are so packed exactly as
// they would lie in one array, which lets the stream reduce such tensors in place.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_FUSION_PLAN_H_
#define HVDRUN_RUNTIME_NEGOTIATION_FUSION_PLAN_H_

#include <cstddef>
#include <vector>

#include "hvdrun/types.h"
#include "runtime/request/tensor_request.h"

namespace hvdrun {

struct FusedResponse {
  std::vector<size_t> members;  // indexes into the ready list, in packing order
  std::vector<size_t> offsets;  // each member's byte offset in the fusion buffer
  size_t bytes = 0;             // the buffer size the response needs (padding included)
};

std::vector<FusedResponse> PlanFusion(const std::vector<TensorRequest>& ready, size_t threshold_bytes);

// The threshold used: rounded up to a multiple of local_size × 512 bytes (Horovod's rule, so that a
// buffer splits evenly between a host's ranks); 0 stays 0.
size_t EffectiveFusionThreshold(size_t threshold_bytes, int local_size);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_FUSION_PLAN_H_
