// hvdrun --mpi end to end: the real Open MPI mpirun, starting `hvdrun-agent --mpi-rank` for each
// rank. The ranks' environment, their tagged output, failures, signals, --dry-run, mpirun's own
// failures, and libhvdrun's collectives over MPI; after every job, no process it started is left.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/collective_rank_output.h"
#include "tests/e2e/console_output.h"
#include "tests/e2e/failure_report.h"
#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/job_marker.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/rank_log_bytes.h"
#include "tests/e2e/rank_record.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kSetUpTimeout{15'000};
// Open MPI stops a job by SIGTERM a second after it decides to, and hvdrun-agent --mpi-rank kills
// a rank that ignores it half a second later: a stopped job is over well within this.
constexpr milliseconds kMpiStopBound{4'000};

// Runs hvdrun --mpi with `args` (its options, then the command), marked; then checks that nothing
// it started still runs.
ProcessResult RunMpiJob(const std::vector<std::string>& args) {
  JobMarker marker;
  ProcessResult result = RunHvdrun(Concat({{"--mpi"}, args}), marker.Options());
  std::vector<pid_t> left = marker.WaitUntilNoneRuns(milliseconds(0));
  EXPECT_TRUE(left.empty()) << "outlived hvdrun: " << DescribeProcesses(left);
  return result;
}

// True when `text` holds 64 hex digits in a row: what a leaked job secret looks like.
bool HoldsASecret(const std::string& text) {
  static const std::regex kSecret("[0-9a-f]{64}");
  return std::regex_search(text, kSecret);
}

// --- The ranks' environment ---------------------------------------------------------------------

struct LayoutCase {
  std::string name;
  std::vector<std::string> hvdrun_args;
  int ranks;
  std::string host;
};

void PrintTo(const LayoutCase& layout, std::ostream* out) { *out << layout.name; }

class MpiEnvironmentTest : public testing::TestWithParam<LayoutCase> {};

TEST_P(MpiEnvironmentTest, EveryRankGetsItsPlaceUnderEveryName) {
  const LayoutCase& layout = GetParam();
  const std::vector<std::string> names = {"HVDRUN_RANK",
                                          "HVDRUN_SIZE",
                                          "HVDRUN_LOCAL_RANK",
                                          "HVDRUN_LOCAL_SIZE",
                                          "HVDRUN_CROSS_RANK",
                                          "HVDRUN_CROSS_SIZE",
                                          "HVDRUN_HOSTNAME",
                                          "HVDRUN_HOST_ADDR",
                                          "HVDRUN_BACKEND",
                                          "HVDRUN_JOB_ID",
                                          "HOROVOD_RANK",
                                          "HOROVOD_SIZE",
                                          "HOROVOD_LOCAL_RANK",
                                          "HOROVOD_LOCAL_SIZE",
                                          "HOROVOD_CROSS_RANK",
                                          "HOROVOD_CROSS_SIZE",
                                          "RANK",
                                          "WORLD_SIZE",
                                          "LOCAL_RANK",
                                          "LOCAL_WORLD_SIZE",
                                          "GROUP_RANK",
                                          "GROUP_WORLD_SIZE",
                                          "MASTER_ADDR",
                                          "MASTER_PORT",
                                          "OMPI_COMM_WORLD_RANK",
                                          "HVDRUN_E2E_EXPORTED"};
  ProcessResult result = RunMpiJob(
      Concat({layout.hvdrun_args, {"-x", "HVDRUN_E2E_EXPORTED=a b"}, RankCommand(Concat({{"env"}, names}))}));
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_TRUE(UntaggedLines(result.stdout_text).empty()) << result;
  EXPECT_TRUE(UntaggedLines(result.stderr_text).empty()) << "no message from hvdrun or mpirun" << result;

  std::map<int, std::vector<std::string>> stdout_lines = TaggedLines(result.stdout_text, "stdout");
  std::map<int, std::vector<std::string>> stderr_lines = TaggedLines(result.stderr_text, "stderr");
  ASSERT_EQ(stdout_lines.size(), static_cast<size_t>(layout.ranks)) << result;
  std::string job_id;
  std::string master_port;
  for (int rank = 0; rank < layout.ranks; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    std::map<std::string, std::string> env = ParseAssignments(stdout_lines[rank]);
    const std::string r = std::to_string(rank);
    const std::string n = std::to_string(layout.ranks);
    std::map<std::string, std::string> expected = {{"HVDRUN_RANK", r},
                                                   {"HVDRUN_SIZE", n},
                                                   {"HVDRUN_LOCAL_RANK", r},
                                                   {"HVDRUN_LOCAL_SIZE", n},
                                                   {"HVDRUN_CROSS_RANK", "0"},
                                                   {"HVDRUN_CROSS_SIZE", "1"},
                                                   {"HVDRUN_HOSTNAME", layout.host},
                                                   {"HVDRUN_HOST_ADDR", "127.0.0.1"},
                                                   {"HVDRUN_BACKEND", "mpi"},
                                                   {"HOROVOD_RANK", r},
                                                   {"HOROVOD_SIZE", n},
                                                   {"HOROVOD_LOCAL_RANK", r},
                                                   {"HOROVOD_LOCAL_SIZE", n},
                                                   {"HOROVOD_CROSS_RANK", "0"},
                                                   {"HOROVOD_CROSS_SIZE", "1"},
                                                   {"RANK", r},
                                                   {"WORLD_SIZE", n},
                                                   {"LOCAL_RANK", r},
                                                   {"LOCAL_WORLD_SIZE", n},
                                                   {"GROUP_RANK", "0"},
                                                   {"GROUP_WORLD_SIZE", "1"},
                                                   {"MASTER_ADDR", "127.0.0.1"},
                                                   {"OMPI_COMM_WORLD_RANK", r},
                                                   {"HVDRUN_E2E_EXPORTED", "a b"}};
    for (const auto& [name, value] : expected) EXPECT_EQ(env[name], value) << name;
    if (rank == 0) {
      job_id = env["HVDRUN_JOB_ID"];
      master_port = env["MASTER_PORT"];
    }
    EXPECT_EQ(env["HVDRUN_JOB_ID"], job_id) << "one job id for every rank";
    EXPECT_EQ(env["MASTER_PORT"], master_port) << "one MASTER_PORT for every rank";
    EXPECT_EQ(stderr_lines[rank], std::vector<std::string>{"rank " + r + ": environment printed"});
  }
  EXPECT_EQ(job_id.size(), 16u);
  EXPECT_GT(std::atoi(master_port.c_str()), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, MpiEnvironmentTest,
    testing::Values(
        LayoutCase{"OneRank", {"-np", "1"}, 1, "localhost"},
        LayoutCase{"TwoRanks", {"-np", "2", "-H", "localhost:2"}, 2, "localhost"},
        LayoutCase{
            "ThreeRanksOnLocalhostNamedTwice", {"-np", "3", "-H", "localhost:2,localhost:1"}, 3, "localhost"},
        LayoutCase{
            "FourRanksOfEightSlotsOnTheLoopbackAddress", {"-np", "4", "-H", "127.0.0.1:8"}, 4, "127.0.0.1"},
        LayoutCase{"EverySlotOfTheHosts", {"-H", "localhost:4"}, 4, "localhost"}),
    [](const testing::TestParamInfo<LayoutCase>& test_info) { return test_info.param.name; });

TEST(MpiLayoutTest, TwoNamesOfThisMachineAreRefusedBeforeAnythingStarts) {
  ScratchDir dir;
  ProcessResult result =
      RunMpiJob(Concat({{"-np", "3", "-H", "localhost:2,127.0.0.1:1"}, RankCommand({"job", dir.path()})}));
  EXPECT_EQ(result.exit_code, 2) << result;
  EXPECT_EQ(
      result.stderr_text,
      "hvdrun: --mpi: hosts 'localhost' and '127.0.0.1' are both this machine, which mpirun runs as one "
      "node; name it once (-H localhost:3)\n");
  EXPECT_FALSE(ReadRankRecord(dir.path(), 0).has_value());
}

// --- Output -------------------------------------------------------------------------------------

TEST(MpiOutputTest, ArgumentsReachTheRankUnchanged) {
  ProcessResult result =
      RunMpiJob(Concat({{"-np", "1"}, RankCommand({"argv", "a b", "", "*", "$HOME", "--"})}));
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_EQ(TaggedLines(result.stdout_text, "stdout")[0],
            (std::vector<std::string>{"argc=5", "argv[0]=<a b>", "argv[1]=<>", "argv[2]=<*>",
                                      "argv[3]=<$HOME>", "argv[4]=<-->"}));
}

TEST(MpiOutputTest, LinesAreTaggedAsInAgentModeAndALastLineWithoutNewlineToo) {
  ProcessResult result = RunMpiJob(Concat({{"-np", "1"}, RankCommand({"partial"})}));
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_EQ(result.stdout_text, "[0]<stdout>:first line\n[0]<stdout>:no newline at end\n");
  EXPECT_EQ(result.stderr_text, "[0]<stderr>:error line\n[0]<stderr>:error without newline\n");
}

TEST(MpiOutputTest, ALongLineComesInPiecesOf64KiBAsInAgentMode) {
  // mpirun forwards it in pieces of about 4 KiB; hvdrun joins them into agent mode's pieces.
  constexpr size_t kLineBytes = 150'000;
  ProcessResult result =
      RunMpiJob(Concat({{"-np", "1"}, RankCommand({"long-line", std::to_string(kLineBytes)})}));
  ASSERT_EQ(result.exit_code, 0) << result;
  std::vector<std::string> lines = TaggedLines(result.stdout_text, "stdout")[0];
  ASSERT_EQ(lines.size(), 4u) << "pieces of 65536, 65536 and 18928 bytes, then 'after'";
  EXPECT_EQ(lines[0].size(), 65536u);
  EXPECT_EQ(lines[1].size(), 65536u);
  EXPECT_EQ(lines[3], "after");
  std::string expected;
  for (size_t i = 0; i < kLineBytes; ++i) expected.push_back(static_cast<char>('a' + i % 26));
  EXPECT_TRUE(lines[0] + lines[1] + lines[2] == expected) << "the pieces, joined, are not the line written";
}

TEST(MpiOutputTest, RankLogFilesHoldExactlyTheBytesWritten) {
  ScratchDir dir;
  const std::string logs = dir.path() + "/logs";
  ProcessResult result =
      RunMpiJob(Concat({{"-np", "3", "--output-filename", logs}, RankCommand({"log-bytes"})}));
  ASSERT_EQ(result.exit_code, 0) << result;
  for (int rank = 0; rank < 3; ++rank) {
    for (bool is_stdout : {true, false}) {
      const std::string stream = is_stdout ? "stdout" : "stderr";
      SCOPED_TRACE("rank " + std::to_string(rank) + " " + stream);
      const std::string expected = RankLogBytes(rank, is_stdout);
      const std::string actual = ReadFileBytes(logs + "/rank." + std::to_string(rank) + "/" + stream);
      ASSERT_EQ(actual.size(), expected.size());
      size_t first_difference = 0;
      while (first_difference < actual.size() && actual[first_difference] == expected[first_difference]) {
        ++first_difference;
      }
      EXPECT_EQ(first_difference, actual.size()) << "first differing byte at this offset";
      std::vector<std::string> console =
          TaggedLines(is_stdout ? result.stdout_text : result.stderr_text, stream)[rank];
      ASSERT_FALSE(console.empty());
      EXPECT_EQ(console.back(), "rank " + std::to_string(rank) + " " + stream + ": last line, no newline");
    }
  }
}

// --- Failures (those every launch mode shares: failure_e2e_test.cc) --------------------------------

// Ranks that ignore SIGTERM, and what they started, are killed too, within kMpiStopBound.
TEST(MpiFailureTest, AFailureStopsRanksIgnoringSigtermAndTheirChildren) {
  ScratchDir dir;
  JobMarker marker;
  RunningProcess hvdrun = StartHvdrun(Concat({{"--mpi", "-np", "3"},
                                              RankCommand({"job", dir.path(), "--fail", "0:5", "--wait-go",
                                                           "--ignore-term", "--grandchild"})}),
                                      marker.Options());
  std::optional<std::vector<RankRecord>> records = WaitForRankRecords(dir.path(), 3, kSetUpTimeout);
  ASSERT_TRUE(records.has_value()) << hvdrun.Wait(milliseconds(0));
  const std::vector<pid_t> pids = ReportedPids(*records);
  ASSERT_EQ(pids.size(), 9u) << "each rank reports itself, its agent and its grandchild";
  for (pid_t pid : pids) {
    ASSERT_TRUE(IsRunning(pid)) << "pid " << pid << " was not running before the failure";
  }

  const auto [result, stopped_in] = LetRanksGoAndWait(hvdrun, dir.path(), milliseconds(15'000));
  EXPECT_EQ(result.exit_code, 5) << result;
  EXPECT_LT(stopped_in, kMpiStopBound) << result;
  std::vector<pid_t> left = WaitUntilEnded(pids, milliseconds(0));
  EXPECT_TRUE(left.empty()) << "outlived hvdrun: " << DescribeProcesses(left);
  left = marker.WaitUntilNoneRuns(milliseconds(0));
  EXPECT_TRUE(left.empty()) << "outlived hvdrun: " << DescribeProcesses(left);

  FailureReport report = ParseFailureReport(result.stderr_text);
  EXPECT_TRUE(report.first_line.starts_with("hvdrun: rank 0 on host localhost failed first (exit code 5)"))
      << result;
  ExpectKilledAfterIgnoringSigterm(report, 1, 2, result);
}

// --- Signals to hvdrun --------------------------------------------------------------------------

// hvdrun --mpi running `hvdrun-test-rank job DIR <rank_options>` as three ranks, marked.
class RunningMpiJob {
 public:
  explicit RunningMpiJob(const std::vector<std::string>& rank_options)
      : hvdrun_(StartHvdrun(
            Concat({{"--mpi", "-np", "3"}, RankCommand(Concat({{"job", dir_.path()}, rank_options}))}),
            marker_.Options())) {}

  void WaitUntilRunning(size_t pids_per_rank) {
    std::optional<std::vector<RankRecord>> records = WaitForRankRecords(dir_.path(), 3, kSetUpTimeout);
    ASSERT_TRUE(records.has_value()) << hvdrun_.Wait(milliseconds(0));
    pids_ = ReportedPids(*records);
    ASSERT_EQ(pids_.size(), 3 * pids_per_rank);
    for (pid_t pid : pids_) ASSERT_TRUE(IsRunning(pid)) << "pid " << pid << " should run";
  }

  // Checks that nothing of the job runs `within` from now. A process SIGKILLed a moment ago may
  // still be tearing down (its command line already gone), so the rank pids share that window.
  void ExpectNothingLeft(milliseconds within) const {
    const auto deadline = std::chrono::steady_clock::now() + within;
    std::vector<pid_t> left = marker_.WaitUntilNoneRuns(within);
    EXPECT_TRUE(left.empty()) << "outlived hvdrun: " << DescribeProcesses(left);
    const auto remaining =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    left = WaitUntilEnded(pids_, std::max(remaining, milliseconds(0)));
    EXPECT_TRUE(left.empty()) << "outlived hvdrun: " << DescribeProcesses(left);
  }

  RunningProcess& hvdrun() { return hvdrun_; }

 private:
  ScratchDir dir_;
  JobMarker marker_;
  RunningProcess hvdrun_;
  std::vector<pid_t> pids_;
};

TEST(MpiSignalTest, SigintStopsEveryRank) {
  RunningMpiJob job({"--grandchild"});
  ASSERT_NO_FATAL_FAILURE(job.WaitUntilRunning(3));
  job.hvdrun().Signal(SIGINT);
  ProcessResult result = job.hvdrun().Wait(milliseconds(15'000));
  EXPECT_EQ(result.exit_code, 130) << result;
  EXPECT_TRUE(Contains(result.stderr_text, "hvdrun: SIGINT received: stopping every rank\n")) << result;
  EXPECT_TRUE(Contains(result.stderr_text, "hvdrun: stopped by SIGINT\n")) << result;
  job.ExpectNothingLeft(milliseconds(0));
}

TEST(MpiSignalTest, SigtermStopsRanksThatIgnoreIt) {
  RunningMpiJob job({"--ignore-term", "--grandchild"});
  ASSERT_NO_FATAL_FAILURE(job.WaitUntilRunning(3));
  const auto signalled_at = std::chrono::steady_clock::now();
  job.hvdrun().Signal(SIGTERM);
  ProcessResult result = job.hvdrun().Wait(milliseconds(15'000));
  EXPECT_EQ(result.exit_code, 143) << result;
  EXPECT_LT(std::chrono::steady_clock::now() - signalled_at, kMpiStopBound) << result;
  EXPECT_TRUE(Contains(result.stderr_text, "hvdrun: stopped by SIGTERM\n")) << result;
  job.ExpectNothingLeft(milliseconds(0));
}

TEST(MpiSignalTest, ASecondSigintKillsEveryRankAtOnce) {
  RunningMpiJob job({"--ignore-term", "--grandchild"});
  ASSERT_NO_FATAL_FAILURE(job.WaitUntilRunning(3));
  job.hvdrun().Signal(SIGINT);
  std::this_thread::sleep_for(milliseconds(200));  // well before mpirun's SIGTERM, a second later
  const auto second_at = std::chrono::steady_clock::now();
  job.hvdrun().Signal(SIGINT);
  ProcessResult result = job.hvdrun().Wait(milliseconds(15'000));
  EXPECT_EQ(result.exit_code, 130) << result;
  EXPECT_TRUE(Contains(result.stderr_text, "hvdrun: second interrupt: killing every rank now\n")) << result;
  EXPECT_LT(std::chrono::steady_clock::now() - second_at, milliseconds(2'500)) << result;
  job.ExpectNothingLeft(milliseconds(1'000));
}

TEST(MpiSignalTest, KillingHvdrunLeavesNothingRunningWithin5s) {
  RunningMpiJob job({"--ignore-term", "--grandchild"});
  ASSERT_NO_FATAL_FAILURE(job.WaitUntilRunning(3));
  job.hvdrun().Signal(SIGKILL);
  ProcessResult result = job.hvdrun().Wait(milliseconds(5'000));
  EXPECT_EQ(result.term_signal, SIGKILL) << result;
  job.ExpectNothingLeft(milliseconds(4'500));
}

// --- --dry-run and mpirun's own failures --------------------------------------------------------

TEST(MpiDryRunTest, PrintsTheCommandWithoutTheSecretAndStartsNothing) {
  ScratchDir dir;
  const std::string logs = dir.path() + "/logs";
  ProcessResult result =
      RunMpiJob(Concat({{"-np", "2", "--dry-run", "--output-filename", logs, "-x",
                         "HVDRUN_E2E_VALUE=secret-ish", "--mpi-args", "-mca btl_base_verbose 0 'two words'"},
                        RankCommand({"job", dir.path()})}));
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_EQ(result.stderr_text, "") << result;
  std::vector<std::string> lines = SplitLines(result.stdout_text);
  ASSERT_EQ(lines.size(), 1u) << result;
  const std::string& line = lines[0];
  const std::string root = ::geteuid() == 0 ? "--allow-run-as-root " : "";
  EXPECT_TRUE(line.starts_with("mpirun " + root +
                               "--tag-output -np 2 -H localhost:2 -bind-to none -map-by slot "
                               "-mca pml ob1 -mca btl '^openib' -mca btl_tcp_if_include lo "))
      << line;
  // Two ranks yield the CPU to each other when hvdrun may run on at most two CPUs.
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  ASSERT_EQ(::sched_getaffinity(0, sizeof(cpus), &cpus), 0);
  const bool yields = CPU_COUNT(&cpus) <= 2;
  EXPECT_EQ(Contains(line, " lo -mca mpi_yield_when_idle 1 -x HVDRUN_BACKEND "), yields) << line;
  EXPECT_EQ(Contains(line, " lo -x HVDRUN_BACKEND "), !yields) << line;
  for (const char* name :
       {"HVDRUN_SECRET", "HVDRUN_RENDEZVOUS_PORT", "HVDRUN_MPI_LAYOUT", "HVDRUN_E2E_VALUE"}) {
    EXPECT_TRUE(Contains(line, std::string(" -x ") + name + " ")) << name << ": " << line;
  }
  EXPECT_TRUE(Contains(line, " -mca btl_base_verbose 0 'two words' " + std::string(HVDRUN_TEST_BIN_DIR) +
                                 "/hvdrun-agent --mpi-rank -- " + TestRankPath() + " job "))
      << line;
  EXPECT_FALSE(Contains(line, "secret-ish")) << line;
  EXPECT_FALSE(HoldsASecret(line)) << line;
  EXPECT_FALSE(std::filesystem::exists(logs)) << "--dry-run starts nothing, creates nothing";
  EXPECT_FALSE(ReadRankRecord(dir.path(), 0).has_value());
}

// The printed command is shell text that sh reads back as the very words hvdrun would run, and
// nothing a hostile word holds runs: mpirun is a shell function here that prints its arguments.
TEST(MpiDryRunTest, ThePrintedCommandReadsBackUnderShAsTheSameWords) {
  ScratchDir dir;
  const std::string marker = dir.path() + "/injected";
  const std::vector<std::string> command = {"sh",
                                            "-c",
                                            "echo \"x;y\" $(touch " + marker + ")",
                                            "a b",
                                            "it's",
                                            "line\nbreak",
                                            "$HOME",
                                            "`touch " + marker + "`",
                                            "*",
                                            "; touch " + marker};
  ProcessResult result =
      RunMpiJob(Concat({{"-np", "1", "--dry-run", "--mpi-args", "-mca x 'a;b'"}, command}));
  ASSERT_EQ(result.exit_code, 0) << result;
  ProcessResult read_back = RunProcess(
      {"/bin/sh", "-c", "mpirun() { printf '%s\\0' \"$@\"; }\n" + result.stdout_text}, milliseconds(10'000));
  ASSERT_EQ(read_back.exit_code, 0) << read_back;
  std::vector<std::string> words;
  for (size_t start = 0, end; (end = read_back.stdout_text.find('\0', start)) != std::string::npos;
       start = end + 1) {
    words.push_back(read_back.stdout_text.substr(start, end - start));
  }
  ASSERT_GE(words.size(), command.size()) << result.stdout_text;
  EXPECT_EQ(std::vector<std::string>(words.end() - static_cast<std::ptrdiff_t>(command.size()), words.end()),
            command)
      << result.stdout_text;
  const std::vector<std::string> mca = {"-mca", "x", "a;b"};
  EXPECT_NE(std::search(words.begin(), words.end(), mca.begin(), mca.end()), words.end())
      << result.stdout_text;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "a word of the printed command ran";
}

TEST(MpiDryRunTest, OnlyWithMpi) {
  ProcessResult result = RunHvdrun({"-np", "2", "--dry-run", "true"});
  EXPECT_EQ(result.exit_code, 2) << result;
  EXPECT_EQ(result.stderr_text,
            "hvdrun: --dry-run: only with --mpi (it prints the mpirun command hvdrun would run)\n");
}

TEST(MpiLaunchTest, MpirunRefusingItsArgumentsIsALaunchFailure) {
  ScratchDir dir;
  ProcessResult result = RunMpiJob(
      Concat({{"-np", "2", "--mpi-args=--no-such-mpirun-option"}, RankCommand({"job", dir.path()})}));
  EXPECT_EQ(result.exit_code, 3) << result;
  EXPECT_TRUE(Contains(result.stderr_text, "--no-such-mpirun-option")) << "mpirun's own message" << result;
  std::vector<std::string> lines = SplitLines(result.stderr_text);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(),
            "hvdrun: mpirun exited with code 1 before starting any rank (its messages are above)")
      << result;
  EXPECT_FALSE(ReadRankRecord(dir.path(), 0).has_value());
}

TEST(MpiLaunchTest, AnUnterminatedQuoteInMpiArgsIsAUsageError) {
  ProcessResult result = RunMpiJob({"-np", "1", "--mpi-args", "-mca btl 'self", "true"});
  EXPECT_EQ(result.exit_code, 2) << result;
  EXPECT_EQ(result.stderr_text, "hvdrun: --mpi-args: unterminated ' quote\n");
}

TEST(MpiLaunchTest, AMissingMpirunNamesThePackage) {
  JobMarker marker;
  ProcessOptions options = marker.Options();
  options.extra_env.push_back("PATH=/nonexistent-for-hvdrun-e2e");
  ProcessResult result = RunHvdrun({"--mpi", "-np", "1", "true"}, options);
  EXPECT_EQ(result.exit_code, 3) << result;
  EXPECT_EQ(
      result.stderr_text,
      "hvdrun: --mpi: cannot run 'mpirun': No such file or directory (install Open MPI's mpirun: apt-get "
      "install openmpi-bin)\n");
}

// --- Collectives through libhvdrun's MPI backend ------------------------------------------------

class MpiCollectivesTest : public testing::TestWithParam<int> {};

TEST_P(MpiCollectivesTest, EveryDtypeOpAndSizeMatchesTheReferenceAndReportsReachHvdrun) {
  const int ranks = GetParam();
  ScratchDir dir;
  const std::string results = dir.path() + "/results";
  ProcessResult result =
      RunMpiJob({"-np", std::to_string(ranks), "--results", results, HVDRUN_TEST_COLLECTIVES_PATH});
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_TRUE(EveryRankCheckedItsResults(result.stdout_text, ranks)) << "\n" << result;
  EXPECT_TRUE(Contains(result.stdout_text, "hvdrun: " + std::to_string(ranks) + " ranks reported")) << result;
  EXPECT_FALSE(HoldsASecret(result.stdout_text + result.stderr_text)) << result;
  EXPECT_TRUE(Contains(ReadFileBytes(results + "/plan.json"), "\"backend\": \"mpi\"")) << result;
  EXPECT_TRUE(
      Contains(ReadFileBytes(results + "/summary.json"), "\"ranks_reporting\": " + std::to_string(ranks)))
      << result;
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, MpiCollectivesTest, testing::Values(1, 2, 3, 4),
                         [](const testing::TestParamInfo<int>& test_info) {
                           return std::to_string(test_info.param) + "Ranks";
                         });

}  // namespace
}  // namespace hvdrun::e2e
