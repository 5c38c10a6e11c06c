// libhvdrun's Gloo beside another Gloo: a rank program linked with a library of conflicting
// gloo:: functions before libhvdrun, and with it preloaded too, as a program on an upstream
// libtorch has one (runtime/backend_module_loader.h: the Gloo module is bound deep). Each of those
// functions aborts, naming itself, so a single call that binds to it fails the job.
#include <gtest/gtest.h>

#include <string>

#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/process_runner.h"

namespace hvdrun::e2e {
namespace {

TEST(GlooIsolationTest, CollectivesRunOnLibhvdrunsGlooWhenAnotherIsLoadedFirstAndPreloaded) {
  ProcessOptions options;
  options.extra_env = {std::string("LD_PRELOAD=") + HVDRUN_TEST_CONFLICTING_GLOO_PATH};
  ProcessResult result = RunHvdrun({"-np", "2", "--gloo", HVDRUN_TEST_GLOO_ISOLATION_PATH}, options);
  ASSERT_EQ(result.exit_code, 0) << result;
  for (const char* rank : {"0", "1"}) {
    const std::string line = std::string("[") + rank + "]<stdout>:rank " + rank +
                             " of 2: gloo isolated from 12 conflicting gloo:: functions: 7 collectives exact";
    EXPECT_NE(result.stdout_text.find(line), std::string::npos) << line << result;
  }
  EXPECT_EQ((result.stdout_text + result.stderr_text).find("conflicting gloo symbol called"),
            std::string::npos)
      << result;
}

}  // namespace
}  // namespace hvdrun::e2e
