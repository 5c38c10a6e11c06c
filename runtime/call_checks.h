// CallChecks: what every collective call of hvdrun/runtime.h checks before it reaches the engine,
// and the request it then submits; shared by the files that define Runtime's calls (runtime.cc,
// runtime_reducescatter.cc).
//
// A call whose arguments are wrong is not run and does not break the runtime (but the other ranks,
// which made the call, will wait for this one until they time out). Pure; thread-safe.
#ifndef HVDRUN_RUNTIME_CALL_CHECKS_H_
#define HVDRUN_RUNTIME_CALL_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/request/tensor_request.h"

namespace hvdrun {

// A known type, and buffers for a count above zero.
Status ValidateBuffers(const char* call, const void* send, const void* recv, size_t count, DataType type);
// A known reduction.
Status ValidateOp(const char* call, ReduceOp op);
// Scale factors (Runtime::ScaleFactors) that are finite numbers.
Status ValidateFactors(const std::string& call, double prescale, double postscale);
// The checks every named call makes: negotiation on, and a name the caller may choose.
Status ValidateName(const std::string& call, const std::string& name, bool negotiated);
// A request for a collective of this rank.
TensorRequest Request(std::string name, CollectiveKind kind, size_t count, DataType type, ReduceOp op,
                      int root = 0);
// Gives `request` the caller's tensor shape (Runtime::SetCallerShape; empty: none), which an
// allreduce, broadcast or reducescatter must hold exactly its count of elements in (an allgather's or
// alltoall's first dimension is this rank's own). Barriers and baseline allreduces take none.
Status AttachShape(TensorRequest& request, const std::vector<int64_t>& shape);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_CALL_CHECKS_H_
