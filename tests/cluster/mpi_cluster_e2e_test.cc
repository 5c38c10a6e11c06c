// hvdrun --mpi on the test cluster (docs/testing-cluster.md): the installed hvdrun runs in the
// launcher's namespace, and its mpirun starts Open MPI's daemons on server1 and server2 over ssh
// with the cluster's user key and known_hosts; each daemon runs the staged hvdrun-agent --mpi-rank
// for its ranks. Covered: placement, environment and tagged output of 4 ranks on 2 hosts, MPI
// collectives across hosts (hvdrun-test-collectives, hvdrun-bench), a failing rank's report, a
// SIGKILLed launcher, a second interrupt, a host name that does not resolve, the agent found at
// this machine's agent path without --agent-path, and that nothing is left running in any
// namespace after each.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cluster/cluster_test.h"
#include "tests/cluster/test_cluster.h"
#include "tests/e2e/collective_rank_output.h"
#include "tests/e2e/console_output.h"
#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::cluster {
namespace {

using e2e::Contains;
using e2e::ProcessResult;
using std::chrono::milliseconds;

constexpr milliseconds kRunTimeout{60'000};
constexpr char kHosts[] = "server1:2,server2:2";

class MpiClusterTest : public ClusterTest {
 protected:
  static void SetUpTestSuite() { CreateCluster(2); }

  // Every test leaves the cluster as it found it: its sshds only.
  void TearDown() override {
    if (!has_cluster()) return;
    std::vector<pid_t> left = WaitUntilOnlySshds(milliseconds(10'000));
    EXPECT_TRUE(left.empty()) << "left running in the cluster:\n" << e2e::DescribeProcesses(left);
  }

  // hvdrun --mpi with the options that reach the cluster's servers: its user key, its known_hosts,
  // and the staged agent (`hvdrun` at `hvdrun_path`, without --agent-path, finds the one beside it).
  std::vector<std::string> MpiArgv(const std::vector<std::string>& args,
                                   const std::string& hvdrun_path = "") const {
    std::vector<std::string> argv = {hvdrun_path.empty() ? e2e::HvdrunPath() : hvdrun_path,
                                     "--mpi",
                                     "--ssh-known-hosts",
                                     c().known_hosts(),
                                     "-i",
                                     c().user_key()};
    if (hvdrun_path.empty()) argv.insert(argv.end(), {"--agent-path", StagedProgram("hvdrun-agent")});
    return e2e::Concat({argv, args});
  }

  // Runs hvdrun --mpi in the launcher's namespace.
  ProcessResult HvdrunMpi(const std::vector<std::string>& args) const {
    return RunInLauncher(MpiArgv(args), kRunTimeout);
  }

  // hvdrun --mpi running `sleep 60` as 4 ranks on 2 hosts, in the launcher's namespace.
  e2e::RunningProcess StartSleepingRanks() const {
    return StartInLauncher(MpiArgv({"-np", "4", "-H", kHosts, "sleep", "60"}));
  }

  // Waits until `count` ranks sleep on the servers; false after 20 s.
  bool WaitForSleepingRanks(size_t count) const {
    return WaitForPrograms("sleep", count, milliseconds(20'000));
  }
};

TEST_F(MpiClusterTest, FourRanksOnTwoHostsGetTheirPlaceAndTheirTaggedOutput) {
  const std::string script =
      "echo \"host=$(hostname) rank=$HVDRUN_RANK local=$HVDRUN_LOCAL_RANK/$HVDRUN_LOCAL_SIZE "
      "cross=$HVDRUN_CROSS_RANK name=$HVDRUN_HOSTNAME size=$WORLD_SIZE master=$MASTER_ADDR "
      "rendezvous=$HVDRUN_RENDEZVOUS_ADDR backend=$HVDRUN_BACKEND\"; echo \"err $HVDRUN_RANK\" >&2";
  ProcessResult result = HvdrunMpi({"-np", "4", "-H", kHosts, "--verbose", "sh", "-c", script});
  ASSERT_EQ(result.exit_code, 0) << result;
  for (int rank = 0; rank < 4; ++rank) {
    int host = rank / 2 + 1;
    std::string name = "server" + std::to_string(host);
    std::string line =
        "[" + std::to_string(rank) + "]<stdout>:host=" + name + " rank=" + std::to_string(rank) +
        " local=" + std::to_string(rank % 2) + "/2 cross=" + std::to_string(host - 1) + " name=" + name +
        " size=4 master=" + c().server(1).address + " rendezvous=" + c().launcher().address + " backend=mpi";
    EXPECT_TRUE(Contains(result.stdout_text, line + "\n")) << line << "\n" << result;
    EXPECT_TRUE(
        Contains(result.stderr_text, "[" + std::to_string(rank) + "]<stderr>:err " + std::to_string(rank)))
        << result;
  }
  // The rendezvous service listens on the launcher's address on the hosts' network, mpirun's ssh
  // gets hvdrun's SSH settings, and TCP is not held to loopback.
  EXPECT_TRUE(Contains(result.stderr_text, "rendezvous service on " + c().launcher().address + ":"))
      << result;
  EXPECT_TRUE(Contains(result.stderr_text, "-i " + c().user_key())) << result;
  EXPECT_TRUE(Contains(result.stderr_text, "UserKnownHostsFile=" + c().known_hosts())) << result;
  EXPECT_FALSE(Contains(result.stderr_text, "btl_tcp_if_include")) << result;
}

TEST_F(MpiClusterTest, CollectivesOverMpiGiveTheRightResultsAcrossHosts) {
  ProcessResult result = HvdrunMpi({"-np", "4", "-H", kHosts, HVDRUN_TEST_COLLECTIVES_PATH});
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_TRUE(e2e::EveryRankCheckedItsResults(result.stdout_text, 4)) << "\n" << result;
  EXPECT_FALSE(Contains(result.stdout_text, "MISMATCH")) << result;
  EXPECT_TRUE(Contains(result.stdout_text, "hvdrun: 4 ranks reported")) << result;
}

TEST_F(MpiClusterTest, NetworkInterfaceMovesRendezvousRanksAndOpenMpiOntoThatNetwork) {
  const std::string script =
      "echo \"rank=$HVDRUN_RANK addr=$HVDRUN_HOST_ADDR master=$MASTER_ADDR "
      "rendezvous=$HVDRUN_RENDEZVOUS_ADDR "
      "nccl=$NCCL_SOCKET_IFNAME\"";
  ProcessResult result =
      HvdrunMpi({"-np", "4", "-H", kHosts, "--network-interface", "data0", "--verbose", "sh", "-c", script});
  ASSERT_EQ(result.exit_code, 0) << result;
  for (int rank = 0; rank < 4; ++rank) {
    std::string line = "[" + std::to_string(rank) + "]<stdout>:rank=" + std::to_string(rank) +
                       " addr=" + c().server(rank / 2 + 1).data_address +
                       " master=" + c().server(1).data_address +
                       " rendezvous=" + c().launcher().data_address + " nccl=data0";
    EXPECT_TRUE(Contains(result.stdout_text, line + "\n")) << line << "\n" << result;
  }
  EXPECT_TRUE(Contains(result.stderr_text, "-mca btl_tcp_if_include data0 -mca oob_tcp_if_include data0"))
      << result;

  // Open MPI's own traffic, held to data0, carries the collectives.
  result =
      HvdrunMpi({"-np", "4", "-H", kHosts, "--network-interface", "data0", HVDRUN_TEST_COLLECTIVES_PATH});
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_TRUE(Contains(result.stdout_text, "results, 0 failed")) << result;
  EXPECT_FALSE(Contains(result.stdout_text, "MISMATCH")) << result;
}

TEST_F(MpiClusterTest, AnInterfaceThisMachineLacksIsAUsageError) {
  ProcessResult result = HvdrunMpi({"-np", "4", "-H", kHosts, "--network-interface", "ib0", "true"});
  EXPECT_EQ(result.exit_code, 2) << result;
  EXPECT_EQ(result.stderr_text,
            "hvdrun: --network-interface: host launcher: no network interface named ib0 with an "
            "IPv4 address (it has lo 127.0.0.1, eth0 " +
                c().launcher().address + ", data0 " + c().launcher().data_address + ")\n")
      << result;
}

TEST_F(MpiClusterTest, BenchAllreduceAcrossHostsHasNoError) {
  ProcessResult result = HvdrunMpi({"-np", "4", "-H", kHosts, StagedProgram("hvdrun-bench"), "-b", "1K", "-e",
                                    "1M", "-f", "32", "--iters", "3", "--warmup", "1"});
  ASSERT_EQ(result.exit_code, 0) << result;
  // Ranks on two hosts: the allreduces go by MPI, not through one host's shared memory.
  EXPECT_TRUE(Contains(result.stdout_text, "backend mpi, allreduce path mpi, 4 ranks")) << result;
  // Rank 0's table: bytes, time, algbw, busbw, max_error, for 1K, 32K and 1M.
  int rows = 0;
  for (const std::string& line : Lines(result.stdout_text)) {
    if (line.rfind("[0]<stdout>:", 0) != 0 || Contains(line, "#") || Contains(line, "bytes")) continue;
    std::istringstream fields(line.substr(line.find(':') + 1));
    std::string bytes, time, algbw, busbw, max_error;
    if (!(fields >> bytes >> time >> algbw >> busbw >> max_error)) continue;
    ++rows;
    EXPECT_EQ(max_error, "0") << line << "\n" << result;
  }
  EXPECT_EQ(rows, 3) << result;
}

// The ranks on the two servers send their timelines to hvdrun over the job's network when their
// runtimes end; hvdrun merges them, one process per rank.
TEST_F(MpiClusterTest, EveryRanksTimelineComesBackFromItsHostAndIsMerged) {
  e2e::ScratchDir dir;
  const std::string timeline = dir.path() + "/timeline.json";
  ProcessResult result =
      HvdrunMpi({"-np", "4", "-H", kHosts, "--timeline-filename", timeline, StagedProgram("hvdrun-bench"),
                 "--replay", "resnet18", "--iters", "1", "--warmup", "1", "--fusion-threshold-mb", "16"});
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_TRUE(Contains(result.stderr_text, "hvdrun: timeline: 4 ranks, ")) << result;
  EXPECT_FALSE(Contains(result.stderr_text, "hvdrun: timeline: rank "))
      << "every rank's is complete" << result;
  const std::string merged = e2e::ReadFileBytes(timeline);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_TRUE(
        Contains(merged, "\"name\":\"MPI_ALLREDUCE\",\"ph\":\"X\",\"pid\":" + std::to_string(rank) + ","))
        << "rank " << rank;
    const std::string host = rank < 2 ? "server1" : "server2";
    EXPECT_TRUE(Contains(merged, "rank " + std::to_string(rank) + " (" + host + ")")) << "rank " << rank;
  }
}

TEST_F(MpiClusterTest, AFailingRankIsReportedWithItsHostAndExitCode) {
  ProcessResult result = HvdrunMpi(
      {"-np", "4", "-H", kHosts, "sh", "-c", "if [ \"$HVDRUN_RANK\" = 3 ]; then exit 7; fi; sleep 60"});
  EXPECT_EQ(result.exit_code, 7) << result;
  EXPECT_TRUE(Contains(result.stderr_text, "hvdrun: rank 3 on host server2 failed first (exit code 7)"))
      << result;
  EXPECT_TRUE(Contains(result.stderr_text, "stopped by hvdrun")) << result;
}

TEST_F(MpiClusterTest, SigkillOfTheLauncherLeavesNothingRunning) {
  e2e::RunningProcess hvdrun = StartSleepingRanks();
  e2e::KillOnScopeExit guard;
  guard.Add(hvdrun.pid());
  ASSERT_TRUE(WaitForSleepingRanks(4)) << e2e::DescribeProcesses(c().PidsInCluster());
  hvdrun.Signal(SIGKILL);
  hvdrun.Wait(milliseconds(5'000));
  // TearDown checks that nothing is left.
}

TEST_F(MpiClusterTest, ASecondInterruptKillsEveryRankOnEveryHost) {
  e2e::RunningProcess hvdrun = StartSleepingRanks();
  e2e::KillOnScopeExit guard;
  guard.Add(hvdrun.pid());
  ASSERT_TRUE(WaitForSleepingRanks(4)) << e2e::DescribeProcesses(c().PidsInCluster());
  hvdrun.Signal(SIGINT);
  std::this_thread::sleep_for(milliseconds(200));  // well before mpirun's SIGTERM, a second later
  hvdrun.Signal(SIGINT);
  ProcessResult result = hvdrun.Wait(milliseconds(15'000));
  EXPECT_EQ(result.exit_code, 130) << result;
  EXPECT_TRUE(Contains(result.stderr_text, "hvdrun: second interrupt: killing every rank now\n")) << result;
  // TearDown checks that nothing is left.
}

TEST_F(MpiClusterTest, WithoutAgentPathTheRanksFindThisMachinesAgentElseSayWhereTheyLooked) {
  ASSERT_TRUE(NotInPath(c().server(1), "hvdrun-agent"));
  // The servers share this machine's file system: the staged agent beside hvdrun is theirs too.
  const std::string script = "echo \"rank=$HVDRUN_RANK host=$(hostname)\"";
  ProcessResult found =
      RunInLauncher(MpiArgv({"-np", "4", "-H", kHosts, "sh", "-c", script}, e2e::HvdrunPath()), kRunTimeout);
  ASSERT_EQ(found.exit_code, 0) << found;
  for (int rank = 0; rank < 4; ++rank) {
    std::string line = "[" + std::to_string(rank) + "]<stdout>:rank=" + std::to_string(rank) +
                       " host=server" + std::to_string(rank / 2 + 1) + "\n";
    EXPECT_TRUE(Contains(found.stdout_text, line)) << line << found;
  }

  // The staged install where only the launcher sees it (mounted in hvdrun's own mount namespace).
  e2e::ScratchDir dir;
  std::string prefix = dir.path() + "/hvdrun";
  ASSERT_EQ(::mkdir(prefix.c_str(), 0755), 0);
  std::filesystem::path bin_dir(HVDRUN_TEST_BIN_DIR);
  std::string bin = prefix + "/" + bin_dir.filename().string();
  ProcessResult nowhere =
      RunInLauncher(WithBindMount(bin_dir.parent_path().string(), prefix,
                                  MpiArgv({"-np", "4", "-H", kHosts, "true"}, bin + "/hvdrun")),
                    kRunTimeout);
  // The first host whose ranks find no agent ends the job; each of those ranks says where it looked.
  EXPECT_EQ(nowhere.exit_code, 3) << nowhere;
  EXPECT_TRUE(Contains(nowhere.stderr_text, "]<stderr>:hvdrun: host server")) << nowhere;
  EXPECT_TRUE(
      Contains(nowhere.stderr_text,
               ": agent start: 'hvdrun-agent' was found neither in the host's PATH nor at this machine's "
               "agent path '" +
                   bin +
                   "/hvdrun-agent' (exit status 127); install hvdrun-agent in one of those places or give "
                   "--agent-path\n"))
      << nowhere;
  EXPECT_TRUE(
      Contains(nowhere.stderr_text,
               "hvdrun: mpirun exited with code 127 before starting any rank (its messages are above)\n"))
      << nowhere;
}

TEST_F(MpiClusterTest, AHostNameThatDoesNotResolveFailsBeforeMpirunStarts) {
  ProcessResult result = HvdrunMpi({"-np", "4", "-H", "server1:2,server9:2", "true"});
  EXPECT_EQ(result.exit_code, 3) << result;
  std::vector<std::string> lines = Lines(result.stderr_text);
  ASSERT_EQ(lines.size(), 1u) << result;
  EXPECT_EQ(lines[0].rfind("hvdrun: host server9: resolve: cannot resolve 'server9'", 0), 0u) << result;
}

}  // namespace
}  // namespace hvdrun::cluster
