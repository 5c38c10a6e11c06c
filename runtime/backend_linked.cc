// CreateBackend for the static runtime (hvdrun_runtime_static): the backends built are linked in.
// libhvdrun.so's is backend_loaded.cc; backend.cc says how the two divide the work.
#include <memory>

#include "runtime/backend.h"

#ifdef HVDRUN_HAVE_GLOO
#include "runtime/backends/gloo/gloo_backend.h"
#endif
#ifdef HVDRUN_HAVE_MPI
#include "runtime/backends/mpi/mpi_backend.h"
#endif
#ifdef HVDRUN_HAVE_NCCL
#include "runtime/backends/nccl/nccl_backend.h"
#endif

namespace hvdrun {

StatusOr<std::unique_ptr<Backend>> CreateBackend(BackendKind kind, const BackendContext& context) {
  switch (kind) {
#ifdef HVDRUN_HAVE_GLOO
    case BackendKind::kGloo:
      return GlooBackend::Create(context);
#endif
#ifdef HVDRUN_HAVE_MPI
    case BackendKind::kMpi:
      return MpiBackend::Create(context);
#endif
#ifdef HVDRUN_HAVE_NCCL
    case BackendKind::kNccl:
      return NcclBackend::Create(context);
#endif
    default:
      break;
  }
  return BackendNotBuiltIn(kind);
}

}  // namespace hvdrun
