// A stuck job under hvdrun (docs/stall.md) with real processes: two local ranks of
// hvdrun-test-horovod-rank's `stop` mode, where rank 1 stops itself (SIGSTOP) after one allreduce and
// rank 0 waits for it in the next. hvdrun's stall inspector must name rank 1 as stopped, its shutdown
// time end the job with its own exit code and the right rank blamed, SIGUSR1 print the ranks' states,
// and --results hold the problem and the flight recorders. Nothing may outlive hvdrun.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
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

std::vector<std::string> StuckJob(const std::vector<std::string>& flags) {
  return Concat(
      {{"-np", "2", "--gloo", "--stall-check-time", "1"}, flags, {HVDRUN_TEST_HOROVOD_RANK_PATH, "stop"}});
}

TEST(StuckJob, TheStallShutdownEndsTheJobBlamingTheStoppedRank) {
  ScratchDir dir;
  const std::string results = dir.path() + "/results";
  JobMarker marker;
  ProcessResult result =
      RunHvdrun(StuckJob({"--stall-shutdown-time", "3", "--results", results}), marker.Options());
  marker.ExpectNoneRunsWithin(milliseconds(3'000));
  EXPECT_EQ(result.exit_code, kExitStall) << result;
  // The warning came at the check time (1 s), naming the stopped rank and what the other waits for.
  EXPECT_NE(result.stderr_text.find("rank 1 (host "), std::string::npos) << result;
  EXPECT_NE(result.stderr_text.find("stopped by SIGSTOP"), std::string::npos) << result;
  EXPECT_NE(result.stderr_text.find("'x'"), std::string::npos) << result;
  EXPECT_NE(result.stderr_text.find("hvdrun: stall: no collective completed for 3 s: stopping every rank"),
            std::string::npos)
      << result;
  EXPECT_LT(result.elapsed, milliseconds(20'000)) << result;
  const std::string summary = ReadFileBytes(results + "/summary.json");
  EXPECT_NE(summary.find("\"kind\": \"stall\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"rank\": 1"), std::string::npos) << summary;
  EXPECT_TRUE(std::filesystem::exists(results + "/ranks/rank-0.recorder.json")) << result;
  EXPECT_TRUE(std::filesystem::exists(results + "/ranks/rank-1.recorder.json")) << result;
  EXPECT_NE(ReadFileBytes(results + "/ranks/rank-0.recorder.json").find("\"warmup\""), std::string::npos);
}

TEST(StuckJob, SigusrOnePrintsEachRanksStateWithoutDisturbingTheJob) {
  JobMarker marker;
  RunningProcess hvdrun = StartHvdrun(StuckJob({"--stall-shutdown-time", "6"}), marker.Options());
  std::this_thread::sleep_for(milliseconds(3'000));
  hvdrun.Signal(SIGUSR1);
  ProcessResult result = hvdrun.Wait(kRunTimeout);
  marker.ExpectNoneRunsWithin(milliseconds(3'000));
  // SIGUSR1 did not end the job; the stall shutdown did, later.
  EXPECT_EQ(result.exit_code, kExitStall) << result;
  EXPECT_NE(result.stderr_text.find("hvdrun: SIGUSR1: the ranks' states"), std::string::npos) << result;
  EXPECT_NE(result.stderr_text.find("stopped by SIGSTOP"), std::string::npos) << result;
}

TEST(StuckJob, WithoutTheStallCheckNothingIsSaidOrEnded) {
  // --no-stall-check: the stopped rank is waited for; the run is ended here, from outside.
  JobMarker marker;
  RunningProcess hvdrun = StartHvdrun(
      Concat({{"-np", "2", "--gloo", "--no-stall-check"}, {HVDRUN_TEST_HOROVOD_RANK_PATH, "stop"}}),
      marker.Options());
  std::this_thread::sleep_for(milliseconds(3'000));
  hvdrun.Signal(SIGTERM);
  ProcessResult result = hvdrun.Wait(kRunTimeout);
  marker.ExpectNoneRunsWithin(milliseconds(3'000));
  EXPECT_EQ(result.exit_code, 128 + SIGTERM) << result;
  EXPECT_EQ(result.stderr_text.find("stall"), std::string::npos) << result;
}

}  // namespace
}  // namespace hvdrun::e2e
