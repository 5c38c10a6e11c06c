// Loading libhvdrun.so's backend modules (backend_module.h): where they are, how each is opened,
// and the one-line errors when one cannot be.
//
// Where: relative to libhvdrun.so's own file, so that the rule holds in the build tree, in an
// installed tree and in a tree moved elsewhere (a relocatable tarball). The directory is the one
// the dynamic linker found libhvdrun in ($ORIGIN: dladdr on a function of the library, then
// dlinfo(RTLD_DI_ORIGIN), absolute even when the library was found through a relative path), and
// backend `name`'s module is
//
//   <that directory>/hvdrun/backends/libhvdrun-<name>.so
//
// (installed: ${CMAKE_INSTALL_LIBDIR}/hvdrun/backends/; the build tree puts the modules there beside
// its libhvdrun.so too). A backend's module is loaded on the first CreateBackend for it, and never
// unloaded: its threads and static state (Open MPI's, NCCL's) live as long as the process.
//
// How (BackendModuleOpenFlags):
// - gloo: RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND. An upstream libtorch (pip, conda) carries a Gloo
//   of its own and exports its gloo:: symbols; libgloo.so.0 is built without -Bsymbolic. Without
//   DEEPBIND, the module's gloo:: references, and libgloo.so.0's references to its own functions,
//   would bind to whichever copy the process loaded first, and objects of one Gloo build would be
//   handled by code of another (the SIGSEGV in GlooBackend::Create on GPU servers). With DEEPBIND,
//   the module and the libgloo.so.0 this dlopen brings in look symbols up in the module's own
//   dependency tree first: the module, libhvdrun.so, libgloo.so.0, libstdc++, libc. LOCAL: nothing
//   of them joins the global scope, where it could in turn capture another library's gloo::
//   references (libtorch's own ProcessGroupGloo).
//   Why the boundary is safe: what crosses it are hvdrun's own types (Backend, BackendContext,
//   Status, the KeyValueStore the module bootstraps through), whose code and vtables are this
//   build's on both sides, plus plain buffers of elements. No Gloo object, FILE* or pointer to
//   process-wide data crosses, and nothing allocated with malloc on one side is freed on the other.
//   DEEPBIND's known caveats, and where they leave us:
//   * Allocator interposition. The module's references to malloc bind to libc's, and to operator
//     new/delete to libstdc++'s, even where the program or an LD_PRELOAD (jemalloc, tcmalloc)
//     replaces them. Memory that crosses the boundary (the std::string of a Status the module
//     returns, the Backend that libhvdrun deletes) is allocated through libstdc++'s operator new,
//     which itself calls malloc through the global scope, so it comes from the replacing
//     allocator, and libhvdrun frees it there: preloaded malloc replacements work. What does not: a
//     program whose own operator new/delete is not built on malloc/free (a private pool), since
//     the module's news would bypass it and its deletes receive them.
//   * Sanitizers. ASan, TSan, MSan and HWASan interpose malloc and abort any dlopen with
//     RTLD_DEEPBIND (google/sanitizers issue 611). When one of their runtimes is in the process
//     the Gloo module is loaded without DEEPBIND: a sanitized program loads no upstream libtorch
//     in hvdrun's tests, and one that does is not isolated from its Gloo.
//   * Copy-relocated data (stdout, std::cout, environ held by the program) is seen by the module
//     through the library's original definition; the Gloo module and libgloo write no such data.
//   * A library this dlopen brings in for the first time is bound deep too; one already loaded
//     (libstdc++, libhvdrun; libgloo.so.0 where Debian's libtorch brought it) keeps its binding.
// - mpi: RTLD_NOW | RTLD_GLOBAL. Open MPI opens its MCA components (btl, pml, coll, ...) itself,
//   RTLD_GLOBAL, and several resolve opal_*, orte_* and ompi_* symbols from the global scope alone:
//   Debian's Open MPI 4.1 builds mca_btl_tcp.so, mca_coll_han.so and others without a NEEDED
//   libopen-pal or libmpi. Loaded RTLD_LOCAL, they still load today only because an earlier
//   component that does need libopen-pal (mca_shmem_mmap.so) brings it into the global scope
//   (seen with LD_DEBUG=scopes, and tested under mpirun with btl self,tcp): an accident of Open
//   MPI's order. With the module global, libmpi and its libraries are there before any component
//   opens, as when a program links libmpi itself (mpi4py opens libmpi RTLD_GLOBAL for the same
//   reason). No DEEPBIND: a process has one MPI, initialised once (MpiLibraryHold); a program that
//   linked MPI itself shares its libmpi with the module. The module's one exported symbol joins
//   the global scope too, which is harmless: libhvdrun looks it up through each module's handle.
// - nccl: RTLD_NOW | RTLD_LOCAL. NCCL's and the CUDA runtime's internals are hidden inside their
//   libraries, so whichever libnccl.so.2 and libcudart the process has (an upstream libtorch's)
//   serve every call consistently; no DEEPBIND, for its caveats above.
//
// Errors, one line each, naming the backend, the path looked at, and what to do: the module file
// is missing; dlopen failed (dlerror's text: a missing libmpi.so.40, libnccl.so.2); the file is no
// backend module; or it came from another build (BackendModule::interface_id).
//
// Thread-safe: modules load under a mutex, each once per process.
#ifndef HVDRUN_RUNTIME_BACKEND_MODULE_LOADER_H_
#define HVDRUN_RUNTIME_BACKEND_MODULE_LOADER_H_

#include <string>
#include <string_view>

#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/backend_module.h"

namespace hvdrun {

// Returns backend `kind`'s module, loading it on the first call. `library_dir` is the directory to
// look in; empty: libhvdrun's own ($ORIGIN), which the tests override.
StatusOr<const BackendModule*> LoadBackendModule(BackendKind kind, const std::string& library_dir = "");

// <library_dir>/hvdrun/backends/libhvdrun-<name>.so
std::string BackendModulePath(std::string_view library_dir, BackendKind kind);

// The dlopen flags of `kind`'s module (above); `sanitizer_runtime`: whether a sanitizer that refuses
// RTLD_DEEPBIND runs in this process.
int BackendModuleOpenFlags(BackendKind kind, bool sanitizer_runtime);

// What a module's entry point returned, checked: not null, from this build, for `kind`.
Status CheckBackendModule(const BackendModule* module, BackendKind kind, std::string_view path);

// The errors for a module file that is missing, and for one dlopen or dlsym refused with `reason`.
Status BackendModuleMissing(BackendKind kind, std::string_view path);
Status BackendModuleNotLoaded(BackendKind kind, std::string_view path, std::string_view reason);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKEND_MODULE_LOADER_H_
