// The vocabulary's types and operations in NCCL's terms, and NCCL's and CUDA's results as text for the
// backend's one-line errors. Every function here is thread-safe.
#ifndef HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_TERMS_H_
#define HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_TERMS_H_

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "hvdrun/types.h"

namespace hvdrun {

// "<NCCL's name for the result>" plus NCCL's last error message for `comm` (null: none), when it has one.
std::string NcclErrorText(ncclResult_t result, ncclComm_t comm);

// cudaGetErrorString of `error`, clearing CUDA's record of it so that later calls do not see it.
std::string CudaErrorText(cudaError_t error);

ncclDataType_t NcclType(DataType type);

// kAverage maps to ncclAvg, for the libraries that have it (ChooseNcclAverage); a build against
// headers older than 2.10 has none and always sums and divides.
ncclRedOp_t NcclOp(ReduceOp op);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_NCCL_NCCL_TERMS_H_
