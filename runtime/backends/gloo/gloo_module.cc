// libhvdrun-gloo.so's entry point: the Gloo backend as a module of libhvdrun.so (runtime/backend_module.h).
#include "runtime/backend_module.h"
#include "runtime/backends/gloo/gloo_backend.h"

extern "C" const hvdrun::BackendModule* hvdrun_backend_module_v1() {
  static constexpr hvdrun::BackendModule kModule{hvdrun::kBackendInterfaceId, hvdrun::BackendKind::kGloo,
                                                 &hvdrun::GlooBackend::Create};
  return &kModule;
}
