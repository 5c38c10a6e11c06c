#include "runtime/backend.h"

#include <string>

namespace hvdrun {

// CreateBackend has two definitions, one per library, with the same contract (backend.h), and a
// third for one test program (backends/nccl/nccl_tests_backends.cc: the NCCL backend alone):
//   backend_linked.cc  the static runtime (hvdrun_runtime_static: the unit tests, the conformance
//                      harnesses): the backends built are linked in and created directly;
//   backend_loaded.cc  libhvdrun.so: each backend built is a module, libhvdrun-<name>.so, loaded on
//                      first use (backend_module_loader.h).
//
// To add a backend:
// 1. a folder backends/<name>/ with a Backend implementation whose static Create() has
//    CreateBackend's signature, and <name>_module.cc, the module's entry point (backend_module.h);
// 2. one hvdrun_add_backend(<name> ...) in runtime/CMakeLists.txt: it builds the module for
//    libhvdrun.so and the objects into the static runtime, and defines HVDRUN_HAVE_<NAME> for the
//    two factories;
// 3. a case in backend_linked.cc's and backend_loaded.cc's switches, and the module's dlopen flags,
//    with their reason, in backend_module_loader.cc (BackendModuleOpenFlags);
// 4. a harness that runs the conformance cases (runtime/backend_conformance.h) over it.
Status BackendNotBuiltIn(BackendKind kind) {
  const std::string name(BackendName(kind));
  return Status::Error("backend '" + name + "' is not built into this libhvdrun (rebuild hvdrun with " +
                       name + " installed, or run with another backend: --gloo)");
}

}  // namespace hvdrun
