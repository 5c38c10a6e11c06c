// VariedAlltoall: Horovod's alltoall, whose ranks send different numbers of elements to each other,
// over a backend's allgather and its alltoall of uneven blocks (Backend::Alltoallv).
//
// Each rank gives its splits (elements for each rank); one allgather of them gives every rank the
// whole matrix, so that each knows what it receives from every rank; then one backend alltoallv
// (Gloo's alltoallv, MPI_Alltoallv, NCCL's grouped sends and receives) exchanges the elements into
// the result, back to back in rank order.
#ifndef HVDRUN_RUNTIME_REQUEST_VARIED_ALLTOALL_H_
#define HVDRUN_RUNTIME_REQUEST_VARIED_ALLTOALL_H_

#include <cstdint>
#include <vector>

#include "hvdrun/collective_handle.h"
#include "hvdrun/status.h"
#include "runtime/backend.h"

namespace hvdrun {

// `send` holds splits[j] elements of `type` for rank j, back to back in rank order (splits has one
// entry per rank); `result` gets what every rank sent this one, and how many elements came from each.
// Collective: every rank calls it, with the same type.
Status VariedAlltoall(Backend& backend, const void* send, DataType type, const std::vector<uint64_t>& splits,
                      int rank, AlltoallResult* result);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_REQUEST_VARIED_ALLTOALL_H_
