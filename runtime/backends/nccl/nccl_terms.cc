#include "runtime/backends/nccl/nccl_terms.h"

#include "runtime/one_line.h"

namespace hvdrun {

std::string NcclErrorText(ncclResult_t result, ncclComm_t comm) {
  std::string text = ncclGetErrorString(result);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') text += std::string(" (") + last + ")";
  return OneLine(text);
}

std::string CudaErrorText(cudaError_t error) {
  cudaGetLastError();
  return cudaGetErrorString(error);
}

ncclDataType_t NcclType(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return ncclFloat32;
    case DataType::kFloat64:
      return ncclFloat64;
    case DataType::kFloat16:
      return ncclFloat16;
    case DataType::kBFloat16:
      return ncclBfloat16;
    case DataType::kInt32:
      return ncclInt32;
    case DataType::kInt64:
      break;
  }
  return ncclInt64;
}

ncclRedOp_t NcclOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kAverage:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
      return ncclAvg;
#else
      return ncclSum;
#endif
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kProduct:
      return ncclProd;
    case ReduceOp::kMax:
      break;
  }
  return ncclMax;
}

}  // namespace hvdrun
