// VariedAlltoall: Horovod's alltoall, whose ranks send different numbers of elements to each other,
// over a backend's allgather and its alltoall of equal blocks.
//
// Each rank gives its splits (elements for each rank); one allgather of them gives every rank the
// whole matrix, so that each knows what it receives and the largest split any rank gives. Each rank's
// blocks are padded to that largest split, exchanged in one backend alltoall, and packed back to back
// in rank order into the result. The traffic is therefore size() times the largest split for every
// rank, however uneven the splits are; an alltoall of equal splits sends no padding.
#ifndef HVDRUN_RUNTIME_VARIED_ALLTOALL_H_
#define HVDRUN_RUNTIME_VARIED_ALLTOALL_H_

#include <cstdint>
#include <vector>

#include "hvdrun/runtime.h"
#include "hvdrun/status.h"
#include "runtime/backend.h"

namespace hvdrun {

// `send` holds splits[j] elements of `type` for rank j, back to back in rank order (splits has one
// entry per rank); `result` gets what every rank sent this one, and how many elements came from each.
// Collective: every rank calls it, with the same type.
Status VariedAlltoall(Backend& backend, const void* send, DataType type, const std::vector<uint64_t>& splits,
                      int rank, AlltoallResult* result);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_VARIED_ALLTOALL_H_
