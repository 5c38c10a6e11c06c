// VariedAllgather: an allgather whose ranks give different numbers of elements (Horovod's allgather
// of tensors whose first dimensions differ), over a backend's allgather of equal counts.
//
// Every rank knows every rank's count beforehand (negotiation agreed them, or a first allgather of
// the counts did). Each rank's elements are padded to the largest count, gathered in one backend
// call, and packed back to back in rank order into the result.
#ifndef HVDRUN_RUNTIME_REQUEST_VARIED_ALLGATHER_H_
#define HVDRUN_RUNTIME_REQUEST_VARIED_ALLGATHER_H_

#include <cstdint>
#include <vector>

#include "hvdrun/collective_handle.h"
#include "hvdrun/status.h"
#include "runtime/backend.h"

namespace hvdrun {

// `send` holds counts[rank] elements of `type`; `result` gets every rank's, and `counts`.
Status VariedAllgather(Backend& backend, const void* send, DataType type, const std::vector<uint64_t>& counts,
                       int rank, AllgatherResult* result);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_REQUEST_VARIED_ALLGATHER_H_
