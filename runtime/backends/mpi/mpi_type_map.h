// MpiTypeMap: the MPI datatype and reduction op for each of hvdrun's element types and reduce ops.
//
// float32, float64, int32 and int64 map to MPI's own types and ops (MPI_FLOAT, MPI_SUM, ...).
// float16 and bfloat16, which MPI lacks, each get a committed 2-byte contiguous datatype and
// user-defined, commutative ops (MPI_Op_create) over runtime/reduction_kernels.h, which reduce
// exactly as the Gloo backend does: each value widened to float, combined, and rounded back to
// nearest-even at every step. kAverage maps to the sum op; the caller divides (MpiBackend::Allreduce).
//
// Owns the datatypes and ops it creates and frees them when destroyed, which must happen while MPI
// is initialised (after MPI_Finalize it frees nothing). Immutable after Create: any thread may read.
#ifndef HVDRUN_RUNTIME_BACKENDS_MPI_MPI_TYPE_MAP_H_
#define HVDRUN_RUNTIME_BACKENDS_MPI_MPI_TYPE_MAP_H_

#include <mpi.h>

#include <array>
#include <memory>

#include "hvdrun/status.h"
#include "hvdrun/types.h"

namespace hvdrun {

class MpiTypeMap {
 public:
  // Creates the 2-byte datatypes and their ops; MPI must be initialised. Errors: "mpi: ...".
  static StatusOr<std::unique_ptr<MpiTypeMap>> Create();
  ~MpiTypeMap();
  MpiTypeMap(const MpiTypeMap&) = delete;
  MpiTypeMap& operator=(const MpiTypeMap&) = delete;

  MPI_Datatype Datatype(DataType type) const;
  MPI_Op Op(DataType type, ReduceOp op) const;

 private:
  MpiTypeMap() = default;

  // Index 0: float16, 1: bfloat16.
  std::array<MPI_Datatype, 2> two_byte_types_{MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
  // [type][0: sum, 1: min, 2: max, 3: product], type indexed as above.
  std::array<std::array<MPI_Op, 4>, 2> two_byte_ops_{{{MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL},
                                                      {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL}}};
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_MPI_MPI_TYPE_MAP_H_
