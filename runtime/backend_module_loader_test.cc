#include "runtime/backend_module_loader.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "runtime/backend_module.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

using e2e::ScratchDir;

std::string Message(const Status& status) { return status.ok() ? "OK" : status.message(); }

template <typename T>
std::string Message(const StatusOr<T>& result) {
  return result.ok() ? "OK" : result.status().message();
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Puts the file at `from` where a libhvdrun in dir/ looks for backend `kind`'s module.
void InstallAsModule(const ScratchDir& dir, BackendKind kind, const std::string& from) {
  const std::string to = BackendModulePath(dir.path(), kind);
  std::filesystem::create_directories(std::filesystem::path(to).parent_path());
  std::filesystem::copy_file(from, to);
}

StatusOr<std::unique_ptr<Backend>> CreateNothing(const BackendContext& /*context*/) {
  return Status::Error("not called");
}

TEST(BackendModulePathTest, IsUnderHvdrunBackendsInTheLibrarysDirectory) {
  EXPECT_EQ(BackendModulePath("/usr/lib/x86_64-linux-gnu", BackendKind::kGloo),
            "/usr/lib/x86_64-linux-gnu/hvdrun/backends/libhvdrun-gloo.so");
  EXPECT_EQ(BackendModulePath("/opt/hvdrun/lib/", BackendKind::kMpi),
            "/opt/hvdrun/lib/hvdrun/backends/libhvdrun-mpi.so");
  EXPECT_EQ(BackendModulePath("/opt/hvdrun/lib", BackendKind::kNccl),
            "/opt/hvdrun/lib/hvdrun/backends/libhvdrun-nccl.so");
}

TEST(BackendModuleOpenFlagsTest, GlooBindsDeepAndStaysLocal) {
  EXPECT_EQ(BackendModuleOpenFlags(BackendKind::kGloo, false), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
}

TEST(BackendModuleOpenFlagsTest, GlooUnderASanitizerIsNotBoundDeepWhichItWouldAbort) {
  EXPECT_EQ(BackendModuleOpenFlags(BackendKind::kGloo, true), RTLD_NOW | RTLD_LOCAL);
}

TEST(BackendModuleOpenFlagsTest, MpiJoinsTheGlobalScopeForOpenMpisComponents) {
  EXPECT_EQ(BackendModuleOpenFlags(BackendKind::kMpi, false), RTLD_NOW | RTLD_GLOBAL);
  EXPECT_EQ(BackendModuleOpenFlags(BackendKind::kNccl, false), RTLD_NOW | RTLD_LOCAL);
}

TEST(CheckBackendModuleTest, AcceptsThisBuildsModuleOfTheKindAsked) {
  const BackendModule module{kBackendInterfaceId, BackendKind::kGloo, &CreateNothing};
  EXPECT_EQ(Message(CheckBackendModule(&module, BackendKind::kGloo, "/lib/m.so")), "OK");
}

TEST(CheckBackendModuleTest, RefusesAModuleOfAnotherBuildNamingBothBuilds) {
  const BackendModule module{"hvdrun 0.1.0, interface 0123456789abcdef, GNU 11.0.0", BackendKind::kGloo,
                             &CreateNothing};
  const std::string message = Message(CheckBackendModule(&module, BackendKind::kGloo, "/lib/m.so"));
  EXPECT_EQ(message, std::string("gloo: the backend module /lib/m.so is from another build of hvdrun (hvdrun "
                                 "0.1.0, interface 0123456789abcdef, GNU 11.0.0; this libhvdrun: ") +
                         kBackendInterfaceId + "): install the modules that came with this libhvdrun");
}

TEST(CheckBackendModuleTest, RefusesAModuleOfAnotherBackend) {
  const BackendModule module{kBackendInterfaceId, BackendKind::kMpi, &CreateNothing};
  EXPECT_EQ(
      Message(CheckBackendModule(&module, BackendKind::kGloo, "/lib/m.so")),
      "gloo: the backend module /lib/m.so holds the backend 'mpi', not 'gloo': install the modules that "
      "came with this libhvdrun");
}

TEST(CheckBackendModuleTest, RefusesNoModule) {
  EXPECT_EQ(
      Message(CheckBackendModule(nullptr, BackendKind::kNccl, "/lib/m.so")),
      "nccl: cannot load libhvdrun's nccl backend module /lib/m.so: its hvdrun_backend_module_v1 returned no "
      "module, so it is no hvdrun backend module; install NCCL 2 and the CUDA runtime this hvdrun was built "
      "with (libnccl.so.2, libcudart: NVIDIA's packages, or the nvidia-nccl and nvidia-cuda-runtime pip "
      "wheels) and put their directories on LD_LIBRARY_PATH, or run with --gloo");
}

TEST(LoadBackendModuleTest, AMissingModuleNamesThePathAndWhatToDo) {
  ScratchDir dir;
  const std::string path = dir.path() + "/hvdrun/backends/libhvdrun-gloo.so";
  EXPECT_EQ(Message(LoadBackendModule(BackendKind::kGloo, dir.path())),
            "gloo: libhvdrun's gloo backend module is missing: no file " + path +
                " (libhvdrun loads each backend from hvdrun/backends/ in its own directory); install it with "
                "libhvdrun, from the same package or tarball, or run with another backend");
}

TEST(LoadBackendModuleTest, AFileDlopenRefusesGivesDlerrorsTextAndWhatToInstall) {
  ScratchDir dir;
  const std::string text = dir.WriteFile("not-elf", "not a shared library\n");
  InstallAsModule(dir, BackendKind::kMpi, text);
  const std::string message = Message(LoadBackendModule(BackendKind::kMpi, dir.path()));
  EXPECT_TRUE(Contains(message, "mpi: cannot load libhvdrun's mpi backend module " +
                                    BackendModulePath(dir.path(), BackendKind::kMpi) + ": "))
      << message;
  // dlerror's own words: "invalid ELF header" or "file too short", after the path once more.
  EXPECT_TRUE(Contains(message, "invalid ELF header") || Contains(message, "file too short")) << message;
  EXPECT_TRUE(
      Contains(message, "; install Open MPI (Debian: libopenmpi3 and openmpi-bin), or run with --gloo"))
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(LoadBackendModuleTest, AModuleOfAnotherBuildIsRefusedBeforeAnythingInItIsCalled) {
  ScratchDir dir;
  InstallAsModule(dir, BackendKind::kGloo, HVDRUN_TEST_FOREIGN_BACKEND_MODULE);
  const std::string message = Message(LoadBackendModule(BackendKind::kGloo, dir.path()));
  EXPECT_TRUE(
      Contains(message, "gloo: the backend module " + BackendModulePath(dir.path(), BackendKind::kGloo) +
                            " is from another build of hvdrun (hvdrun 0.0.0, interface of another build"))
      << message;
}

}  // namespace
}  // namespace hvdrun
