// Elastic jobs over SSH on the test cluster (docs/elastic.md): the installed hvdrun runs three
// one-slot hosts, server1..server3, with --min-np 2 and an hvd.elastic program as the ranks
// (elastic_training.h). Mid-training, server3 fails: its hvdrun-agent is SIGKILLed, or its link is
// cut. The job re-forms round 1 on server1 and server2 and finishes there, each rank with every step
// run and rank 0's parameters, and nothing is left on any host. Each test prints the seconds from
// the failure to the first step of round 1 (scripts/bench/elastic_cluster_bench.sh collects them).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "tests/cluster/cluster_test.h"
#include "tests/cluster/elastic_training.h"
#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/process_runner.h"

namespace hvdrun::cluster {
namespace {

using e2e::ProcessResult;
using std::chrono::milliseconds;

constexpr int kHeartbeatSeconds = 3;

class ElasticClusterTest : public ClusterTest {
 protected:
  static void SetUpTestSuite() { CreateCluster(3); }
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (std::string reason = ElasticTraining::UnusableReason(); !reason.empty()) GTEST_SKIP() << reason;
  }

  // Starts the job on server1..server3 and waits until it is well into its training.
  e2e::RunningProcess StartTraining(const ElasticTraining& training) const {
    e2e::RunningProcess hvdrun = StartInLauncher(
        e2e::Concat({{e2e::HvdrunPath(), "-np", "3", "--min-np", "2", "-H", "server1:1,server2:1,server3:1",
                      "--heartbeat-timeout", std::to_string(kHeartbeatSeconds)},
                     SshFlags(),
                     training.Program()}));
    EXPECT_TRUE(training.WaitUntilMidTraining(milliseconds(60'000))) << "rank 2 never reached step 50";
    return hvdrun;
  }

  // The seconds from `failure` to round 1's first step, printed for the benchmark script.
  static void Report(const char* failure, const ElasticTraining& training,
                     std::chrono::system_clock::time_point failed_at) {
    std::optional<double> seconds = training.SecondsToFirstStep(failed_at);
    ASSERT_TRUE(seconds.has_value()) << "rank 0 wrote no time for its first step of round 1";
    std::printf("elastic: %s to the first step of round 1: %.2f s (--heartbeat-timeout %d)\n", failure,
                *seconds, kHeartbeatSeconds);
  }
};

TEST_F(ElasticClusterTest, AHostWhoseAgentIsKilledLeavesTheJobToTheOthers) {
  ElasticTraining training;
  e2e::RunningProcess hvdrun = StartTraining(training);
  e2e::KillOnScopeExit guard;
  guard.Add(hvdrun.pid());
  ASSERT_FALSE(HasFailure());
  std::vector<pid_t> agents = ProgramsIn(c().PidsIn(c().server(3)), "hvdrun-agent");
  ASSERT_EQ(agents.size(), 1u);
  ASSERT_EQ(::kill(agents[0], SIGKILL), 0);
  const auto killed_at = std::chrono::system_clock::now();
  ProcessResult result = hvdrun.Wait(milliseconds(60'000));
  EXPECT_TRUE(training.EndedOnTheSurvivors(result, "server3")) << result;
  Report("an agent killed", training, killed_at);
  std::vector<pid_t> left = WaitForNoLeftovers({"python3"}, milliseconds(10'000));
  EXPECT_TRUE(left.empty()) << e2e::DescribeProcesses(left);
}

TEST_F(ElasticClusterTest, AHostWhoseLinkIsCutLeavesTheJobToTheOthers) {
  ElasticTraining training;
  e2e::RunningProcess hvdrun = StartTraining(training);
  e2e::KillOnScopeExit guard;
  guard.Add(hvdrun.pid());
  ASSERT_FALSE(HasFailure());
  const ClusterHost& cut = c().server(3);
  ASSERT_TRUE(c().CutLink(cut).ok());
  const auto cut_at = std::chrono::system_clock::now();
  ProcessResult result = hvdrun.Wait(milliseconds(60'000));
  ASSERT_TRUE(c().RestoreLink(cut).ok());
  EXPECT_TRUE(training.EndedOnTheSurvivors(result, "server3")) << result;
  EXPECT_NE(result.stderr_text.find("why: server3/0/2 lost: agent failed: no heartbeat for 3 s"),
            std::string::npos)
      << result;
  // hvdrun sees the host lost within the heartbeat timeout (3 to 4 s after the cut) and writes round 1;
  // the survivors' round watch ends their collectives at most 0.5 s later (round_watch.h). The goal is
  // the first step within the heartbeat timeout + 5 s; 4 s more, as CI runs this beside a compiler.
  std::optional<double> seconds = training.SecondsToFirstStep(cut_at);
  EXPECT_LT(seconds.value_or(1e9), kHeartbeatSeconds + 5 + 4) << result;
  Report("a link cut", training, cut_at);
  // The cut-off agent ends its rank when hvdrun's heartbeats stop.
  std::vector<pid_t> left = WaitForNoLeftovers({"python3"}, milliseconds(10'000));
  EXPECT_TRUE(left.empty()) << e2e::DescribeProcesses(left);
}

}  // namespace
}  // namespace hvdrun::cluster
