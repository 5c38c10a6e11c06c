#include "runtime/backend_module_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "runtime/one_line.h"

namespace hvdrun {
namespace {

// What to install when a module's libraries are missing, and which backend to run instead.
std::string_view WhatToInstall(BackendKind kind) {
  switch (kind) {
    case BackendKind::kGloo:
      return "install Gloo's library libgloo.so.0 (Debian: libgloo0), or run with --mpi";
    case BackendKind::kMpi:
      return "install Open MPI (Debian: libopenmpi3 and openmpi-bin), or run with --gloo";
    case BackendKind::kNccl:
      return "install NCCL 2 and the CUDA runtime this hvdrun was built with (libnccl.so.2, libcudart: "
             "NVIDIA's packages, or the nvidia-nccl and nvidia-cuda-runtime pip wheels) and put their "
             "directories on LD_LIBRARY_PATH, or run with --gloo";
  }
  return "run with another backend";
}

// Whether a sanitizer runtime that aborts a dlopen with RTLD_DEEPBIND is in this process.
bool SanitizerRuntimePresent() {
  for (const char* init : {"__asan_init", "__tsan_init", "__msan_init", "__hwasan_init"}) {
    if (dlsym(RTLD_DEFAULT, init) != nullptr) return true;
  }
  return false;
}

// The directory the dynamic linker found this library in ($ORIGIN).
StatusOr<std::string> ThisLibraryDirectory() {
  Dl_info info{};
  struct link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<const void*>(&ThisLibraryDirectory), &info, reinterpret_cast<void**>(&map),
              RTLD_DL_LINKMAP) == 0 ||
      map == nullptr) {
    return Status::Error(
        "libhvdrun: cannot find its own file to load its backend modules from (dladdr failed)");
  }
  char origin[PATH_MAX] = {};
  if (dlinfo(map, RTLD_DI_ORIGIN, origin) != 0) {
    const char* error = dlerror();
    return Status::Error("libhvdrun: cannot find its own directory to load its backend modules from: " +
                         OneLine(error != nullptr ? error : "dlinfo failed"));
  }
  return std::string(origin);
}

StatusOr<const BackendModule*> OpenModule(BackendKind kind, const std::string& path) {
  struct stat file {};
  if (stat(path.c_str(), &file) != 0 && errno == ENOENT) return BackendModuleMissing(kind, path);
  dlerror();
  void* handle = dlopen(path.c_str(), BackendModuleOpenFlags(kind, SanitizerRuntimePresent()));
  if (handle == nullptr) {
    const char* error = dlerror();
    return BackendModuleNotLoaded(kind, path, error != nullptr ? error : "dlopen failed");
  }
  // From here on the module stays loaded, also when it is refused: a refused module's
  // constructors have run, and unloading it would run its destructors with nothing gained.
  void* symbol = dlsym(handle, kBackendModuleEntryPoint);
  if (symbol == nullptr) {
    return BackendModuleNotLoaded(
        kind, path,
        "it exports no " + std::string(kBackendModuleEntryPoint) + ", so it is no hvdrun backend module");
  }
  const BackendModule* module = reinterpret_cast<BackendModuleEntryPoint>(symbol)();
  if (Status checked = CheckBackendModule(module, kind, path); !checked.ok()) return checked;
  return module;
}

}  // namespace

std::string BackendModulePath(std::string_view library_dir, BackendKind kind) {
  std::string path(library_dir);
  if (!path.empty() && path.back() != '/') path += '/';
  return path + "hvdrun/backends/libhvdrun-" + std::string(BackendName(kind)) + ".so";
}

int BackendModuleOpenFlags(BackendKind kind, bool sanitizer_runtime) {
  switch (kind) {
    case BackendKind::kGloo:
      return RTLD_NOW | RTLD_LOCAL | (sanitizer_runtime ? 0 : RTLD_DEEPBIND);
    case BackendKind::kMpi:
      return RTLD_NOW | RTLD_GLOBAL;
    case BackendKind::kNccl:
      return RTLD_NOW | RTLD_LOCAL;
  }
  return RTLD_NOW | RTLD_LOCAL;
}

Status CheckBackendModule(const BackendModule* module, BackendKind kind, std::string_view path) {
  const std::string name(BackendName(kind));
  if (module == nullptr || module->interface_id == nullptr) {
    return BackendModuleNotLoaded(kind, path,
                                  "its " + std::string(kBackendModuleEntryPoint) +
                                      " returned no module, so it is no hvdrun backend module");
  }
  if (std::string_view(module->interface_id) != kBackendInterfaceId) {
    return Status::Error(name + ": the backend module " + std::string(path) +
                         " is from another build of hvdrun (" + OneLine(module->interface_id) +
                         "; this libhvdrun: " + kBackendInterfaceId +
                         "): install the modules that came with this libhvdrun");
  }
  if (module->kind != kind || module->create == nullptr) {
    return Status::Error(name + ": the backend module " + std::string(path) + " holds the backend '" +
                         std::string(BackendName(module->kind)) + "', not '" + name +
                         "': install the modules that came with this libhvdrun");
  }
  return Status::Ok();
}

Status BackendModuleMissing(BackendKind kind, std::string_view path) {
  const std::string name(BackendName(kind));
  return Status::Error(name + ": libhvdrun's " + name + " backend module is missing: no file " +
                       std::string(path) +
                       " (libhvdrun loads each backend from hvdrun/backends/ in its own directory); install "
                       "it with libhvdrun, from the same package or tarball, or run with another backend");
}

Status BackendModuleNotLoaded(BackendKind kind, std::string_view path, std::string_view reason) {
  const std::string name(BackendName(kind));
  return Status::Error(name + ": cannot load libhvdrun's " + name + " backend module " + std::string(path) +
                       ": " + OneLine(reason) + "; " + std::string(WhatToInstall(kind)));
}

StatusOr<const BackendModule*> LoadBackendModule(BackendKind kind, const std::string& library_dir) {
  std::string dir = library_dir;
  if (dir.empty()) {
    StatusOr<std::string> origin = ThisLibraryDirectory();
    if (!origin.ok()) return Status::Error(std::string(BackendName(kind)) + ": " + origin.status().message());
    dir = std::move(origin).value();
  }
  const std::string path = BackendModulePath(dir, kind);

  static std::mutex mutex;
  // Never destroyed, as the modules are never unloaded.
  static auto* loaded = new std::map<std::string, const BackendModule*>;  // GUARDED_BY(mutex)
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded->find(path); it != loaded->end()) return it->second;
  StatusOr<const BackendModule*> module = OpenModule(kind, path);
  if (module.ok()) loaded->emplace(path, module.value());
  return module;
}

}  // namespace hvdrun
