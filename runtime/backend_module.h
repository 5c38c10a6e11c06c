// BackendModule: what a backend module exports to libhvdrun.so, which loads it on first use of its
// backend (runtime/backend_module_loader.h says where from and how).
//
// Each backend of the shared libhvdrun is a module of its own, libhvdrun-<name>.so, so that
// libhvdrun.so itself needs none of the backends' libraries (libgloo, libmpi, libnccl, libcudart)
// and each can be loaded the way its library asks. A module exports one symbol, the C function
// kBackendModuleEntryPoint, which returns a BackendModule that lives as long as the process: the
// module is never unloaded.
//
// What crosses the boundary are hvdrun's own types (Backend, BackendContext, Status, the element
// types), compiled from the same headers by the same build. The module links libhvdrun.so for the
// exported hvdrun:: functions, and compiles the internal helpers it uses (the reduction kernels)
// into itself. A module from another build may lay these types out differently: its interface_id
// differs from libhvdrun's, and the loader refuses it before calling anything in it. interface_id
// is the first member and the struct's layout is fixed by the entry point's name (v1): a struct of
// another layout comes with another name.
#ifndef HVDRUN_RUNTIME_BACKEND_MODULE_H_
#define HVDRUN_RUNTIME_BACKEND_MODULE_H_

#include <memory>

#include "hvdrun/export.h"
#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/backend.h"
#include "runtime/backend_interface_id.h"

namespace hvdrun {

struct BackendModule {
  // kBackendInterfaceId of the build that compiled the module.
  const char* interface_id;
  BackendKind kind;
  // Creates the backend for this rank, as CreateBackend (backend.h) does.
  StatusOr<std::unique_ptr<Backend>> (*create)(const BackendContext& context);
};

// The name of the one symbol a module exports: a function `const BackendModule* ()`.
inline constexpr char kBackendModuleEntryPoint[] = "hvdrun_backend_module_v1";
using BackendModuleEntryPoint = const BackendModule* (*)();

// This build's identity of the types that cross the boundary: the release, a digest of the
// headers that declare them, and the compiler (runtime/CMakeLists.txt generates it).
inline constexpr char kBackendInterfaceId[] = HVDRUN_BACKEND_INTERFACE_ID;

}  // namespace hvdrun

// Defined by each backend's module (backends/<name>/<name>_module.cc); never by libhvdrun, which
// looks it up with dlsym.
extern "C" HVDRUN_EXPORT const hvdrun::BackendModule* hvdrun_backend_module_v1();

#endif  // HVDRUN_RUNTIME_BACKEND_MODULE_H_
