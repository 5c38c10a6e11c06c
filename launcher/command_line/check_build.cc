#include "launcher/command_line/check_build.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "common/process/command_output.h"
#include "common/version.h"

namespace hvdrun {
namespace {

// Importing hvdrun.torch imports torch: seconds on a loaded machine.
constexpr std::chrono::milliseconds kImportTimeout{30'000};

const char* Check(bool built) { return built ? "X" : " "; }

}  // namespace

BuildFacts FindBuildFacts(const std::string& hvdrun_path) {
  BuildFacts facts;
  // HVDRUN_LIBDIR_FROM_BINDIR: the installed library directory relative to the programs' (CMake).
  const std::filesystem::path modules =
      std::filesystem::path(hvdrun_path).parent_path() / HVDRUN_LIBDIR_FROM_BINDIR / "hvdrun" / "backends";
  facts.modules_dir = modules.lexically_normal().string();
  auto installed = [&](const char* name) {
    return ::access((modules / ("libhvdrun-" + std::string(name) + ".so")).c_str(), R_OK) == 0;
  };
  facts.gloo = installed("gloo");
  facts.mpi = installed("mpi");
  facts.nccl = installed("nccl");
  facts.torch = CaptureOutput({"python3", "-c", "import hvdrun.torch"}, kImportTimeout).ok();
  return facts;
}

std::string FormatCheckBuild(const BuildFacts& facts) {
  return std::string("hvdrun v") + kVersion +
         ":\n"
         "\n"
         "Available Frameworks:\n"
         "    [ ] TensorFlow\n"
         "    [" +
         Check(facts.torch) +
         "] PyTorch\n"
         "    [ ] MXNet\n"
         "\n"
         "Available Controllers:\n"
         "    [" +
         Check(facts.mpi) + "] MPI\n    [" + Check(facts.gloo) +
         "] Gloo\n"
         "\n"
         "Available Tensor Operations:\n"
         "    [" +
         Check(facts.nccl) +
         "] NCCL\n"
         "    [ ] DDL\n"
         "    [ ] CCL\n"
         "    [" +
         Check(facts.mpi) + "] MPI\n    [" + Check(facts.gloo) + "] Gloo\n";
}

}  // namespace hvdrun
