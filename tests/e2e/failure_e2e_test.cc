// Jobs that fail: the first failing rank's exit code and report, stopping the other ranks, and
// commands that cannot start; those every launch mode shares run under each (LaunchModes/...).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "tests/e2e/console_output.h"
#include "tests/e2e/failure_report.h"
#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/job_marker.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/rank_record.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

using std::chrono::milliseconds;

// How long the ranks of a job get to write their records.
constexpr milliseconds kSetUpTimeout{10'000};
// A failure stops the job in about a second (the kill grace); this is the promise tested.
constexpr milliseconds kStopBound{2'000};

// A way of starting ranks, and the hvdrun flags that choose it.
struct LaunchMode {
  std::string name;
  std::vector<std::string> flags;
};

// Failures every launch mode reports alike. Each job is marked, and nothing it started may outlive
// it. (How a failure stops ranks that ignore SIGTERM depends on the mode: AgentFailureTest below,
// MpiFailureTest in mpi_e2e_test.cc.)
class FailureTest : public testing::TestWithParam<LaunchMode> {
 protected:
  bool mpi() const { return GetParam().name == "Mpirun"; }

  ProcessResult Run(const std::vector<std::string>& args, const ProcessOptions& options = {}) {
    JobMarker marker;
    ProcessResult result = RunHvdrun(Concat({GetParam().flags, args}), marker.Options(options));
    std::vector<pid_t> left = marker.WaitUntilNoneRuns(milliseconds(0));
    EXPECT_TRUE(left.empty()) << "outlived hvdrun: " << DescribeProcesses(left);
    if (mpi()) {
      for (const char* banner : {"Primary job", "mpirun detected", "mpirun noticed"}) {
        EXPECT_FALSE(Contains(result.stderr_text, banner))
            << "mpirun's banner restating the failure" << result;
      }
    }
    return result;
  }
};

INSTANTIATE_TEST_SUITE_P(LaunchModes, FailureTest,
                         testing::Values(LaunchMode{"Agents", {}}, LaunchMode{"Mpirun", {"--mpi"}}),
                         [](const testing::TestParamInfo<LaunchMode>& mode) { return mode.param.name; });

TEST_P(FailureTest, FirstFailingRanksExitCodeAndReport) {
  ScratchDir dir;
  ProcessResult result = Run(Concat({{"-np", "4"}, RankCommand({"job", dir.path(), "--fail", "2:7"})}));
  ASSERT_EQ(result.exit_code, 7) << result;
  std::optional<std::vector<RankRecord>> records = WaitForRankRecords(dir.path(), 4, milliseconds(0));
  ASSERT_TRUE(records.has_value()) << "every rank was running when rank 2 failed" << result;

  FailureReport report = ParseFailureReport(result.stderr_text);
  EXPECT_TRUE(report.first_line.starts_with(
      "hvdrun: rank 2 on host localhost failed first (exit code 7); hvdrun stopped the other ranks."))
      << result;
  for (const char* column : {"RANK", "HOST", "PID", "STATUS", "NOTE", "LAST STDERR LINE"}) {
    EXPECT_TRUE(Contains(report.table_header, column)) << column << result;
  }
  ASSERT_EQ(report.rows.size(), 4u) << result;
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const std::string& row = report.rows[rank];
    EXPECT_TRUE(Contains(row, "localhost")) << row;
    EXPECT_TRUE(Contains(row, " " + std::to_string((*records)[rank].pid) + " ")) << "the rank's pid: " << row;
    if (rank == 2) {
      EXPECT_TRUE(Contains(row, "exit 7")) << row;
      EXPECT_TRUE(Contains(row, "first failure")) << row;
      EXPECT_TRUE(Contains(row, "rank 2 failing: exit code 7")) << row;
    } else {
      EXPECT_TRUE(Contains(row, "SIGTERM")) << row;
      EXPECT_TRUE(Contains(row, "stopped by hvdrun")) << row;
      EXPECT_TRUE(Contains(row, "rank " + std::to_string(rank) + " ready")) << row;
    }
  }
  const std::vector<std::string> expected_tail = {"last stderr lines of rank 2:", "  rank 2 ready",
                                                  "  rank 2 failing: exit code 7"};
  EXPECT_EQ(report.tail_header_and_lines, expected_tail) << result;
}

TEST_P(FailureTest, RankKilledBySignalGives128PlusTheSignal) {
  ScratchDir dir;
  ProcessResult result = Run(Concat({{"-np", "3"}, RankCommand({"job", dir.path(), "--fail", "1:SIGSEGV"})}));
  ASSERT_EQ(result.exit_code, 128 + SIGSEGV) << result;
  FailureReport report = ParseFailureReport(result.stderr_text);
  EXPECT_TRUE(
      report.first_line.starts_with("hvdrun: rank 1 on host localhost failed first (killed by SIGSEGV)"))
      << result;
  ASSERT_EQ(report.rows.count(1), 1u) << result;
  EXPECT_TRUE(Contains(report.rows[1], "SIGSEGV")) << report.rows[1];
  EXPECT_TRUE(Contains(report.rows[1], "first failure")) << report.rows[1];
}

// A program that is not there: one line, naming it, and exit code 127. Under mpirun the rank that
// reports first is whichever mpirun started first.
TEST_P(FailureTest, CommandNotFoundExits127) {
  ScratchDir dir;
  ProcessOptions options;
  options.working_dir = dir.path();
  ProcessResult result = Run({"-np", "2", "./nope", "arg"}, options);
  EXPECT_EQ(result.exit_code, 127) << result;
  EXPECT_EQ(result.stdout_text, "") << result;
  std::vector<std::string> lines = SplitLines(result.stderr_text);
  ASSERT_EQ(lines.size(), 1u) << result;
  EXPECT_TRUE(lines[0].starts_with(mpi() ? "hvdrun: rank " : "hvdrun: rank 0 on host localhost: ")) << result;
  EXPECT_TRUE(
      Contains(lines[0], " on host localhost: command not found: './nope' (No such file or directory)"))
      << result;
}

TEST_P(FailureTest, CommandNotExecutableExits126) {
  ScratchDir dir;
  const std::string script = dir.WriteFile("not-executable.sh", "#!/bin/sh\nexit 0\n");
  ASSERT_EQ(::chmod(script.c_str(), 0644), 0);
  ProcessResult result = Run({"-np", "1", script});
  EXPECT_EQ(result.exit_code, 126) << result;
  EXPECT_EQ(result.stdout_text, "") << result;
  EXPECT_EQ(SplitLines(result.stderr_text),
            std::vector<std::string>{"hvdrun: rank 0 on host localhost: command not executable: '" + script +
                                     "' (Permission denied)"})
      << result;
}

// Ranks that ignore SIGTERM and ranks that started children of their own must all be gone within
// kStopBound of the first failure, on every host.
TEST(AgentFailureTest, FailureStopsEveryRankAndGrandchildWithinTwoSeconds) {
  ScratchDir dir;
  RunningProcess hvdrun = StartHvdrun(Concat(
      {{"-np", "4", "-H", "localhost:2,127.0.0.1:2"},
       RankCommand({"job", dir.path(), "--fail", "3:5", "--wait-go", "--ignore-term", "--grandchild"})}));
  ASSERT_GT(hvdrun.pid(), 0);
  std::optional<std::vector<RankRecord>> records = WaitForRankRecords(dir.path(), 4, kSetUpTimeout);
  ASSERT_TRUE(records.has_value()) << hvdrun.Wait(milliseconds(0));
  const std::vector<pid_t> pids = ReportedPids(*records);
  KillOnScopeExit cleanup;
  for (pid_t pid : pids) cleanup.Add(pid);
  ASSERT_EQ(pids.size(), 4u * 3u) << "each rank reports itself, its agent and its grandchild";
  for (pid_t pid : pids) {
    ASSERT_TRUE(IsRunning(pid)) << "pid " << pid << " was not running before the failure";
  }
  EXPECT_NE((*records)[0].agent_pid, (*records)[2].agent_pid) << "two hosts, two agents";

  const auto [result, stopped_in] = LetRanksGoAndWait(hvdrun, dir.path(), milliseconds(10'000));
  EXPECT_EQ(result.exit_code, 5) << result;
  EXPECT_LT(stopped_in, kStopBound) << result;
  std::vector<pid_t> still_running = WaitUntilEnded(pids, milliseconds(0));
  EXPECT_TRUE(still_running.empty()) << "outlived hvdrun: " << DescribeProcesses(still_running);

  FailureReport report = ParseFailureReport(result.stderr_text);
  EXPECT_TRUE(report.first_line.starts_with("hvdrun: rank 3 on host 127.0.0.1 failed first (exit code 5)"))
      << result;
  ExpectKilledAfterIgnoringSigterm(report, 0, 2, result);
}

TEST(AgentFailureTest, RanksTooManyForOneHostAreRefusedInOneLineBeforeAnyStarts) {
  // -np 1048576 on one host once ran 39 s and printed a row per rank; 30,000 ended with the agent's
  // "frame of 18473349 bytes exceeds the limit". Now the launcher sees the host's Launch message
  // outgrow the protocol's frame and starts nothing.
  ScratchDir dir;
  JobMarker marker;
  ProcessResult result =
      RunHvdrun(Concat({{"-np", "1048576"}, RankCommand({"job", dir.path()})}), marker.Options({}));
  EXPECT_TRUE(marker.WaitUntilNoneRuns(milliseconds(0)).empty()) << result;
  EXPECT_EQ(result.exit_code, 3) << result;
  EXPECT_EQ(result.stdout_text, "") << result;
  ASSERT_EQ(std::count(result.stderr_text.begin(), result.stderr_text.end(), '\n'), 1) << result;
  EXPECT_TRUE(
      result.stderr_text.starts_with("hvdrun: host localhost: its 1048576 ranks' commands and "
                                     "environments do not fit the 16777216 bytes"))
      << result;
  EXPECT_FALSE(WaitForRankRecords(dir.path(), 1, milliseconds(0)).has_value()) << "a rank started";
}

}  // namespace
}  // namespace hvdrun::e2e
