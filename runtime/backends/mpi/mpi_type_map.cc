#include "runtime/backends/mpi/mpi_type_map.h"

#include <cstddef>
#include <string>

#include "runtime/backends/mpi/mpi_status.h"
#include "runtime/reduction_kernels.h"

namespace hvdrun {
namespace {

constexpr int kFloat16Index = 0;
constexpr int kBFloat16Index = 1;
constexpr int kSumIndex = 0;
constexpr int kMinIndex = 1;
constexpr int kMaxIndex = 2;
constexpr int kProductIndex = 3;

// An MPI_User_function: inout[i] = in[i] op inout[i] for `*length` elements of kType.
template <DataType kType, ReduceOp kOp>
void Reduce(void* in, void* inout, int* length, MPI_Datatype* /*datatype*/) {
  ReductionKernelFor(kType, kOp)(inout, in, inout, static_cast<size_t>(*length));
}

template <DataType kType>
Status CreateOps(std::array<MPI_Op, 4>& ops) {
  const std::string name(DataTypeName(kType));
  Status status = MpiStatus("creating the " + name + " sum op",
                            MPI_Op_create(&Reduce<kType, ReduceOp::kSum>, 1, &ops[kSumIndex]));
  if (status.ok()) {
    status = MpiStatus("creating the " + name + " min op",
                       MPI_Op_create(&Reduce<kType, ReduceOp::kMin>, 1, &ops[kMinIndex]));
  }
  if (status.ok()) {
    status = MpiStatus("creating the " + name + " max op",
                       MPI_Op_create(&Reduce<kType, ReduceOp::kMax>, 1, &ops[kMaxIndex]));
  }
  if (status.ok()) {
    status = MpiStatus("creating the " + name + " product op",
                       MPI_Op_create(&Reduce<kType, ReduceOp::kProduct>, 1, &ops[kProductIndex]));
  }
  return status;
}

Status CreateTwoByteType(const char* type_name, MPI_Datatype& type) {
  const std::string what = "creating the " + std::string(type_name) + " datatype";
  Status status = MpiStatus(what, MPI_Type_contiguous(2, MPI_BYTE, &type));
  if (status.ok()) status = MpiStatus(what, MPI_Type_commit(&type));
  return status;
}

int OpIndex(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMin:
      return kMinIndex;
    case ReduceOp::kMax:
      return kMaxIndex;
    case ReduceOp::kProduct:
      return kProductIndex;
    case ReduceOp::kSum:
    case ReduceOp::kAverage:
      break;
  }
  return kSumIndex;
}

MPI_Op NativeOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMin:
      return MPI_MIN;
    case ReduceOp::kMax:
      return MPI_MAX;
    case ReduceOp::kProduct:
      return MPI_PROD;
    case ReduceOp::kSum:
    case ReduceOp::kAverage:
      break;
  }
  return MPI_SUM;
}

}  // namespace

StatusOr<std::unique_ptr<MpiTypeMap>> MpiTypeMap::Create() {
  std::unique_ptr<MpiTypeMap> map(new MpiTypeMap);
  Status status = CreateTwoByteType("float16", map->two_byte_types_[kFloat16Index]);
  if (status.ok()) status = CreateTwoByteType("bfloat16", map->two_byte_types_[kBFloat16Index]);
  if (status.ok()) status = CreateOps<DataType::kFloat16>(map->two_byte_ops_[kFloat16Index]);
  if (status.ok()) status = CreateOps<DataType::kBFloat16>(map->two_byte_ops_[kBFloat16Index]);
  if (!status.ok()) return status;
  return map;
}

MpiTypeMap::~MpiTypeMap() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return;
  for (auto& ops : two_byte_ops_) {
    for (MPI_Op& op : ops) {
      if (op != MPI_OP_NULL) MPI_Op_free(&op);
    }
  }
  for (MPI_Datatype& type : two_byte_types_) {
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  }
}

MPI_Datatype MpiTypeMap::Datatype(DataType type) const {
  switch (type) {
    case DataType::kFloat32:
      return MPI_FLOAT;
    case DataType::kFloat64:
      return MPI_DOUBLE;
    case DataType::kInt32:
      return MPI_INT32_T;
    case DataType::kInt64:
      return MPI_INT64_T;
    case DataType::kFloat16:
      return two_byte_types_[kFloat16Index];
    case DataType::kBFloat16:
      return two_byte_types_[kBFloat16Index];
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op MpiTypeMap::Op(DataType type, ReduceOp op) const {
  switch (type) {
    case DataType::kFloat16:
      return two_byte_ops_[kFloat16Index][OpIndex(op)];
    case DataType::kBFloat16:
      return two_byte_ops_[kBFloat16Index][OpIndex(op)];
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kInt32:
    case DataType::kInt64:
      break;
  }
  return NativeOp(op);
}

}  // namespace hvdrun
