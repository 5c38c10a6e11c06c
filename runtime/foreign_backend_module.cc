// A backend module from another build of hvdrun, for backend_module_loader_test.cc: its interface
// id is not this build's, and the loader must refuse it without calling its create function.
#include <cstdlib>
#include <memory>

#include "runtime/backend_module.h"

namespace {

hvdrun::StatusOr<std::unique_ptr<hvdrun::Backend>> CreateAndAbort(const hvdrun::BackendContext& /*context*/) {
  std::abort();
}

}  // namespace

extern "C" const hvdrun::BackendModule* hvdrun_backend_module_v1() {
  static constexpr hvdrun::BackendModule kModule{"hvdrun 0.0.0, interface of another build",
                                                 hvdrun::BackendKind::kGloo, &CreateAndAbort};
  return &kModule;
}
