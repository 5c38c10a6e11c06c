// hvdrun inside a Slurm allocation on a real Slurm cluster (slurm_cluster.h): slurmctld in the
// launcher's namespace, slurmd on servers 1..4 (nodes server1..server4, 2 CPUs each). The installed
// hvdrun runs under salloc or sbatch in the launcher's namespace and starts the staged hvdrun-agent
// on each node through srun. Covered: Slurm's host lists expanded as `scontrol show hostnames`
// does, hosts, slots and -np taken from the allocation, Gloo collectives under sbatch, MPI under
// salloc (mpirun finding the allocation itself), a rank's failure, a node that dies (in a job, and
// in an elastic job, which goes on without it: elastic_training.h), an elastic job that grows onto
// a node of its allocation that its --host-discovery-script adds (and not onto one outside), scancel in
// the middle of a job leaving nothing running on any node, Slurm's task variables as each rank sees
// them, and an hvdrun-lab matrix submitted with the sbatch script hvdrun-lab writes.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/placement/slurm_allocation.h"
#include "tests/cluster/cluster_test.h"
#include "tests/cluster/elastic_training.h"
#include "tests/cluster/slurm_cluster.h"
#include "tests/e2e/collective_rank_output.h"
#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::cluster {
namespace {

using e2e::ProcessResult;
using std::chrono::milliseconds;

constexpr milliseconds kRunTimeout{60'000};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class SlurmTest : public ClusterTest {
 protected:
  static void SetUpTestSuite() {
    if (!SlurmCluster::UnusableReason().empty()) return;  // SetUp fails each test, saying why
    CreateCluster(4);
    if (!has_cluster()) return;
    StatusOr<std::unique_ptr<SlurmCluster>> slurm = SlurmCluster::Start(*suite_cluster(), 2);
    if (slurm.ok()) {
      slurm_ = std::move(slurm).value().release();
    } else {
      slurm_error_ = new std::string(slurm.status().message());
    }
  }
  static void TearDownTestSuite() {
    delete slurm_;
    slurm_ = nullptr;
    delete slurm_error_;
    slurm_error_ = nullptr;
    ClusterTest::TearDownTestSuite();
  }
  void SetUp() override {
    if (std::string reason = TestCluster::UnusableReason(); !reason.empty()) GTEST_SKIP() << reason;
    std::string missing = SlurmCluster::UnusableReason();
    ASSERT_TRUE(missing.empty()) << missing;
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_EQ(slurm_error_, nullptr) << *slurm_error_;
    ASSERT_NE(slurm_, nullptr);
  }

  // Runs `argv` (a Slurm client, and hvdrun under it) in the launcher's namespace.
  ProcessResult InLauncher(const std::vector<std::string>& argv, milliseconds timeout = kRunTimeout) const {
    return c().Exec(c().launcher(), argv, timeout, Options());
  }
  e2e::RunningProcess StartInLauncherWithSlurm(const std::vector<std::string>& argv) const {
    return c().Start(c().launcher(), argv, Options());
  }

 private:
  static e2e::ProcessOptions Options() {
    e2e::ProcessOptions options;
    options.extra_env = {slurm_->ConfEnv()};
    options.unset_env = {"SSH_AUTH_SOCK", "SLURM_JOB_ID", "SLURM_JOBID"};
    return options;
  }

  static SlurmCluster* slurm_;
  static std::string* slurm_error_;
};

SlurmCluster* SlurmTest::slurm_ = nullptr;
std::string* SlurmTest::slurm_error_ = nullptr;

TEST_F(SlurmTest, HostListsExpandAsScontrolDoes) {
  for (const char* list : {"server[1-4]", "node[01-04,07],gpu-a[1-2],login1", "r[1-2]-n[01-02]", "x[9-11]",
                           "n[08-10]", "n[001-3]", "n[1-003]", "n[98-101]", "a,b", "a[1-2],a3"}) {
    ProcessResult result = InLauncher({"scontrol", "show", "hostnames", list}, milliseconds(10'000));
    ASSERT_EQ(result.exit_code, 0) << list << ": " << result;
    StatusOr<std::vector<std::string>> names = ExpandSlurmHostList(list);
    ASSERT_TRUE(names.ok()) << list << ": " << names.status().message();
    EXPECT_EQ(names.value(), Lines(result.stdout_text)) << list;
  }
}

TEST_F(SlurmTest, UnderSallocHostsSlotsAndNpComeFromTheAllocation) {
  e2e::ScratchDir dir;
  // In the same allocation, Slurm's own expansion of the node list, then hvdrun's placement.
  const std::string list_nodes =
      "scontrol show hostnames \"$SLURM_JOB_NODELIST\" | sed 's/^/node=/'; exec \"$0\" \"$@\"";
  // Slurm's task variables are the rank's, not its agent's one-task step's.
  const std::string print_place =
      "echo \"host=$(hostname) rank=$HVDRUN_RANK local=$HVDRUN_LOCAL_RANK name=$HVDRUN_HOSTNAME "
      "size=$HVDRUN_SIZE addr=$HVDRUN_HOST_ADDR "
      "slurm=$SLURM_PROCID/$SLURM_LOCALID/$SLURM_NODEID/$SLURM_NTASKS/"
      "$SLURM_TASKS_PER_NODE/${SLURM_TASK_PID:-none}\"";
  ProcessResult result =
      InLauncher({"salloc", "-N", "4", "--ntasks-per-node=2", "--quiet", "sh", "-c", list_nodes,
                  e2e::HvdrunPath(), "--verbose", "--results", dir.path(), "sh", "-c", print_place});
  ASSERT_EQ(result.exit_code, 0) << result;
  std::vector<std::string> nodes;
  for (const std::string& line : Lines(result.stdout_text)) {
    if (line.rfind("node=", 0) == 0) nodes.push_back(line.substr(5));
  }
  ASSERT_EQ(nodes, (std::vector<std::string>{"server1", "server2", "server3", "server4"})) << result;
  for (int rank = 0; rank < 8; ++rank) {
    const std::string& node = nodes[static_cast<size_t>(rank / 2)];
    std::string line = "[" + std::to_string(rank) + "]<stdout>:host=" + node +
                       " rank=" + std::to_string(rank) + " local=" + std::to_string(rank % 2) +
                       " name=" + node + " size=8 addr=" + c().server(rank / 2 + 1).address +
                       " slurm=" + std::to_string(rank) + "/" + std::to_string(rank % 2) + "/" +
                       std::to_string(rank / 2) + "/8/2(x4)/none";
    EXPECT_NE(result.stdout_text.find(line + "\n"), std::string::npos) << line << "\n" << result;
  }
  EXPECT_NE(result.stderr_text.find("hvdrun: launcher slurm (Slurm job "), std::string::npos) << result;
  EXPECT_NE(result.stderr_text.find("SLURM_JOB_NODELIST='server[1-4]', SLURM_TASKS_PER_NODE='2(x4)')"),
            std::string::npos)
      << result;
  EXPECT_NE(result.stderr_text.find("host server3: agent starting through srun"), std::string::npos)
      << result;
  EXPECT_NE(result.stderr_text.find("host server3: agent ready (server3, "), std::string::npos) << result;
  std::string plan = ReadFile(dir.path() + "/plan.json");
  EXPECT_NE(plan.find("\"launcher\": \"slurm\""), std::string::npos) << plan;
  EXPECT_TRUE(WaitForNoLeftovers({"srun", "sh"}, milliseconds(10'000)).empty());

  // An -np larger than the allocation is refused, naming both.
  ProcessResult too_many = InLauncher(
      {"salloc", "-N", "2", "--ntasks-per-node=1", "--quiet", e2e::HvdrunPath(), "-np", "3", "true"});
  EXPECT_EQ(too_many.exit_code, 2) << too_many;
  EXPECT_NE(too_many.stderr_text.find("hvdrun: -np 3: Slurm job "), std::string::npos) << too_many;
  EXPECT_NE(too_many.stderr_text.find("holds 2 tasks"), std::string::npos) << too_many;
}

TEST_F(SlurmTest, CheckReachesEveryNodeThroughSrun) {
  ProcessResult result =
      InLauncher({"salloc", "-N", "2", "--ntasks-per-node=1", "--quiet", e2e::HvdrunPath(), "--check"});
  ASSERT_EQ(result.exit_code, 0) << result;
  for (int node : {1, 2}) {
    std::string name = "server" + std::to_string(node);
    EXPECT_NE(result.stdout_text.find(name + ": ok\n  ssh          none: through srun (" +
                                      c().server(node).address + ")\n"),
              std::string::npos)
        << result;
  }
}

TEST_F(SlurmTest, GlooCollectivesUnderSbatch) {
  e2e::ScratchDir dir;
  const std::string output = dir.path() + "/job.out";
  ProcessResult result = InLauncher(
      {"sbatch", "--wait", "--quiet", "-N", "4", "--ntasks-per-node=1", "--output=" + output, "--wrap",
       "exec " + e2e::HvdrunPath() + " --gloo --verbose " + HVDRUN_TEST_COLLECTIVES_PATH});
  std::string job_output = ReadFile(output);
  ASSERT_EQ(result.exit_code, 0) << result << "\njob output:\n" << job_output;
  EXPECT_TRUE(e2e::EveryRankCheckedItsResults(job_output, 4)) << "\n" << job_output;
  // sbatch runs the script, and so hvdrun, on the allocation's first node.
  EXPECT_NE(job_output.find("rendezvous service on " + c().server(1).address + ":"), std::string::npos)
      << job_output;
}

TEST_F(SlurmTest, MpiUnderSallocRunsWhereSlurmPlacesIt) {
  ProcessResult result = InLauncher(
      {"salloc", "-N", "2", "--nodelist=server[1-2]", "--ntasks-per-node=2", "--quiet", e2e::HvdrunPath(),
       "--mpi", "--verbose", "sh", "-c",
       "echo \"host=$(hostname) rank=$HVDRUN_RANK slurm=$SLURM_PROCID/$SLURM_NTASKS\"; exec \"$0\"",
       HVDRUN_TEST_COLLECTIVES_PATH});
  ASSERT_EQ(result.exit_code, 0) << result;
  for (int rank = 0; rank < 4; ++rank) {
    std::string r = std::to_string(rank);
    std::string host = "server" + std::to_string(rank / 2 + 1);
    EXPECT_NE(
        result.stdout_text.find("[" + r + "]<stdout>:host=" + host + " rank=" + r + " slurm=" + r + "/4\n"),
        std::string::npos)
        << result;
    EXPECT_NE(result.stdout_text.find("[" + r + "]<stdout>:rank " + r + " of 4: checked "), std::string::npos)
        << result;
  }
  // mpirun reads the allocation itself: hvdrun passes it no host list.
  size_t running = result.stderr_text.find("hvdrun: running: mpirun ");
  ASSERT_NE(running, std::string::npos) << result;
  std::string command = result.stderr_text.substr(running, result.stderr_text.find('\n', running) - running);
  EXPECT_EQ(command.find(" -H "), std::string::npos) << command;
  EXPECT_EQ(command.find("plm_rsh"), std::string::npos) << command;

  // -H naming some of the allocation's slots (hvdrun-lab's cells): mpirun is held to them, one rank
  // per node here, where it would otherwise fill server1's two slots first.
  ProcessResult some =
      InLauncher({"salloc", "-N", "2", "--nodelist=server[1-2]", "--ntasks-per-node=2", "--quiet",
                  e2e::HvdrunPath(), "--mpi", "--launcher", "slurm", "-H", "server1:1,server2:1", "sh", "-c",
                  "echo \"host=$(hostname) rank=$HVDRUN_RANK\""});
  ASSERT_EQ(some.exit_code, 0) << some;
  EXPECT_NE(some.stdout_text.find("[0]<stdout>:host=server1 rank=0\n"), std::string::npos) << some;
  EXPECT_NE(some.stdout_text.find("[1]<stdout>:host=server2 rank=1\n"), std::string::npos) << some;
}

TEST_F(SlurmTest, ARankFailureGivesTheFailureReport) {
  ProcessResult result = InLauncher({"salloc", "-N", "2", "--nodelist=server[1-2]", "--ntasks-per-node=2",
                                     "--quiet", e2e::HvdrunPath(), "sh", "-c",
                                     "if [ \"$HVDRUN_RANK\" = 2 ]; then exit 3; fi; exec sleep 30"});
  EXPECT_EQ(result.exit_code, 3) << result;
  EXPECT_NE(result.stderr_text.find("hvdrun: rank 2 on host server2 failed first (exit code 3)"),
            std::string::npos)
      << result;
  EXPECT_LT(result.elapsed, milliseconds(20'000)) << result;
  EXPECT_TRUE(WaitForNoLeftovers({"srun", "sleep"}, milliseconds(10'000)).empty());
}

TEST_F(SlurmTest, ScancelInTheMiddleOfAJobLeavesNothingOnAnyNode) {
  e2e::RunningProcess job =
      StartInLauncherWithSlurm({"salloc", "-N", "4", "--ntasks-per-node=2", "--job-name=hvdrun-scancel",
                                e2e::HvdrunPath(), "sleep", "60"});
  ASSERT_TRUE(WaitForPrograms("sleep", 8, milliseconds(30'000)));
  ASSERT_EQ(ProgramsIn(c().PidsInCluster(), "hvdrun-agent").size(), 4u);
  ProcessResult cancel = InLauncher({"scancel", "--name=hvdrun-scancel"}, milliseconds(10'000));
  ASSERT_EQ(cancel.exit_code, 0) << cancel;
  ProcessResult result = job.Wait(milliseconds(30'000));
  EXPECT_FALSE(result.timed_out) << result;
  EXPECT_NE(result.exit_code, 0) << result;
  // slurmstepd sends SIGTERM to every process of the job's steps; the agents report their ranks' ends.
  EXPECT_NE(result.stderr_text.find("failed first (killed by SIGTERM)"), std::string::npos) << result;
  std::vector<pid_t> left = WaitForNoLeftovers({"srun", "sleep"}, milliseconds(15'000));
  EXPECT_TRUE(left.empty()) << e2e::DescribeProcesses(left) << "\n" << result;
}

// hvdrun-lab's matrix in one allocation: the script `hvdrun-lab sbatch` writes, submitted with
// sbatch --wait; each cell on the first nodes it needs, through srun.
TEST_F(SlurmTest, LabMatrixRunsInOneAllocationFromTheSbatchScriptItWrites) {
  e2e::ScratchDir dir;
  const std::string lab = std::string(HVDRUN_TEST_BIN_DIR) + "/hvdrun-lab";
  const std::string experiment = dir.WriteFile("slurm-lab.yaml", R"(name: slurm-lab
program: hvdrun-bench
args: [-b, 4K, -e, 16K, -f, 4, --iters, 5, --warmup, 1]
figures: {step_time: time_us, step_time_scale: 1.0e-6, throughput: busbw_gbps, throughput_unit: GB/s}
matrix:
  backend: [gloo]
  processes_per_server: [1]
  servers: [1, 2]
timeout: 60
)");
  const std::string results = dir.path() + "/results";
  const std::string output = dir.path() + "/job.out";
  ProcessResult script =
      InLauncher({lab, "sbatch", experiment, "--time", "5", "--output", output, "--results", results});
  ASSERT_EQ(script.exit_code, 0) << script;
  EXPECT_NE(script.stdout_text.find("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --time=5\n"),
            std::string::npos)
      << script;
  const std::string job_script = dir.WriteFile("job.sh", script.stdout_text);

  ProcessResult submitted = InLauncher({"sbatch", "--wait", "--parsable", job_script});
  const std::string job_output = ReadFile(output);
  ASSERT_EQ(submitted.exit_code, 0) << submitted << "\njob output:\n" << job_output;
  const std::vector<std::string> id_lines = Lines(submitted.stdout_text);
  const std::string job_id = id_lines.empty() ? "" : id_lines.front().substr(0, id_lines.front().find(';'));
  const std::string inside =
      "hvdrun-lab: inside Slurm job " + job_id + ": the cells run on its nodes (" + "SLURM_JOB_NODELIST='";
  const size_t at = job_output.find(inside);
  ASSERT_NE(at, std::string::npos) << job_output;
  const size_t list_start = at + inside.size();
  StatusOr<std::vector<std::string>> nodes =
      ExpandSlurmHostList(job_output.substr(list_start, job_output.find('\'', list_start) - list_start));
  ASSERT_TRUE(nodes.ok() && nodes->size() == 2) << job_output;
  EXPECT_NE(job_output.find("hvdrun-lab: 2 runs: 2 ok"), std::string::npos) << job_output;

  // Each cell used the first S nodes of the allocation, through srun, and says so in its plan.
  const std::string cells = results + "/slurm-lab/cells/";
  for (int servers : {1, 2}) {
    const std::string run =
        cells + "backend-gloo_processes-per-server-1_servers-" + std::to_string(servers) + "/repeat-1/";
    EXPECT_NE(ReadFile(run + "run.json").find("\"status\": \"ok\""), std::string::npos) << run;
    const std::string plan = ReadFile(run + "hvdrun/plan.json");
    EXPECT_NE(plan.find("\"launcher\": \"slurm\""), std::string::npos) << plan;
    EXPECT_NE(plan.find("\"slurm_job_id\": \"" + job_id + "\""), std::string::npos) << plan;
    EXPECT_NE(plan.find("\"host\": \"" + nodes->at(0) + "\""), std::string::npos) << plan;
    EXPECT_EQ(plan.find("\"host\": \"" + nodes->at(1) + "\"") != std::string::npos, servers == 2) << plan;
    EXPECT_NE(ReadFile(run + "command.json").find("--launcher slurm"), std::string::npos) << run;
    // The agents ran there: each node's facts give its own host name.
    for (int node = 0; node < servers; ++node) {
      const std::string facts = ReadFile(run + "hvdrun/hosts/" + nodes->at(node) + ".json");
      EXPECT_NE(facts.find("\"value\": \"" + nodes->at(node) + "\""), std::string::npos) << facts;
    }
  }
  // The run records the job it ran in.
  const std::string environment = ReadFile(results + "/slurm-lab/environment.json");
  EXPECT_NE(environment.find("\"job_id\": \"" + job_id + "\""), std::string::npos) << environment;
  ProcessResult report = InLauncher({lab, "report", results + "/slurm-lab"});
  ASSERT_EQ(report.exit_code, 0) << report;
  EXPECT_NE(ReadFile(results + "/slurm-lab/report.md").find("| Slurm job | " + job_id + " (nodes "),
            std::string::npos)
      << report;
  EXPECT_TRUE(WaitForNoLeftovers({"srun", "hvdrun-bench"}, milliseconds(10'000)).empty());

  // A cell that needs more nodes than the allocation has: one line naming both, nothing run.
  ProcessResult small = InLauncher(
      {"salloc", "-N", "1", "--quiet", lab, "run", experiment, "--results", dir.path() + "/small"});
  EXPECT_EQ(small.exit_code, 2) << small;
  EXPECT_NE(small.stderr_text.find(":8:16: servers 2 needs 2 nodes, and Slurm job "), std::string::npos)
      << small;
  EXPECT_NE(small.stderr_text.find(" has 1 (SLURM_JOB_NODELIST='server"), std::string::npos) << small;
  EXPECT_NE(small.stderr_text.find("'); submit with -N 2 (hvdrun-lab sbatch), or exclude the cell"),
            std::string::npos)
      << small;
}

// Everything of a node dies at once, slurmd, slurmstepd, agent and ranks: as a node that loses power.
// Its sshd, the test cluster's, stays. The node stays down for the rest of the process (ctest runs
// each test in its own).
void KillNode(const TestCluster& cluster, int number) {
  for (pid_t pid : cluster.PidsIn(cluster.server(number))) {
    if (ProgramName(pid) != "sshd") ::kill(pid, SIGKILL);
  }
}

// An elastic job on server1, server3 and server4 (server2 is the next test's to kill): server4, rank
// 2's node, dies mid-training; the job re-forms round 1 on the other two and finishes.
TEST_F(SlurmTest, AnElasticJobGoesOnWithoutANodeThatDies) {
  if (std::string reason = ElasticTraining::UnusableReason(); !reason.empty()) GTEST_SKIP() << reason;
  ElasticTraining training;
  e2e::RunningProcess job = StartInLauncherWithSlurm(
      e2e::Concat({{"salloc", "-N", "3", "--nodelist=server[1,3-4]", "--ntasks-per-node=1", "--quiet",
                    e2e::HvdrunPath(), "--min-np", "2", "--heartbeat-timeout", "3"},
                   training.Program()}));
  e2e::KillOnScopeExit guard;
  guard.Add(job.pid());
  ASSERT_TRUE(training.WaitUntilMidTraining(milliseconds(60'000))) << "rank 2 never reached step 50";
  KillNode(c(), 4);
  ProcessResult result = job.Wait(milliseconds(60'000));
  EXPECT_FALSE(result.timed_out) << result;
  EXPECT_TRUE(training.EndedOnTheSurvivors(result, "server4")) << result;
  std::vector<pid_t> left = WaitForNoLeftovers({"srun", "python3"}, milliseconds(15'000));
  EXPECT_TRUE(left.empty()) << e2e::DescribeProcesses(left) << "\n" << result;
  // Slurm holds the allocation's nodes until server4 reports the job's end, which it never will:
  // the node set down, as slurmctld would after SlurmdTimeout, frees server1 and server3.
  ProcessResult down =
      InLauncher({"scontrol", "update", "NodeName=server4", "State=DOWN", "Reason=killed by the test"},
                 milliseconds(10'000));
  EXPECT_EQ(down.exit_code, 0) << down;
}

// An elastic job on the same nodes that grows: its discovery script prints server1 and server3 until
// rank 0 reaches step 50, then server2 too (a node of the cluster, not of the allocation: left out
// with a warning) and server4, where hvdrun starts an agent through srun and a rank of round 1.
TEST_F(SlurmTest, AnElasticJobGrowsOntoANodeItsDiscoveryScriptAdds) {
  if (std::string reason = ElasticTraining::UnusableReason(); !reason.empty()) GTEST_SKIP() << reason;
  ElasticTraining training;
  ProcessResult result = InLauncher(e2e::Concat(
      {{"salloc", "-N", "3", "--nodelist=server[1,3-4]", "--ntasks-per-node=1", "--quiet", e2e::HvdrunPath(),
        "-np", "2", "--min-np", "2", "--max-np", "3", "--heartbeat-timeout", "3"},
       training.GrowingProgram({"server1", "server3"}, {"server1", "server3", "server2", "server4"}, 3)}));
  EXPECT_FALSE(result.timed_out) << result;
  EXPECT_TRUE(training.EndedGrown(result, "server4", 3)) << result;
  const std::string refused = "': host server2 is not a node of Slurm job ";
  const size_t at = result.stderr_text.find(refused);
  EXPECT_NE(at, std::string::npos) << result;
  EXPECT_EQ(result.stderr_text.find(refused, at + 1), std::string::npos) << "said more than once\n" << result;
  EXPECT_NE(result.stderr_text.find(" (SLURM_JOB_NODELIST='server[1,3-4]'); the job goes on without it\n"),
            std::string::npos)
      << result;
  std::vector<pid_t> left = WaitForNoLeftovers({"srun", "python3"}, milliseconds(15'000));
  EXPECT_TRUE(left.empty()) << e2e::DescribeProcesses(left) << "\n" << result;
}

TEST_F(SlurmTest, ANodeThatDiesLosesItsRanksAndTheJobEnds) {
  e2e::RunningProcess job =
      StartInLauncherWithSlurm({"salloc", "-N", "2", "--nodelist=server[1-2]", "--ntasks-per-node=2",
                                "--quiet", e2e::HvdrunPath(), "--heartbeat-timeout", "3", "sleep", "60"});
  ASSERT_TRUE(WaitForPrograms("sleep", 4, milliseconds(30'000)));
  KillNode(c(), 2);
  ProcessResult result = job.Wait(milliseconds(40'000));
  EXPECT_FALSE(result.timed_out) << result;
  EXPECT_EQ(result.exit_code, 1) << result;
  EXPECT_NE(result.stderr_text.find(
                "hvdrun: rank 2 on host server2 failed first (agent failed: no heartbeat for 3 s"),
            std::string::npos)
      << result;
  std::vector<pid_t> left = WaitForNoLeftovers({"srun", "sleep"}, milliseconds(15'000));
  EXPECT_TRUE(left.empty()) << e2e::DescribeProcesses(left) << "\n" << result;
}

}  // namespace
}  // namespace hvdrun::cluster
