// libhvdrun-nccl.so's entry point: the NCCL backend as a module of libhvdrun.so (runtime/backend_module.h).
#include "runtime/backend_module.h"
#include "runtime/backends/nccl/nccl_backend.h"

extern "C" const hvdrun::BackendModule* hvdrun_backend_module_v1() {
  static constexpr hvdrun::BackendModule kModule{hvdrun::kBackendInterfaceId, hvdrun::BackendKind::kNccl,
                                                 &hvdrun::NcclBackend::Create};
  return &kModule;
}
