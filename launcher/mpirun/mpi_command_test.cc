#include "launcher/mpirun/mpi_command.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "common/shell_words.h"

namespace hvdrun {
namespace {

using Words = std::vector<std::string>;

const std::string kSecret(64, 'f');

RankAssignment Assign(const std::vector<std::pair<std::string, int>>& host_slots, int ranks) {
  std::vector<HostSlots> hosts;
  for (const auto& [host, slots] : host_slots) {
    HostSlots entry;
    entry.host = host;
    entry.slots = slots;
    hosts.push_back(entry);
  }
  StatusOr<RankAssignment> assignment = RankAssignment::Assign(hosts, ranks);
  EXPECT_TRUE(assignment.ok()) << assignment.status().message();
  return std::move(assignment).value();
}

LaunchOptions Options(Words command) {
  LaunchOptions options;
  options.backend = BackendKind::kMpi;
  options.command = std::move(command);
  return options;
}

JobEnvironment Job() {
  JobEnvironment job;
  job.job_id = "0011aabb";
  job.backend = "mpi";
  job.master_addr = "127.0.0.1";
  job.master_port = 29500;
  job.rendezvous_addr = "127.0.0.1";
  job.rendezvous_port = 4567;
  job.secret = kSecret;
  return job;
}

// The launch JobRun describes for `options` and the job's values `job`.
JobLaunch LaunchOf(const LaunchOptions& options, JobEnvironment job) {
  JobLaunch launch;
  launch.environment = std::move(job);
  launch.environment.exports = options.exports;
  launch.environment.network_interfaces = options.network_interfaces;
  launch.command = options.command;
  return launch;
}

MpiCommand Build(const RankAssignment& assignment, const LaunchOptions& options, const JobEnvironment& job,
                 const std::string& agent_path, const MpiLaunchHost& host) {
  return BuildMpiCommand(assignment, LaunchOf(options, job), MpirunSettingsOf(options), agent_path, host);
}

// The words after each -x.
Words ExportedNames(const Words& argv) {
  Words names;
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "-x") names.push_back(argv[i + 1]);
  }
  return names;
}

TEST(MpiCommand, TheWholeCommandAsRoot) {
  MpiCommand command = Build(Assign({{"localhost", 4}}, 4), Options({"hvdrun-bench", "-b", "1M"}), Job(),
                             "/opt/hvdrun/bin/hvdrun-agent", {.as_root = true, .cpus = 64});
  Words expected = {"mpirun",
                    "--allow-run-as-root",
                    "--tag-output",
                    "-np",
                    "4",
                    "-H",
                    "localhost:4",
                    "-bind-to",
                    "none",
                    "-map-by",
                    "slot",
                    "-mca",
                    "pml",
                    "ob1",
                    "-mca",
                    "btl",
                    "^openib",
                    "-mca",
                    "btl_tcp_if_include",
                    "lo",
                    "-x",
                    "HVDRUN_BACKEND",
                    "-x",
                    "HVDRUN_JOB_ID",
                    "-x",
                    "HVDRUN_RENDEZVOUS_ADDR",
                    "-x",
                    "HVDRUN_RENDEZVOUS_PORT",
                    "-x",
                    "HVDRUN_SECRET",
                    "-x",
                    "MASTER_ADDR",
                    "-x",
                    "MASTER_PORT",
                    "-x",
                    "HVDRUN_MPI_LAYOUT",
                    "/opt/hvdrun/bin/hvdrun-agent",
                    "--mpi-rank",
                    "--",
                    "hvdrun-bench",
                    "-b",
                    "1M"};
  EXPECT_EQ(command.argv, expected);
  Words env = {
      "HVDRUN_BACKEND=mpi",          "HVDRUN_JOB_ID=0011aabb",       "HVDRUN_RENDEZVOUS_ADDR=127.0.0.1",
      "HVDRUN_RENDEZVOUS_PORT=4567", "HVDRUN_SECRET=" + kSecret,     "MASTER_ADDR=127.0.0.1",
      "MASTER_PORT=29500",           "HVDRUN_MPI_LAYOUT=localhost:4"};
  EXPECT_EQ(command.env, env);
}

TEST(MpiCommand, RunAsRootOnlyAsRoot) {
  RankAssignment assignment = Assign({{"localhost", 2}}, 2);
  Words as_root = Build(assignment, Options({"true"}), Job(), "hvdrun-agent", {.as_root = true}).argv;
  Words as_user = Build(assignment, Options({"true"}), Job(), "hvdrun-agent", {.as_root = false}).argv;
  EXPECT_EQ(std::count(as_root.begin(), as_root.end(), "--allow-run-as-root"), 1);
  EXPECT_EQ(std::count(as_user.begin(), as_user.end(), "--allow-run-as-root"), 0);
  as_root.erase(std::find(as_root.begin(), as_root.end(), "--allow-run-as-root"));
  EXPECT_EQ(as_root, as_user);
}

TEST(MpiCommand, RanksYieldTheCpuWhenTheyAreAtLeastAsManyAsTheCpus) {
  auto yields = [](int ranks, int cpus) {
    Words argv =
        Build(Assign({{"localhost", 8}}, ranks), Options({"true"}), Job(), "hvdrun-agent", {.cpus = cpus})
            .argv;
    auto it = std::find(argv.begin(), argv.end(), "mpi_yield_when_idle");
    if (it == argv.end()) return false;
    EXPECT_EQ(*(it - 1), "-mca");
    EXPECT_EQ(*(it + 1), "1");
    return true;
  };
  EXPECT_TRUE(yields(4, 2));
  EXPECT_TRUE(yields(2, 2));
  EXPECT_FALSE(yields(2, 4));
  EXPECT_FALSE(yields(8, 0)) << "unknown CPUs: Open MPI's default";
}

TEST(MpiCommand, HostsCarryTheirRankCountsNotTheirSlots) {
  MpiCommand command = Build(Assign({{"localhost", 8}}, 3), Options({"true"}), Job(), "hvdrun-agent", {});
  auto h = std::find(command.argv.begin(), command.argv.end(), "-H");
  ASSERT_NE(h, command.argv.end());
  EXPECT_EQ(*(h + 1), "localhost:3");
  EXPECT_EQ(*(std::find(command.argv.begin(), command.argv.end(), "-np") + 1), "3");
  EXPECT_EQ(MpiLayout(Assign({{"server1", 4}, {"server2", 4}, {"server3", 4}}, 6)), "server1:4,server2:2");
  EXPECT_EQ(MpiLayout(Assign({{"::1", 2}}, 2)), "[::1]:2");
}

TEST(MpiCommand, NamesOnlyOnTheCommandLineAndNoSecretAnywhereInIt) {
  LaunchOptions options = Options({"train"});
  options.exports = {"OMP_NUM_THREADS=4", "NCCL_DEBUG=INFO"};
  MpiCommand command =
      Build(Assign({{"localhost", 2}}, 2), options, Job(), "hvdrun-agent", {.as_root = true});
  EXPECT_EQ(ExportedNames(command.argv),
            (Words{"HVDRUN_BACKEND", "HVDRUN_JOB_ID", "HVDRUN_RENDEZVOUS_ADDR", "HVDRUN_RENDEZVOUS_PORT",
                   "HVDRUN_SECRET", "MASTER_ADDR", "MASTER_PORT", "HVDRUN_MPI_LAYOUT", "OMP_NUM_THREADS",
                   "NCCL_DEBUG"}));
  for (const std::string& word : command.argv) {
    EXPECT_EQ(word.find(kSecret), std::string::npos) << word;
    EXPECT_EQ(word.find("=4"), std::string::npos) << word;
    EXPECT_EQ(word.find("INFO"), std::string::npos) << word;
  }
  ASSERT_EQ(command.env.size(), 10u);
  EXPECT_EQ(command.env[8], "OMP_NUM_THREADS=4");
  EXPECT_EQ(command.env[9], "NCCL_DEBUG=INFO");
  // Every -x name has its value in mpirun's environment, in the same order.
  Words names = ExportedNames(command.argv);
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(command.env[i].rfind(names[i] + "=", 0), 0u) << i;
}

TEST(MpiCommand, AUsersExportReplacesHvdrunsValueOfTheSameName) {
  LaunchOptions options = Options({"train"});
  options.exports = {"MASTER_PORT=1234"};
  MpiCommand command =
      Build(Assign({{"localhost", 1}}, 1), options, Job(), "hvdrun-agent", {.as_root = true});
  Words names = ExportedNames(command.argv);
  EXPECT_EQ(std::count(names.begin(), names.end(), "MASTER_PORT"), 1);
  EXPECT_NE(std::find(command.env.begin(), command.env.end(), "MASTER_PORT=1234"), command.env.end());
  EXPECT_EQ(std::find(command.env.begin(), command.env.end(), "MASTER_PORT=29500"), command.env.end());
}

TEST(MpiCommand, MpiArgsComeBeforeTheProgramWordForWord) {
  LaunchOptions options = Options({"./a.out", "--flag"});
  options.mpi_args = {"-mca", "btl_base_verbose", "30", "--report-bindings", "a b"};
  Words argv = Build(Assign({{"localhost", 1}}, 1), options, Job(), "hvdrun-agent", {.as_root = false}).argv;
  Words tail(argv.end() - 10, argv.end());
  EXPECT_EQ(tail, (Words{"-mca", "btl_base_verbose", "30", "--report-bindings", "a b", "hvdrun-agent",
                         "--mpi-rank", "--", "./a.out", "--flag"}));
}

TEST(MpiCommand, ADryRunHasNoValuesToExport) {
  MpiCommand command = Build(Assign({{"localhost", 2}}, 2), Options({"true"}), JobEnvironment{},
                             "hvdrun-agent", {.as_root = true});
  EXPECT_EQ(ExportedNames(command.argv).size(), 8u);
  EXPECT_EQ(command.env[4], "HVDRUN_SECRET=");
  EXPECT_EQ(command.env[3], "HVDRUN_RENDEZVOUS_PORT=");
}

// This machine, as IsLocalHost sees it, for the tests: localhost, 127.0.0.1 and "launcher".
bool IsThisMachine(const std::string& host) {
  return host == "localhost" || host == "127.0.0.1" || host == "launcher";
}

TEST(MpiCommand, HostsMpirunWouldRunOtherwiseAreRefused) {
  EXPECT_TRUE(CheckMpiHosts(Assign({{"localhost", 2}}, 2), IsThisMachine).ok());
  Status two_names = CheckMpiHosts(Assign({{"localhost", 2}, {"127.0.0.1", 2}}, 3), IsThisMachine);
  ASSERT_FALSE(two_names.ok());
  EXPECT_EQ(two_names.message(),
            "--mpi: hosts 'localhost' and '127.0.0.1' are both this machine, which mpirun runs as one node; "
            "name it once (-H localhost:3)");
  // A second host that gets no rank is not part of the job.
  EXPECT_TRUE(CheckMpiHosts(Assign({{"localhost", 2}, {"127.0.0.1", 2}}, 2), IsThisMachine).ok());
  Status ipv6 = CheckMpiHosts(Assign({{"::1", 2}}, 2), IsThisMachine);
  ASSERT_FALSE(ipv6.ok());
  EXPECT_NE(ipv6.message().find("'::1' is an IPv6 address"), std::string::npos) << ipv6.message();
  Status remote_ipv6 = CheckMpiHosts(Assign({{"server1", 2}, {"fd00::2", 2}}, 4), IsThisMachine);
  ASSERT_FALSE(remote_ipv6.ok());
  EXPECT_NE(remote_ipv6.message().find("'fd00::2' is an IPv6 address"), std::string::npos)
      << remote_ipv6.message();
}

TEST(MpiCommand, OtherHostsAreTakenAndThisMachineBesideThemByANameTheyReach) {
  EXPECT_TRUE(CheckMpiHosts(Assign({{"server1", 2}, {"server2", 2}}, 4), IsThisMachine).ok());
  EXPECT_TRUE(CheckMpiHosts(Assign({{"launcher", 2}, {"server1", 2}}, 4), IsThisMachine).ok());
  Status loopback = CheckMpiHosts(Assign({{"localhost", 2}, {"server1", 2}}, 4), IsThisMachine);
  ASSERT_FALSE(loopback.ok());
  EXPECT_EQ(loopback.message(),
            "--mpi: host 'localhost' is this machine by a name that host 'server1' cannot reach it by; name "
            "this machine by its host name or an address the other hosts reach");
  EXPECT_FALSE(CheckMpiHosts(Assign({{"server1", 2}, {"127.0.0.1", 2}}, 4), IsThisMachine).ok());
}

TEST(MpiCommand, RemoteHostsGetHvdrunsSshSettingsAndNoLoopbackInterface) {
  LaunchOptions options = Options({"true"});
  options.ssh.identity_file = "/keys/id_ed25519";
  options.ssh.known_hosts = "/keys/known_hosts";
  options.ssh.port = 2222;
  options.ssh.user = "lab";
  options.start_timeout_s = 20;
  Words argv = Build(Assign({{"server1", 2}, {"server2", 2}}, 4), options, Job(), "hvdrun-agent",
                     {.remote_hosts = true})
                   .argv;
  EXPECT_EQ(*(std::find(argv.begin(), argv.end(), "-H") + 1), "server1:2,server2:2");
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "btl_tcp_if_include"), 0);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "lo"), 0);
  auto no_tree = std::find(argv.begin(), argv.end(), "plm_rsh_no_tree_spawn");
  ASSERT_NE(no_tree, argv.end());
  EXPECT_EQ(*(no_tree + 1), "1");
  auto rsh = std::find(argv.begin(), argv.end(), "plm_rsh_args");
  ASSERT_NE(rsh, argv.end());
  EXPECT_EQ(*(rsh - 1), "-mca");
  EXPECT_EQ(*(rsh + 1),
            "-o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=/keys/known_hosts "
            "-o ConnectTimeout=20 -i /keys/id_ed25519 -p 2222 -l lab");

  options.ssh = SshOptions{};
  options.ssh.accept_new_host_keys = true;
  argv = Build(Assign({{"server1", 2}}, 2), options, Job(), "hvdrun-agent", {.remote_hosts = true}).argv;
  EXPECT_EQ(*(std::find(argv.begin(), argv.end(), "plm_rsh_args") + 1),
            "-o BatchMode=yes -o StrictHostKeyChecking=accept-new -o ConnectTimeout=20");
}

TEST(MpiCommand, InsideASlurmAllocationMpirunFindsTheNodesItself) {
  LaunchOptions options = Options({"true"});
  options.agent_start = AgentStart::kSlurm;
  options.slurm = SlurmAllocation{.job_id = "42",
                                  .node_list = "n[1-2]",
                                  .tasks_per_node = "2(x2)",
                                  .nodes = {{"n1", 2}, {"n2", 2}},
                                  .num_tasks = 4};
  options.hosts = options.slurm->nodes;
  Words argv =
      Build(Assign({{"n1", 2}, {"n2", 2}}, 3), options, Job(), "hvdrun-agent", {.remote_hosts = true}).argv;
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "-H"), 0);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "plm_rsh_args"), 0);
  EXPECT_EQ(*(std::find(argv.begin(), argv.end(), "-np") + 1), "3");
  EXPECT_EQ(*(std::find(argv.begin(), argv.end(), "-map-by") + 1), "slot");
  Words names = ExportedNames(argv);
  EXPECT_NE(std::find(names.begin(), names.end(), "HVDRUN_MPI_LAYOUT"), names.end());

  // Some of the allocation's nodes, chosen with -H (hvdrun-lab's cells): mpirun is held to them.
  options.hosts = {{"n1", 1}, {"n2", 1}};
  argv =
      Build(Assign({{"n1", 1}, {"n2", 1}}, 2), options, Job(), "hvdrun-agent", {.remote_hosts = true}).argv;
  ASSERT_EQ(std::count(argv.begin(), argv.end(), "-H"), 1);
  EXPECT_EQ(*(std::find(argv.begin(), argv.end(), "-H") + 1), "n1:1,n2:1");
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "plm_rsh_args"), 0);
}

// The words from the agent's program (the agent, or the shell that finds it) to the end.
Words RankProgram(const Words& argv) {
  auto mpi_rank = std::find(argv.begin(), argv.end(), "--mpi-rank");
  auto shell = std::find(argv.begin(), mpi_rank, "/bin/sh");
  return Words(shell != mpi_rank ? shell : mpi_rank - 1, argv.end());
}

TEST(MpiCommand, WithoutAgentPathRemoteHostsFallBackToThisMachinesAgentPath) {
  LaunchOptions options = Options({"prog", "a b"});
  options.ssh.agent_fallback_path = "/opt/hvdrun/bin/hvdrun-agent";
  Words program = RankProgram(
      Build(Assign({{"server1", 2}}, 2), options, Job(), "hvdrun-agent", {.remote_hosts = true}).argv);
  ASSERT_EQ(program.size(), 8u) << ShellJoin(program);
  EXPECT_EQ(program[0], "/bin/sh");
  EXPECT_EQ(program[1], "-c");
  EXPECT_EQ(Words(program.begin() + 3, program.end()),
            (Words{"hvdrun-agent", "--mpi-rank", "--", "prog", "a b"}));

  // Run where neither place exists, the shell says so in hvdrun's words and exits 127.
  options.ssh.agent_fallback_path = "/nonexistent/hvdrun-agent";
  program = RankProgram(
      Build(Assign({{"server1", 2}}, 2), options, Job(), "no-such-hvdrun-agent", {.remote_hosts = true})
          .argv);
  std::string line = ShellJoin(program) + " 2>&1";
  FILE* pipe = ::popen(line.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[1024];
  std::string output(buffer, std::fread(buffer, 1, sizeof(buffer), pipe));
  int status = ::pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 127) << status;
  char name[256] = {};
  ASSERT_EQ(::gethostname(name, sizeof(name) - 1), 0);
  EXPECT_EQ(output,
            "hvdrun: host " + std::string(name) +
                ": agent start: 'no-such-hvdrun-agent' was found neither in the host's PATH nor at this "
                "machine's agent path '/nonexistent/hvdrun-agent' (exit status 127); install hvdrun-agent "
                "in one of those places or give --agent-path\n");
}

TEST(MpiCommand, AGivenAgentPathOrOnlyThisMachineRunsTheAgentItself) {
  LaunchOptions options = Options({"prog"});
  Words given = RankProgram(
      Build(Assign({{"server1", 2}}, 2), options, Job(), "/opt/a/hvdrun-agent", {.remote_hosts = true}).argv);
  EXPECT_EQ(given, (Words{"/opt/a/hvdrun-agent", "--mpi-rank", "--", "prog"}));
  options.ssh.agent_fallback_path = "/opt/hvdrun/bin/hvdrun-agent";
  Words local = RankProgram(
      Build(Assign({{"localhost", 2}}, 2), options, Job(), "/opt/hvdrun/bin/hvdrun-agent", {}).argv);
  EXPECT_EQ(local, (Words{"/opt/hvdrun/bin/hvdrun-agent", "--mpi-rank", "--", "prog"}));
}

TEST(MpiCommand, NetworkInterfacesNarrowOpenMpisTrafficOnEveryHost) {
  LaunchOptions options = Options({"true"});
  options.network_interfaces = {"eth0", "ib0"};
  for (bool remote : {false, true}) {
    MpiCommand command = Build(remote ? Assign({{"server1", 2}}, 2) : Assign({{"localhost", 2}}, 2), options,
                               Job(), "hvdrun-agent", {.remote_hosts = remote});
    const Words& argv = command.argv;
    for (const char* parameter : {"btl_tcp_if_include", "oob_tcp_if_include"}) {
      auto found = std::find(argv.begin(), argv.end(), parameter);
      ASSERT_NE(found, argv.end()) << parameter;
      EXPECT_EQ(*(found - 1), "-mca");
      EXPECT_EQ(*(found + 1), "eth0,ib0");
      EXPECT_EQ(std::count(argv.begin(), argv.end(), parameter), 1);
    }
    EXPECT_EQ(std::count(argv.begin(), argv.end(), "lo"), 0) << "the loopback default is replaced";
    for (const char* name : {"HVDRUN_NETWORK_INTERFACES", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"}) {
      Words names = ExportedNames(argv);
      EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
      EXPECT_NE(std::find(command.env.begin(), command.env.end(), std::string(name) + "=eth0,ib0"),
                command.env.end())
          << name;
    }
  }
}

TEST(MpiCommand, SshValuesWithASpaceAndPerHostUsersAreRefused) {
  SshOptions ssh;
  EXPECT_TRUE(CheckMpiSshOptions(ssh).ok());
  ssh.identity_file = "/home/a b/id_ed25519";
  Status spaced = CheckMpiSshOptions(ssh);
  ASSERT_FALSE(spaced.ok());
  EXPECT_NE(spaced.message().find("-i '/home/a b/id_ed25519' has a space"), std::string::npos)
      << spaced.message();

  std::vector<HostSlots> hosts(1);
  hosts[0].host = "server1";
  hosts[0].slots = 2;
  hosts[0].user = "lab";
  StatusOr<RankAssignment> assignment = RankAssignment::Assign(hosts, 2);
  ASSERT_TRUE(assignment.ok()) << assignment.status().message();
  Status user = CheckMpiHosts(assignment.value(), IsThisMachine);
  ASSERT_FALSE(user.ok());
  EXPECT_EQ(user.message(),
            "--mpi: host 'lab@server1': mpirun logs in to every host as one user; give it with "
            "--ssh-user");
}

}  // namespace
}  // namespace hvdrun
