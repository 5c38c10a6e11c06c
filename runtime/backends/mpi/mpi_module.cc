// libhvdrun-mpi.so's entry point: the MPI backend as a module of libhvdrun.so (runtime/backend_module.h).
#include "runtime/backend_module.h"
#include "runtime/backends/mpi/mpi_backend.h"

extern "C" const hvdrun::BackendModule* hvdrun_backend_module_v1() {
  static constexpr hvdrun::BackendModule kModule{hvdrun::kBackendInterfaceId, hvdrun::BackendKind::kMpi,
                                                 &hvdrun::MpiBackend::Create};
  return &kModule;
}
