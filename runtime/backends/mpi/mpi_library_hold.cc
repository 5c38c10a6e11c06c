#include "runtime/backends/mpi/mpi_library_hold.h"

#include <mpi.h>

#include <mutex>
#include <string>

namespace hvdrun {
namespace {

struct LibraryState {
  std::mutex mutex;
  int holds = 0;                          // GUARDED_BY(mutex)
  bool initialized_by_libhvdrun = false;  // GUARDED_BY(mutex)
  bool abandoned = false;                 // GUARDED_BY(mutex): MpiLibraryHold::Abandon
};

// Never destroyed, so that a backend released during static destruction still finds it.
LibraryState& State() {
  static auto* state = new LibraryState;
  return *state;
}

std::string ThreadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      break;
  }
  return "thread level " + std::to_string(level);
}

}  // namespace

Status MpiLibraryHold::EnsureInitialized() {
  LibraryState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) {
    return Status::Error(
        "mpi: MPI was already finalised in this process and cannot be initialised again (it is finalised "
        "when the last mpi Runtime ends): keep one mpi Runtime for the whole run");
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_SERIALIZED) {
      return Status::Error("mpi: the program initialised MPI at " + ThreadLevelName(provided) +
                           ", but libhvdrun calls MPI from more than one thread and needs "
                           "MPI_THREAD_SERIALIZED or better: initialise MPI with MPI_Init_thread(..., "
                           "MPI_THREAD_SERIALIZED, ...), or leave it to libhvdrun");
    }
    return Status::Ok();
  }
  int provided = MPI_THREAD_SINGLE;
  // MPI_THREAD_MULTIPLE where the library has it: process sets' engines call MPI concurrently, each
  // on its own communicator (MpiBackend::Create checks for it when it makes a set's group).
  const int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  if (code != MPI_SUCCESS) {
    return Status::Error("mpi: MPI_Init_thread failed with error code " + std::to_string(code));
  }
  state.initialized_by_libhvdrun = true;
  if (provided < MPI_THREAD_SERIALIZED) {
    return Status::Error("mpi: this MPI library provides " + ThreadLevelName(provided) +
                         " only, and libhvdrun needs MPI_THREAD_SERIALIZED: use an MPI built with "
                         "thread support");
  }
  return Status::Ok();
}

MpiLibraryHold::MpiLibraryHold() {
  LibraryState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  ++state.holds;
}

MpiLibraryHold::~MpiLibraryHold() {
  LibraryState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (--state.holds > 0 || !state.initialized_by_libhvdrun || state.abandoned) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) MPI_Finalize();
}

void MpiLibraryHold::Abandon() {
  LibraryState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.abandoned = true;
}

}  // namespace hvdrun
