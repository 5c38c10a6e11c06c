// The environment contract with PyTorch: an unmodified torch.distributed program (env://, Gloo)
// runs under hvdrun and sees the ranks, world size and local ranks hvdrun planned. It runs with
// Debian's python3-torch through /usr/bin/python3, since the first python3 on PATH may be another
// interpreter without torch.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/process_runner.h"

namespace hvdrun::e2e {
namespace {

constexpr const char* kPython = "/usr/bin/python3";
// Importing torch takes seconds per rank on a 2-core machine; three at once take longer.
constexpr std::chrono::milliseconds kTorchRunTimeout{150'000};

// What rank `rank` of `world` prints: torch's view of its place, then the results of its
// collectives (see torch_env_check.py).
std::string ExpectedLine(int rank, int world, int local_rank) {
  int sum = world * (world + 1) / 2;
  std::string gathered;
  for (int r = 0; r < world; ++r) gathered += (r > 0 ? "," : "") + std::to_string(r * r);
  return "[" + std::to_string(rank) + "]<stdout>:rank " + std::to_string(rank) + " of " +
         std::to_string(world) + " local " + std::to_string(local_rank) + ": sum " + std::to_string(sum) +
         " broadcast " + std::to_string(1000 + world - 1) + " gather " + gathered + "\n";
}

class TorchEnvTest : public testing::Test {
 protected:
  void SetUp() override {
    ProcessResult probe =
        RunProcess({kPython, "-c", "import torch.distributed as d; assert d.is_gloo_available()"},
                   std::chrono::seconds(60));
    ASSERT_EQ(probe.exit_code, 0) << kPython << " cannot import torch.distributed with Gloo; "
                                  << "install Debian's python3-torch (scripts/install-deps.sh does)\n"
                                  << probe;
  }
};

TEST_F(TorchEnvTest, ThreeRanksOnOneHostInitFromEnv) {
  ProcessResult result =
      RunProcess({HvdrunPath(), "-np", "3", kPython, HVDRUN_TORCH_ENV_CHECK_PY}, kTorchRunTimeout);
  ASSERT_EQ(result.exit_code, 0) << result;
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_NE(result.stdout_text.find(ExpectedLine(rank, 3, rank)), std::string::npos)
        << ExpectedLine(rank, 3, rank) << result;
  }
}

// Two hosts (both this machine): MASTER_ADDR names rank 0's host, LOCAL_RANK restarts per host.
TEST_F(TorchEnvTest, ThreeRanksOnTwoHostsInitFromEnv) {
  ProcessResult result = RunProcess(
      {HvdrunPath(), "-np", "3", "-H", "localhost:2,127.0.0.1:1", kPython, HVDRUN_TORCH_ENV_CHECK_PY},
      kTorchRunTimeout);
  ASSERT_EQ(result.exit_code, 0) << result;
  const int local_ranks[] = {0, 1, 0};
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_NE(result.stdout_text.find(ExpectedLine(rank, 3, local_ranks[rank])), std::string::npos)
        << ExpectedLine(rank, 3, local_ranks[rank]) << result;
  }
}

}  // namespace
}  // namespace hvdrun::e2e
