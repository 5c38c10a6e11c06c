// The NCCL unique id that every rank's communicator of one NCCL backend is made from: rank 0 makes it
// (ncclGetUniqueId) and publishes it in the job's key-value store as hex, under "nccl/<n>/unique_id",
// n counting the NCCL backends rank 0 has created; the other ranks wait for it within
// BackendContext::timeout. Errors are one line, "nccl: rank R: ...".
#ifndef HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_UNIQUE_ID_H_
#define HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_UNIQUE_ID_H_

#include <nccl.h>

#include "hvdrun/status.h"
#include "runtime/backend.h"

namespace hvdrun {

StatusOr<ncclUniqueId> ExchangeUniqueId(const BackendContext& context);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_UNIQUE_ID_H_
