// CreateBackend for hvdrun-nccl-tests (runtime/CMakeLists.txt): the NCCL backend, and Gloo for the
// negotiation beside it, linked in. The program travels in the relocatable bundle to GPU machines,
// where scripts/gpu-check.sh runs it; with the static runtime's factory (backend_linked.cc) it would
// need the MPI backend's Open MPI there too, which such a machine need not have. backend.cc lists the
// other definitions.
#include <memory>

#include "runtime/backend.h"
#include "runtime/backends/gloo/gloo_backend.h"
#include "runtime/backends/nccl/nccl_backend.h"

namespace hvdrun {

StatusOr<std::unique_ptr<Backend>> CreateBackend(BackendKind kind, const BackendContext& context) {
  if (kind == BackendKind::kNccl) return NcclBackend::Create(context);
  if (kind == BackendKind::kGloo) return GlooBackend::Create(context);
  return BackendNotBuiltIn(kind);
}

}  // namespace hvdrun
