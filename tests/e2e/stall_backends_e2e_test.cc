// Stuck jobs under hvdrun (docs/stall.md) over each backend the agents run, at 3 and 4 ranks: Gloo
// (--shared-memory off) and the shared-memory path, with hvdrun-test-horovod-rank's modes (a rank
// stopped by SIGSTOP, one busy in user code, one that skips a tensor name, one stopped inside the
// backend, a healthy loop). The stall check time is 1 s, so that each case costs a few seconds. Under
// --mpi hvdrun sees no progress (docs/stall.md): there the ranks' own libhvdrun speaks, which the last
// case checks. Nothing may outlive hvdrun.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <ostream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "common/exit_codes.h"
#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/job_marker.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

using std::chrono::milliseconds;

struct StallCase {
  std::string name;
  std::vector<std::string> backend_flags;
  int ranks;
};

void PrintTo(const StallCase& stall_case, std::ostream* out) { *out << stall_case.name; }

// True when process `pid` is stopped by a signal (state T in /proc/PID/stat).
bool IsStopped(pid_t pid) {
  std::string stat = ReadFileBytes("/proc/" + std::to_string(pid) + "/stat");
  const size_t name_end = stat.rfind(')');
  return name_end != std::string::npos && name_end + 2 < stat.size() && stat[name_end + 2] == 'T';
}

// Waits up to `timeout` for one of the marked processes to be stopped by a signal.
bool WaitForAStoppedRank(const JobMarker& marker, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    for (pid_t pid : marker.Running()) {
      if (IsStopped(pid)) return true;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return false;
}

// Seconds in the first "stopped by SIGSTOP N s ago" of `text`; -1 without one.
double FirstStoppedAge(const std::string& text) {
  static const std::regex kAge("stopped by SIGSTOP ([0-9.]+) s ago");
  std::smatch match;
  return std::regex_search(text, match, kAge) ? std::stod(match[1].str()) : -1;
}

// The text from the first line that starts with `start`, "" without one.
std::string From(const std::string& text, const std::string& start) {
  const size_t at = text.find(start);
  return at == std::string::npos ? "" : text.substr(at);
}

class StallAcrossBackends : public testing::TestWithParam<StallCase> {
 protected:
  // hvdrun's arguments: the backend, the ranks, the check time (`check_s` seconds), `flags`, then the
  // rank program in `mode`.
  std::vector<std::string> Job(const std::vector<std::string>& flags, const std::vector<std::string>& mode,
                               const std::string& check_s = "1") const {
    return Concat({{"-np", std::to_string(GetParam().ranks)},
                   GetParam().backend_flags,
                   {"--stall-check-time", check_s},
                   flags,
                   {HVDRUN_TEST_HOROVOD_RANK_PATH},
                   mode});
  }
  int ranks() const { return GetParam().ranks; }
};

TEST_P(StallAcrossBackends, AStoppedRankIsNamedWithinTheCheckTimeAndTheShutdownEndsTheJob) {
  ScratchDir dir;
  const std::string results = dir.path() + "/results";
  JobMarker marker;
  RunningProcess hvdrun =
      StartHvdrun(Job({"--stall-shutdown-time", "5", "--results", results}, {"stop"}), marker.Options());
  // SIGUSR1 while rank 1 is stopped and the others wait for it.
  ASSERT_TRUE(WaitForAStoppedRank(marker, milliseconds(15'000)));
  std::this_thread::sleep_for(milliseconds(2'000));
  hvdrun.Signal(SIGUSR1);
  ProcessResult result = hvdrun.Wait(kRunTimeout);
  marker.ExpectNoneRunsWithin(milliseconds(3'000));
  EXPECT_EQ(result.exit_code, kExitStall) << result;
  const std::string warning = From(result.stderr_text, "hvdrun: stall: no collective completed");
  EXPECT_NE(warning.find("'x'"), std::string::npos) << result;
  EXPECT_NE(warning.find("    rank 1 (host localhost, pid "), std::string::npos) << result;
  // Named as stopped within the check time (1 s) + 2 s of its stop.
  const double age = FirstStoppedAge(warning);
  EXPECT_GE(age, 0) << result;
  EXPECT_LE(age, 3) << result;
  const std::string states = From(result.stderr_text, "hvdrun: SIGUSR1: the ranks' states");
  EXPECT_NE(states.find("stopped by SIGSTOP"), std::string::npos) << result;
  EXPECT_NE(states.find("rank " + std::to_string(ranks() - 1) + "'s last collectives:"), std::string::npos)
      << result;
  EXPECT_NE(result.stderr_text.find("stalled (cause)"), std::string::npos) << result;
  // The flight recorders: every rank's, each with the collective all of them completed.
  for (int rank = 0; rank < ranks(); ++rank) {
    const std::string file = results + "/ranks/rank-" + std::to_string(rank) + ".recorder.json";
    EXPECT_NE(ReadFileBytes(file).find("\"warmup\""), std::string::npos) << file << "\n" << result;
  }
  const std::string summary = ReadFileBytes(results + "/summary.json");
  EXPECT_NE(summary.find("\"kind\": \"stall\""), std::string::npos) << summary;
}

TEST_P(StallAcrossBackends, ARankBusyInUserCodeIsNamedAndTheJobThenFinishes) {
  JobMarker marker;
  // Rank 1 works for 3 check times before it submits 'x'; the others wait, and then all finish.
  ProcessResult result = RunHvdrun(Job({}, {"late", "3"}), marker.Options());
  marker.ExpectNoneRunsWithin(milliseconds(3'000));
  EXPECT_EQ(result.exit_code, 0) << result;
  const std::string warning = From(result.stderr_text, "hvdrun: stall: no collective completed");
  EXPECT_NE(warning.find("    rank 1 (host localhost, pid "), std::string::npos) << result;
  EXPECT_NE(warning.find("busy in user code for"), std::string::npos) << result;
  EXPECT_NE(warning.find("has not submitted 'x'"), std::string::npos) << result;
  const int sum = ranks() * (ranks() + 1) / 2;
  for (int rank = 0; rank < ranks(); ++rank) {
    EXPECT_NE(result.stdout_text.find("rank " + std::to_string(rank) + ": backend gloo: sum " +
                                      std::to_string(sum)),
              std::string::npos)
        << result;
  }
}

TEST_P(StallAcrossBackends, ARankThatSkipsATensorNameIsNamedWithTheTensor) {
  JobMarker marker;
  ProcessResult result = RunHvdrun(Job({"--stall-shutdown-time", "3"}, {"skip"}), marker.Options());
  marker.ExpectNoneRunsWithin(milliseconds(3'000));
  EXPECT_EQ(result.exit_code, kExitStall) << result;
  const std::string warning = From(result.stderr_text, "hvdrun: stall: no collective completed");
  EXPECT_NE(warning.find("submitted by some ranks and not others: 'a'"), std::string::npos) << result;
  EXPECT_NE(warning.find("  missing rank 1:"), std::string::npos) << result;
  EXPECT_NE(warning.find("waiting in 'b'"), std::string::npos) << result;
  EXPECT_NE(warning.find("has not submitted 'a'"), std::string::npos) << result;
  EXPECT_NE(result.stderr_text.find("the ranks diverge at collective #2"), std::string::npos) << result;
}

TEST_P(StallAcrossBackends, ARankStoppedInsideTheBackendIsSeenByTheWatchdog) {
  JobMarker marker;
  ProcessResult result =
      RunHvdrun(Job({"--stall-shutdown-time", "3"}, {"stuck-in-backend"}), marker.Options());
  marker.ExpectNoneRunsWithin(milliseconds(3'000));
  EXPECT_EQ(result.exit_code, kExitStall) << result;
  // The waiting ranks' watchdog names the collective that every rank submitted.
  static const std::regex kWatchdog(
      "libhvdrun: watchdog: rank [0-9]+: 'big\\.[0-9]+' \\(allreduce, 16777216 bytes\\) has been in the "
      "(gloo|shm) backend for [0-9.]+ s, after every rank submitted it");
  EXPECT_TRUE(std::regex_search(result.stderr_text, kWatchdog)) << result;
  const std::string warning = From(result.stderr_text, "hvdrun: stall: no collective completed");
  EXPECT_NE(warning.find("which has not finished inside the backend"), std::string::npos) << result;
  EXPECT_NE(warning.find("rank 1 (host localhost, pid "), std::string::npos) << result;
  EXPECT_NE(warning.find("stopped by SIGSTOP"), std::string::npos) << result;
}

TEST_P(StallAcrossBackends, SigusrOneWhileHealthyPrintsTheStatesAndChangesNothing) {
  JobMarker marker;
  // A check time of 3 report periods: hvdrun hears each rank once a second, and a report that comes
  // late on a loaded machine must not look like a stall.
  RunningProcess hvdrun = StartHvdrun(Job({}, {"loop", "4"}, "3"), marker.Options());
  std::this_thread::sleep_for(milliseconds(2'000));
  hvdrun.Signal(SIGUSR1);
  ProcessResult result = hvdrun.Wait(kRunTimeout);
  marker.ExpectNoneRunsWithin(milliseconds(3'000));
  EXPECT_EQ(result.exit_code, 0) << result;
  const std::string states = From(result.stderr_text, "hvdrun: SIGUSR1: the ranks' states");
  EXPECT_NE(states.find("  rank 0 (host localhost, pid "), std::string::npos) << result;
  EXPECT_NE(states.find("rank 0's last collectives:"), std::string::npos) << result;
  EXPECT_NE(states.find("'step'"), std::string::npos) << result;
  EXPECT_EQ(result.stderr_text.find("hvdrun: stall:"), std::string::npos) << result;
}

INSTANTIATE_TEST_SUITE_P(Backends, StallAcrossBackends,
                         testing::Values(StallCase{"gloo_4_ranks", {"--gloo", "--shared-memory", "off"}, 4},
                                         StallCase{"shm_3_ranks", {"--gloo"}, 3}),
                         [](const testing::TestParamInfo<StallCase>& param) { return param.param.name; });

// Three ranks under --mpi (with `options` before the program), one of which stops itself, with a
// stall check time of 1 s and a stall shutdown time of 3 s given to the ranks; the job must end by
// itself within kRunTimeout, leaving nothing running.
ProcessResult RunMpiJobWithAStoppedRank(const std::vector<std::string>& options) {
  JobMarker marker;
  RunningProcess hvdrun = StartHvdrun(
      Concat({{"--mpi", "-np", "3", "--stall-check-time", "1", "-x", "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS=3"},
              options,
              {HVDRUN_TEST_HOROVOD_RANK_PATH, "stop"}}),
      marker.Options());
  EXPECT_TRUE(WaitForAStoppedRank(marker, milliseconds(15'000)));
  ProcessResult result = hvdrun.Wait(kRunTimeout);
  marker.ExpectNoneRunsWithin(milliseconds(3'000));
  EXPECT_FALSE(result.timed_out) << result;
  return result;
}

// --mpi: mpirun starts the ranks and hvdrun sees no progress. The ranks' own libhvdrun names the
// rank that the others wait for (their watchdog, over the shared memory of this one host), and
// its stall shutdown time (given to the ranks) fails their collective. They then exit without
// MPI_Finalize, which would wait for the stopped rank (Backend::Abandon), and mpirun ends the job.
TEST(StallUnderMpi, TheRanksOwnWatchdogNamesTheStoppedRankAndTheirShutdownTimeEndsTheJob) {
  const ProcessResult result = RunMpiJobWithAStoppedRank({});
  EXPECT_EQ(result.exit_code, 1) << result;
  EXPECT_TRUE(std::regex_search(
      result.stderr_text, std::regex("hvdrun: rank [02] on host localhost failed first \\(exit code 1\\)")))
      << result;
  static const std::regex kWatchdog(
      "\\[0\\]<stderr>:libhvdrun: watchdog: rank 0: the negotiation's cycle \\(allreduce, [0-9]+ bytes\\) "
      "has "
      "been in the shm backend for 1 s .*; waiting for rank 1 \\(local rank 1, pid [0-9]+\\)");
  EXPECT_TRUE(std::regex_search(result.stderr_text, kWatchdog)) << result;
  EXPECT_NE(
      result.stderr_text.find("rank 0: shared memory: allreduce: rank(s) 1 did not arrive within the stall "
                              "shutdown time (3000 ms, HOROVOD_STALL_SHUTDOWN_TIME_SECONDS)"),
      std::string::npos)
      << result;
  EXPECT_EQ(result.stderr_text.find("hvdrun: stall:"), std::string::npos) << result;
}

// --mpi without shared memory: the ranks wait inside MPI's own collectives, which cannot be ended
// one at a time; past the stall shutdown time the watchdog of a waiting rank ends the job
// (MpiBackend::RequestAbort: MPI_Abort with the stall's exit code).
TEST(StallUnderMpi, PastTheShutdownTimeTheWatchdogEndsAJobWaitingInsideMpi) {
  const ProcessResult result = RunMpiJobWithAStoppedRank({"--shared-memory", "off"});
  EXPECT_EQ(result.exit_code, kExitStall) << result;
  EXPECT_TRUE(
      std::regex_search(result.stderr_text,
                        std::regex("libhvdrun: watchdog: rank [02]: .* has been in the mpi backend for 1 s")))
      << result;
  EXPECT_TRUE(std::regex_search(
      result.stderr_text,
      std::regex("libhvdrun: rank [02]: an MPI collective waited past the stall shutdown time "
                 "\\(HOROVOD_STALL_SHUTDOWN_TIME_SECONDS\\) and cannot be ended alone: ending the job "
                 "\\(MPI_Abort\\)")))
      << result;
}

}  // namespace
}  // namespace hvdrun::e2e
