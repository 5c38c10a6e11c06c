// CreateBackend for libhvdrun.so: each backend built is a module, libhvdrun-<name>.so, loaded on
// its first use (backend_module_loader.h). The static runtime's is backend_linked.cc; backend.cc
// says how the two divide the work.
#include <algorithm>
#include <iterator>
#include <memory>

#include "runtime/backend.h"
#include "runtime/backend_module.h"
#include "runtime/backend_module_loader.h"

namespace hvdrun {
namespace {

// The backends built (Gloo always is: it is a required dependency).
constexpr BackendKind kBuilt[] = {
#ifdef HVDRUN_HAVE_GLOO
    BackendKind::kGloo,
#endif
#ifdef HVDRUN_HAVE_MPI
    BackendKind::kMpi,
#endif
#ifdef HVDRUN_HAVE_NCCL
    BackendKind::kNccl,
#endif
};

bool Built(BackendKind kind) {
  return std::find(std::begin(kBuilt), std::end(kBuilt), kind) != std::end(kBuilt);
}

}  // namespace

StatusOr<std::unique_ptr<Backend>> CreateBackend(BackendKind kind, const BackendContext& context) {
  if (!Built(kind)) return BackendNotBuiltIn(kind);
  StatusOr<const BackendModule*> module = LoadBackendModule(kind);
  if (!module.ok()) return module.status();
  return module.value()->create(context);
}

}  // namespace hvdrun
