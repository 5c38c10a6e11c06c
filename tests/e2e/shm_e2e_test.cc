// libhvdrun's shared-memory allreduce under hvdrun --gloo: the job's segment is a memfd that never
// has a name in /dev/shm, and whatever is SIGKILLed (hvdrun, a rank), every rank ends.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/shm/dev_shm_entries.h"
#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

using std::chrono::milliseconds;

struct ShmRank {
  pid_t pid = 0;
  std::string segment;  // "memfd:hvdrun-shm:INODE"
};

// Waits for the records of `ranks` hvdrun-test-shm-rank processes in `dir`.
std::optional<std::vector<ShmRank>> WaitForShmRanks(const std::string& dir, int ranks, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<ShmRank> found;
  for (int rank = 0; rank < ranks;) {
    const std::string path = dir + "/rank-" + std::to_string(rank);
    if (!std::filesystem::exists(path)) {
      if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(milliseconds(20));
      continue;
    }
    ShmRank record;
    std::ifstream(path) >> record.pid >> record.segment;
    found.push_back(record);
    ++rank;
  }
  return found;
}

class ShmKillTest : public ::testing::TestWithParam<bool> {};

// GetParam(): kill hvdrun (true) or rank 1 (false).
TEST_P(ShmKillTest, SigkillLeavesNoSegmentAndNoRank) {
  const bool kill_hvdrun = GetParam();
  ScratchDir dir;
  const std::set<std::string> before = testing::DevShmEntries();
  RunningProcess hvdrun = StartHvdrun({"-np", "2", "--gloo", HVDRUN_TEST_SHM_RANK_PATH, dir.path()});
  KillOnScopeExit cleanup;
  std::optional<std::vector<ShmRank>> ranks = WaitForShmRanks(dir.path(), 2, milliseconds(20'000));
  ASSERT_TRUE(ranks.has_value()) << hvdrun.Wait(milliseconds(0));
  for (const ShmRank& rank : *ranks) cleanup.Add(rank.pid);
  const std::string segment = (*ranks)[0].segment;
  ASSERT_EQ(segment.rfind("memfd:hvdrun-shm:", 0), 0U) << "rank 0 maps no segment: '" << segment << "'";
  EXPECT_EQ((*ranks)[1].segment, segment);
  // Both ranks allreduce through it, and nothing of it is in /dev/shm.
  const std::vector<pid_t> ours = {hvdrun.pid(), (*ranks)[0].pid, (*ranks)[1].pid};
  for (const ShmRank& rank : *ranks) {
    EXPECT_EQ(testing::ProcessMaps(rank.pid).find("/dev/shm/"), std::string::npos)
        << testing::ProcessMaps(rank.pid);
  }
  EXPECT_EQ(testing::NewHvdrunEntries(before, ours), std::vector<std::string>());

  if (kill_hvdrun) {
    hvdrun.Signal(SIGKILL);
  } else {
    ASSERT_EQ(::kill((*ranks)[1].pid, SIGKILL), 0);
  }
  ProcessResult result = hvdrun.Wait(milliseconds(10'000));
  if (kill_hvdrun) {
    EXPECT_EQ(result.term_signal, SIGKILL) << result;
  } else {
    EXPECT_NE(result.exit_code, 0) << result;
    EXPECT_NE(result.stderr_text.find("rank 1"), std::string::npos) << result;
  }
  std::vector<pid_t> still_running = WaitUntilEnded({(*ranks)[0].pid, (*ranks)[1].pid}, milliseconds(5'000));
  EXPECT_TRUE(still_running.empty()) << DescribeProcesses(still_running);
  EXPECT_EQ(testing::NewHvdrunEntries(before, ours), std::vector<std::string>());
}

INSTANTIATE_TEST_SUITE_P(Kill, ShmKillTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? std::string("Hvdrun") : std::string("Rank");
                         });

}  // namespace
}  // namespace hvdrun::e2e
