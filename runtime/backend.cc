#include "runtime/backend.h"

#include <string>

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
namespace {

Status NotBuiltIn(BackendKind kind) {
  const std::string name(BackendName(kind));
  return Status::Error("backend '" + name + "' is not built into this libhvdrun (rebuild hvdrun with " +
                       name + " installed, or run with another backend: --gloo)");
}

}  // namespace

// To add a backend: a folder backends/<name>/ whose CMake code defines HVDRUN_HAVE_<NAME>, an
// include above, one line below, and a harness that runs the conformance cases
// (runtime/backend_conformance.h) over it.
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
  return NotBuiltIn(kind);
}

}  // namespace hvdrun
