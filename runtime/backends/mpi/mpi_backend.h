// MpiBackend: the Backend over MPI (Open MPI), for ranks started by `hvdrun --mpi` under mpirun.
//
// Create() initialises MPI unless the program already has (MpiLibraryHold: MPI_THREAD_MULTIPLE asked,
// finalised when the last MpiBackend of a libhvdrun-initialised MPI is destroyed, on the thread
// that destroys it), checks that MPI_COMM_WORLD's rank and size are the ones hvdrun gave the rank,
// and works on a duplicate of MPI_COMM_WORLD (for a process set, BackendContext::members, on a
// communicator of its members made by MPI_Comm_create_group, which needs MPI_THREAD_MULTIPLE because
// every set's engine calls MPI from its own thread) whose error handler returns codes, so that a failing
// call becomes a one-line Status ("mpi: allreduce failed: MPI_ERR_...: ...") rather than an abort.
// MPI needs no store: BackendContext::store and timeout are not used (MPI collectives cannot time
// out; a rank that dies makes mpirun end the job).
//
// Collectives use MPI's own types and ops; float16 and bfloat16 reduce through user-defined ops
// (MpiTypeMap). An average is the sum divided by the number of ranks, as in the Gloo backend
// (integers truncate toward zero). One call moves at most 2^31 - 1 elements (MPI's int counts);
// more is an error naming the count.
//
// Thread safety: not thread-safe, but any thread may make a call, one call at a time
// (MPI_THREAD_SERIALIZED); the Runtime serialises them.
#ifndef HVDRUN_RUNTIME_BACKENDS_MPI_MPI_BACKEND_H_
#define HVDRUN_RUNTIME_BACKENDS_MPI_MPI_BACKEND_H_

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/backend.h"
#include "runtime/backends/mpi/mpi_library_hold.h"
#include "runtime/backends/mpi/mpi_type_map.h"

namespace hvdrun {

class MpiBackend : public Backend {
 public:
  static StatusOr<std::unique_ptr<Backend>> Create(const BackendContext& context);
  ~MpiBackend() override;

  Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) override;
  Status Broadcast(void* buffer, size_t count, DataType type, int root) override;
  // `send` may lie anywhere, also inside `recv` (in place when it is this rank's block of recv).
  Status Allgather(const void* send, void* recv, size_t count, DataType type) override;
  Status Alltoall(const void* send, void* recv, size_t count, DataType type) override;
  Status Alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                   const std::vector<size_t>& recv_counts, DataType type) override;
  Status Reducescatter(const void* send, void* recv, const std::vector<size_t>& counts, int rank,
                       DataType type, ReduceOp op) override;
  Status Barrier() override;
  // float32 and float64 with kSum only: MPI_Allreduce(MPI_IN_PLACE, ..., MPI_SUM), nothing else.
  Status BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) override;
  // MPI_Query_thread's level is MPI_THREAD_MULTIPLE.
  std::optional<bool> mpi_threads_multiple() const override;
  // Neither the communicator is freed nor MPI finalised at the end (MpiLibraryHold::Abandon).
  void Abandon() override;
  // An MPI collective cannot be ended, so the job is: past the stall shutdown time the collective
  // watchdog's request ends every rank with MPI_Abort (from the watchdog's thread; exit code 6, a
  // stall, as hvdrun's own stall shutdown), after one line on stderr naming this rank. Without it a
  // rank that never arrives (a stopped process) would hold the others inside MPI forever. Does not
  // return.
  bool RequestAbort() override;

 private:
  MpiBackend(MPI_Comm comm, std::unique_ptr<MpiTypeMap> types, int rank, int size);

  // Declared first so that it is released last, after the communicator and types are freed.
  MpiLibraryHold hold_;
  MPI_Comm comm_;
  std::unique_ptr<MpiTypeMap> types_;
  int rank_;
  int size_;
  bool abandoned_ = false;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_MPI_MPI_BACKEND_H_
