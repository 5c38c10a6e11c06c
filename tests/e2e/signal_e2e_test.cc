// Signals to hvdrun itself: SIGINT and SIGTERM stop the job; SIGKILL leaves it to the agents, which
// must leave nothing running either.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/rank_record.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kSetUpTimeout{10'000};

// hvdrun running `hvdrun-test-rank job DIR <rank_options>` as three ranks on two local hosts, with
// cleanup of every process the ranks report, however the test ends.
class RunningJob {
 public:
  explicit RunningJob(const std::vector<std::string>& rank_options)
      : hvdrun_(StartHvdrun(Concat({{"-np", "3", "-H", "localhost:2,127.0.0.1:1"},
                                    RankCommand(Concat({{"job", dir_.path()}, rank_options}))}))) {}

  // Waits for every rank's record; fails the test unless every reported process runs.
  void WaitUntilRunning() {
    std::optional<std::vector<RankRecord>> records = WaitForRankRecords(dir_.path(), 3, kSetUpTimeout);
    ASSERT_TRUE(records.has_value()) << hvdrun_.Wait(milliseconds(0));
    pids_ = ReportedPids(*records);
    for (pid_t pid : pids_) cleanup_.Add(pid);
    ASSERT_EQ(pids_.size(), 9u) << "each rank reports itself, its agent and its grandchild";
    for (pid_t pid : pids_) ASSERT_TRUE(IsRunning(pid)) << "pid " << pid << " should run";
  }

  RunningProcess& hvdrun() { return hvdrun_; }
  const std::vector<pid_t>& pids() const { return pids_; }

 private:
  ScratchDir dir_;
  RunningProcess hvdrun_;
  std::vector<pid_t> pids_;
  // Declared last, so that it runs first: strays die before hvdrun is reaped and dir_ removed.
  KillOnScopeExit cleanup_;
};

TEST(SignalTest, KillingHvdrunLeavesNoRankAgentOrGrandchildWithin5s) {
  RunningJob job({"--ignore-term", "--grandchild"});
  ASSERT_NO_FATAL_FAILURE(job.WaitUntilRunning());

  job.hvdrun().Signal(SIGKILL);
  const auto killed_at = std::chrono::steady_clock::now();
  ProcessResult result = job.hvdrun().Wait(milliseconds(5'000));
  EXPECT_EQ(result.term_signal, SIGKILL) << result;
  const auto left = milliseconds(5'000) -
                    std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - killed_at);
  std::vector<pid_t> still_running = WaitUntilEnded(job.pids(), std::max(left, milliseconds(0)));
  EXPECT_TRUE(still_running.empty()) << "outlived hvdrun by 5 s: " << DescribeProcesses(still_running);
}

struct InterruptCase {
  std::string name;
  int signal;
  int exit_code;
  std::string signal_name;
  std::vector<std::string> rank_options;
};

// Names the case in gtest's messages instead of dumping its bytes.
void PrintTo(const InterruptCase& test_case, std::ostream* out) { *out << test_case.name; }

class InterruptTest : public testing::TestWithParam<InterruptCase> {};

TEST_P(InterruptTest, SignalToHvdrunStopsEveryRank) {
  const InterruptCase& param = GetParam();
  RunningJob job(param.rank_options);
  ASSERT_NO_FATAL_FAILURE(job.WaitUntilRunning());

  job.hvdrun().Signal(param.signal);
  ProcessResult result = job.hvdrun().Wait(milliseconds(10'000));
  EXPECT_EQ(result.exit_code, param.exit_code) << result;
  EXPECT_NE(result.stderr_text.find(param.signal_name), std::string::npos) << result;
  std::vector<pid_t> still_running = WaitUntilEnded(job.pids(), milliseconds(0));
  EXPECT_TRUE(still_running.empty()) << "outlived hvdrun: " << DescribeProcesses(still_running);
}

// A second SIGINT during the kill grace ends the job at once, and still leaves nothing running.
TEST(SignalTest, SecondSigintKillsEveryRankAndGrandchildAtOnce) {
  RunningJob job({"--ignore-term", "--grandchild"});
  ASSERT_NO_FATAL_FAILURE(job.WaitUntilRunning());

  job.hvdrun().Signal(SIGINT);
  std::this_thread::sleep_for(milliseconds(200));  // well inside the 1 s kill grace
  job.hvdrun().Signal(SIGINT);
  ProcessResult result = job.hvdrun().Wait(milliseconds(10'000));
  EXPECT_EQ(result.exit_code, 130) << result;
  EXPECT_NE(result.stderr_text.find("second interrupt"), std::string::npos) << result;
  std::vector<pid_t> still_running = WaitUntilEnded(job.pids(), milliseconds(1'000));
  EXPECT_TRUE(still_running.empty()) << "outlived hvdrun by 1 s: " << DescribeProcesses(still_running);
}

INSTANTIATE_TEST_SUITE_P(Signals, InterruptTest,
                         testing::Values(InterruptCase{"Sigint", SIGINT, 130, "SIGINT", {"--grandchild"}},
                                         InterruptCase{"SigtermWithRanksIgnoringIt",
                                                       SIGTERM,
                                                       143,
                                                       "SIGTERM",
                                                       {"--ignore-term", "--grandchild"}}),
                         [](const testing::TestParamInfo<InterruptCase>& test_info) {
                           return test_info.param.name;
                         });

}  // namespace
}  // namespace hvdrun::e2e
