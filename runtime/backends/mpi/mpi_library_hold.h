// MpiLibraryHold: a live MPI backend's hold on the process's MPI library, which decides who
// initialises MPI and who finalises it.
//
// MPI is initialised once per process and can never be initialised again after MPI_Finalize. If the
// program initialised MPI itself, libhvdrun uses it and never finalises it (the program does). If
// not, EnsureInitialized calls MPI_Init_thread(MPI_THREAD_MULTIPLE; SERIALIZED at least) on the calling
// thread, and the last hold released finalises MPI on the thread that releases it: the Runtime creates and
// destroys its backend on one thread, which is therefore the thread that initialises and finalises MPI, as
// the MPI standard asks. MPI_THREAD_SERIALIZED is the level required because the Runtime calls its
// backend from more than one thread, one call at a time.
//
// A backend whose creation fails after EnsureInitialized takes no hold and leaves MPI initialised:
// MPI_Finalize waits for every rank, and a rank whose creation failed while the others wait inside
// MPI_Comm_dup would hang there instead of exiting, which is what lets mpirun end the job. A later
// hold taken in the same process finalises it as usual.
//
// Thread-safe: EnsureInitialized and holds (and Abandon) may be used from any thread.
#ifndef HVDRUN_RUNTIME_BACKENDS_MPI_MPI_LIBRARY_HOLD_H_
#define HVDRUN_RUNTIME_BACKENDS_MPI_MPI_LIBRARY_HOLD_H_

#include "hvdrun/status.h"

namespace hvdrun {

class MpiLibraryHold {
 public:
  // Makes sure MPI is initialised at MPI_THREAD_SERIALIZED or better. Errors ("mpi: ..."): MPI was
  // already finalised in this process, the program initialised it at a lower thread level, or
  // MPI_Init_thread failed.
  static Status EnsureInitialized();

  // Takes a hold; EnsureInitialized must have succeeded.
  MpiLibraryHold();
  // Releases it; the last hold released finalises MPI if EnsureInitialized initialised it and no
  // hold was abandoned.
  ~MpiLibraryHold();
  // The job's ranks can no longer all meet (Backend::Abandon): MPI is not finalised by libhvdrun in
  // this process, since MPI_Finalize would wait for a rank that does not come. The process exits
  // without it, which makes mpirun end the job.
  void Abandon();
  MpiLibraryHold(const MpiLibraryHold&) = delete;
  MpiLibraryHold& operator=(const MpiLibraryHold&) = delete;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_MPI_MPI_LIBRARY_HOLD_H_
