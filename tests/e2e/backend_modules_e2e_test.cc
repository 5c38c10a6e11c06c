// libhvdrun.so's backend modules, end to end: loaded from hvdrun/backends/ beside the libhvdrun a
// rank loaded, and a one-line error naming the module's path when it is not there
// (runtime/backend_module_loader.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

// A copy of the build's libhvdrun.so.0 alone in a scratch directory, which the rank program loads
// (LD_LIBRARY_PATH comes before its RUNPATH): its modules are not beside it.
TEST(BackendModulesTest, AMissingModuleIsOneLineNamingThePathLookedAt) {
  ScratchDir dir;
  std::filesystem::copy_file(HVDRUN_TEST_RUNTIME_LIBRARY, dir.path() + "/libhvdrun.so.0");
  ProcessOptions options;
  options.extra_env = {"LD_LIBRARY_PATH=" + dir.path()};
  ProcessResult result = RunHvdrun({"-np", "1", "--gloo", HVDRUN_TEST_COLLECTIVES_PATH}, options);
  EXPECT_EQ(result.exit_code, 1) << result;
  const std::string line = "[0]<stderr>:gloo: libhvdrun's gloo backend module is missing: no file " +
                           dir.path() +
                           "/hvdrun/backends/libhvdrun-gloo.so (libhvdrun loads each backend from "
                           "hvdrun/backends/ in its own directory); install it with libhvdrun, from the same "
                           "package or tarball, or run with another backend\n";
  EXPECT_NE((result.stdout_text + result.stderr_text).find(line), std::string::npos) << line << result;
}

// The modules beside it again: the same program runs.
TEST(BackendModulesTest, ModulesBesideACopiedLibhvdrunAreTheOnesLoaded) {
  ScratchDir dir;
  std::filesystem::copy_file(HVDRUN_TEST_RUNTIME_LIBRARY, dir.path() + "/libhvdrun.so.0");
  std::filesystem::copy(std::filesystem::path(HVDRUN_TEST_RUNTIME_LIBRARY).parent_path() / "hvdrun",
                        dir.path() + "/hvdrun", std::filesystem::copy_options::recursive);
  ProcessOptions options;
  options.extra_env = {"LD_LIBRARY_PATH=" + dir.path()};
  ProcessResult result = RunHvdrun({"-np", "2", "--gloo", HVDRUN_TEST_COLLECTIVES_PATH}, options);
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stdout_text.find("results, 0 failed"), std::string::npos) << result;
}

}  // namespace
}  // namespace hvdrun::e2e
