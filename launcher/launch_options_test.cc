#include "launcher/launch_options.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/version.h"

namespace hvdrun {
namespace {

ParsedCommandLine Parse(std::vector<std::string> args,
                        const std::map<std::string, std::string>& environment = {{"HOME", "/home/student"},
                                                                                 {"OMP", "4"}}) {
  args.insert(args.begin(), "hvdrun");
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data(), [&](const char* name) -> const char* {
    auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  });
}

TEST(LaunchOptions, HorovodrunStyleCommandLine) {
  ParsedCommandLine parsed =
      Parse({"-np", "8", "-H", "server1:4,server2:4", "--output-filename", "logs", "--start-timeout", "10",
             "--verbose", "-x", "OMP", "-x", "NCCL_DEBUG=INFO", "./train", "--epochs", "3"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  const LaunchOptions& options = *parsed.options;
  EXPECT_EQ(options.num_proc, 8);
  EXPECT_EQ(options.hosts, (std::vector<HostSlots>{{"server1", 4}, {"server2", 4}}));
  EXPECT_EQ(options.output_dir, "logs");
  EXPECT_EQ(options.start_timeout_s, 10);
  EXPECT_TRUE(options.verbose);
  EXPECT_EQ(options.exports, (std::vector<std::string>{"OMP=4", "NCCL_DEBUG=INFO"}));
  EXPECT_EQ(options.command, (std::vector<std::string>{"./train", "--epochs", "3"}));
}

TEST(LaunchOptions, TuningFlagsReachTheRanksAsHorovodsVariables) {
  ParsedCommandLine parsed = Parse({"-np", "2", "--gloo", "-x", "OMP", "--fusion-threshold-mb", "64",
                                    "--cycle-time-ms", "2.5", "--cache-capacity", "0", "./train"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->exports,
            (std::vector<std::string>{"OMP=4", "HOROVOD_FUSION_THRESHOLD=67108864", "HOROVOD_CYCLE_TIME=2.5",
                                      "HOROVOD_CACHE_CAPACITY=0"}));
}

TEST(LaunchOptions, CompressionFlagsReachTheRanksAsHvdrunsVariables) {
  ParsedCommandLine parsed =
      Parse({"-np", "2", "--mpi", "--compression", "fp8", "--fp8-scaling", "off", "--fp8-safe-cast", "off",
             "--fp8-float32-sums", "off", "--error-feedback", "on", "./train"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->exports,
            (std::vector<std::string>{"HVDRUN_COMPRESSION=fp8-e4m3", "HVDRUN_FP8_SCALING=0",
                                      "HVDRUN_FP8_SAFE_CAST=0", "HVDRUN_FP8_FLOAT32_SUMS=0",
                                      "HVDRUN_ERROR_FEEDBACK=1"}));
  ParsedCommandLine half = Parse({"-np", "2", "--gloo", "--compression", "bf16", "./train"});
  ASSERT_TRUE(half.options.has_value()) << half.error;
  EXPECT_EQ(half.options->exports, (std::vector<std::string>{"HVDRUN_COMPRESSION=bf16"}));
  ParsedCommandLine shm = Parse({"-np", "2", "--gloo", "--shared-memory", "off", "./train"});
  ASSERT_TRUE(shm.options.has_value()) << shm.error;
  EXPECT_EQ(shm.options->exports, (std::vector<std::string>{"HVDRUN_SHM=0"}));
}

TEST(LaunchOptions, TheTimelineComesFromItsFlagOrHorovodsVariable) {
  ParsedCommandLine flag =
      Parse({"-np", "2", "--gloo", "--timeline-filename", "tl.json", "--timeline-mark-cycles", "./train"});
  ASSERT_TRUE(flag.options.has_value()) << flag.error;
  EXPECT_EQ(flag.options->timeline_file, "tl.json");
  EXPECT_TRUE(flag.options->timeline_mark_cycles);

  // Given with -x, HOROVOD_TIMELINE is hvdrun's to merge into, not the ranks' to write.
  ParsedCommandLine exported =
      Parse({"-np", "2", "--mpi", "-x", "HOROVOD_TIMELINE=/tmp/t.json", "-x", "OMP", "./train"});
  ASSERT_TRUE(exported.options.has_value()) << exported.error;
  EXPECT_EQ(exported.options->timeline_file, "/tmp/t.json");
  EXPECT_EQ(exported.options->exports, (std::vector<std::string>{"OMP=4"}));

  // In hvdrun's environment it applies to a job with a backend, as Horovod's users set it.
  const std::map<std::string, std::string> environment = {{"HOROVOD_TIMELINE", "env.json"}};
  ParsedCommandLine inherited = Parse({"-np", "2", "--gloo", "./train"}, environment);
  ASSERT_TRUE(inherited.options.has_value()) << inherited.error;
  EXPECT_EQ(inherited.options->timeline_file, "env.json");
  ParsedCommandLine without_backend = Parse({"-np", "2", "./train"}, environment);
  ASSERT_TRUE(without_backend.options.has_value()) << without_backend.error;
  EXPECT_EQ(without_backend.options->timeline_file, "");
}

TEST(LaunchOptions, SshFlags) {
  ParsedCommandLine parsed =
      Parse({"-H", "server1:2", "--ssh-user", "alice", "-p", "2222", "-i", "/dev/null", "--ssh-known-hosts",
             "kh", "--ssh-accept-new-host-keys", "--agent-path", "/opt/hvdrun-agent", "--cwd", "/data",
             "--heartbeat-timeout", "5", "./train"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  const LaunchOptions& options = *parsed.options;
  EXPECT_EQ(options.ssh.user, "alice");
  EXPECT_EQ(options.ssh.port, 2222);
  EXPECT_EQ(options.ssh.identity_file, "/dev/null");
  EXPECT_EQ(options.ssh.known_hosts, "kh");
  EXPECT_TRUE(options.ssh.accept_new_host_keys);
  EXPECT_EQ(options.remote_agent_path, "/opt/hvdrun-agent");
  EXPECT_TRUE(options.remote_agent_path_given);
  EXPECT_EQ(options.working_dir, "/data");
  EXPECT_EQ(options.heartbeat_timeout_s, 5);
  EXPECT_EQ(options.command, (std::vector<std::string>{"./train"}));
}

TEST(LaunchOptions, SshFlagDefaults) {
  ParsedCommandLine parsed = Parse({"-H", "server1:2", "./train"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->ssh.port, 0);
  EXPECT_FALSE(parsed.options->ssh.accept_new_host_keys);
  EXPECT_EQ(parsed.options->remote_agent_path, "hvdrun-agent");
  EXPECT_FALSE(parsed.options->remote_agent_path_given);
  EXPECT_TRUE(parsed.options->ssh.agent_fallback_path.empty());
  EXPECT_EQ(parsed.options->heartbeat_timeout_s, 30);
}

TEST(LaunchOptions, AnAgentPathGivenAsTheDefaultNameStillCountsAsGiven) {
  ParsedCommandLine parsed = Parse({"-H", "server1:2", "--agent-path", "hvdrun-agent", "./train"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->remote_agent_path, "hvdrun-agent");
  EXPECT_TRUE(parsed.options->remote_agent_path_given);
}

TEST(LaunchOptions, BadSshFlagValuesAreUsageErrors) {
  EXPECT_EQ(Parse({"-p", "70000", "true"}).error, "--ssh-port: 70000 is out of range (1 to 65535)");
  EXPECT_EQ(Parse({"--heartbeat-timeout", "0", "true"}).error,
            "--heartbeat-timeout: 0 is out of range (1 to 86400)");
  EXPECT_EQ(Parse({"-i", "/nonexistent/key", "true"}).error,
            "--ssh-identity-file: cannot read '/nonexistent/key': No such file or directory");
}

TEST(LaunchOptions, CheckTakesHostsAndNoCommand) {
  ParsedCommandLine parsed = Parse({"--check", "-H", "root@server1,server2:4"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_TRUE(parsed.options->check);
  EXPECT_EQ(parsed.options->hosts, (std::vector<HostSlots>{{"server1", 1, "root"}, {"server2", 4, ""}}));
  ParsedCommandLine local = Parse({"--check"});
  ASSERT_TRUE(local.options.has_value()) << local.error;
  EXPECT_EQ(local.options->hosts, (std::vector<HostSlots>{{"localhost", 1}}));
  EXPECT_EQ(Parse({"--check", "-H", "a", "true"}).error, "--check runs no command, but 'true' was given");
  EXPECT_EQ(Parse({"--check", "--gloo"}).error, "--check: starts no rank, so takes no backend");
}

TEST(LaunchOptions, WithoutHostsRanksRunOnLocalhost) {
  ParsedCommandLine parsed = Parse({"-np", "2", "./my_program", "arg1", "arg with spaces"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->hosts, (std::vector<HostSlots>{{"localhost", 2}}));
  EXPECT_EQ(parsed.options->command, (std::vector<std::string>{"./my_program", "arg1", "arg with spaces"}));
}

TEST(LaunchOptions, WithoutNpEverySlotIsUsed) {
  ParsedCommandLine parsed = Parse({"-H", "a:2,b:3", "true"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->num_proc, 5);
}

TEST(LaunchOptions, TheCommandIsNeverParsed) {
  // Options after the command belong to the command, even ones hvdrun knows.
  ParsedCommandLine parsed = Parse({"-np", "1", "mpi_program", "-np", "3", "--verbose", "-H", "x"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_FALSE(parsed.options->verbose);
  EXPECT_EQ(parsed.options->command,
            (std::vector<std::string>{"mpi_program", "-np", "3", "--verbose", "-H", "x"}));
}

TEST(LaunchOptions, DoubleDashStartsTheCommand) {
  ParsedCommandLine parsed = Parse({"-np", "1", "--", "--weird-program", "x"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->command, (std::vector<std::string>{"--weird-program", "x"}));
}

TEST(LaunchOptions, AttachedValues) {
  ParsedCommandLine parsed = Parse({"--num-proc=3", "-Hlocalhost:3", "--hosts=localhost:4", "true"});
  ASSERT_FALSE(parsed.options.has_value());  // -H given twice
  parsed = Parse({"--num-proc=3", "-Hlocalhost:3", "true"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->num_proc, 3);
  EXPECT_EQ(parsed.options->hosts, (std::vector<HostSlots>{{"localhost", 3}}));
}

TEST(LaunchOptions, MpiFlags) {
  ParsedCommandLine parsed = Parse({"-np", "2", "--mpi", "--mpi-args", "-mca btl ^openib 'two words'",
                                    "--dry-run", "-x", "MASTER_PORT=1234", "prog", "--dry-run"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->backend, BackendKind::kMpi);
  EXPECT_TRUE(parsed.options->dry_run);
  EXPECT_EQ(parsed.options->mpi_args, (std::vector<std::string>{"-mca", "btl", "^openib", "two words"}));
  EXPECT_EQ(parsed.options->command, (std::vector<std::string>{"prog", "--dry-run"}));

  parsed = Parse({"-np", "2", "--mpi", "--mpi-args=--oversubscribe", "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_FALSE(parsed.options->dry_run);
  EXPECT_EQ(parsed.options->mpi_args, std::vector<std::string>{"--oversubscribe"});
}

TEST(LaunchOptions, EachBackendFlag) {
  for (auto [flag, backend] : {std::pair{"--gloo", BackendKind::kGloo}, std::pair{"--mpi", BackendKind::kMpi},
                               std::pair{"--nccl", BackendKind::kNccl}}) {
    ParsedCommandLine parsed = Parse({"-np", "1", flag, "prog"});
    ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
    EXPECT_EQ(parsed.options->backend, backend) << flag;
  }
  ParsedCommandLine parsed = Parse({"-np", "1", "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_FALSE(parsed.options->backend.has_value());
}

TEST(LaunchOptions, NetworkInterfacesRepeatedOrCommaSeparated) {
  ParsedCommandLine parsed =
      Parse({"-np", "2", "--network-interface", "ib0", "--network-interfaces", "eth0,ib0,enp1s0", "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->network_interfaces, (std::vector<std::string>{"ib0", "eth0", "enp1s0"}));
  parsed = Parse({"-np", "2", "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_TRUE(parsed.options->network_interfaces.empty());
}

struct BadCase {
  std::vector<std::string> args;
  const char* error;
};

class LaunchOptionsInvalid : public testing::TestWithParam<BadCase> {};

TEST_P(LaunchOptionsInvalid, ExitTwoWithOneLine) {
  ParsedCommandLine parsed = Parse(GetParam().args);
  EXPECT_FALSE(parsed.options.has_value());
  EXPECT_EQ(parsed.exit_code, 2);
  EXPECT_EQ(parsed.error, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    CommandLines, LaunchOptionsInvalid,
    testing::Values(
        BadCase{{"-np", "0", "true"}, "-np: 0 is out of range (1 to 1048576)"},
        BadCase{{"-np", "two", "true"}, "-np: 'two' is not a whole number"},
        BadCase{{"-H", "a:2", "-np"}, "-np: needs a value"},
        BadCase{{"-np", "2"}, "no command given (usage: hvdrun [options] command [args...])"},
        BadCase{{"true"}, "-np: give the number of processes (or hosts with -H or --hostfile)"},
        BadCase{{"-np", "2", "--bogus", "true"}, "unknown option '--bogus' (see hvdrun --help)"},
        BadCase{{"-q", "true"}, "unknown option '-q' (see hvdrun --help)"},
        BadCase{{"-H", "a:x", "true"},
                "-H: host 1 'a:x': slots must be a whole number from 1 to 1048576, got 'x'"},
        BadCase{
            {"-H", "localhost:2000000", "true"},
            "-H: host 1 'localhost:2000000': slots must be a whole number from 1 to 1048576, got '2000000'"},
        BadCase{{"-np", "1", "-H", "", "true"}, "-H: empty host list (expected host[:slots],...)"},
        BadCase{{"-H", "", "--hostfile", "f", "true"}, "give either -H or --hostfile, not both"},
        BadCase{{"-np", "1", "-i", "", "true"}, "--ssh-identity-file: an empty file name"},
        BadCase{{"-np", "1", "--ssh-user", "a;b", "true"},
                "--ssh-user 'a;b': user names may hold only letters, digits, '-', '.' and '_'"},
        BadCase{{"-H", ".", "true"}, "-H: host 1 '.': a '.' at the start or end, or two in a row"},
        BadCase{{"--mpi", "--dry-run", "-H", "[:]:1", "true"},
                "-H: host 1 '[:]:1': not a valid IPv6 address"},
        BadCase{{"-H", "a", "--hostfile", "f", "true"}, "give either -H or --hostfile, not both"},
        BadCase{{"--hostfile", "/nonexistent", "true"},
                "--hostfile: cannot read '/nonexistent': No such file or directory"},
        BadCase{{"-np", "1", "-x", "1BAD", "true"},
                "-x '1BAD': not a variable name (expected NAME or NAME=VALUE)"},
        BadCase{{"-np", "1", "-x", "UNSET_VAR", "true"},
                "-x UNSET_VAR: UNSET_VAR is not set in hvdrun's environment"},
        BadCase{{"-np", "1", "--start-timeout", "0", "true"},
                "--start-timeout: 0 is out of range (1 to 86400)"},
        BadCase{{"-np", "1", "--gloo", "--mpi", "true"}, "give at most one of --gloo, --mpi and --nccl"},
        BadCase{{"-np", "1", "--nccl", "--gloo", "true"}, "give at most one of --gloo, --mpi and --nccl"},
        BadCase{{"-np", "1", "--dry-run", "true"},
                "--dry-run: only with --mpi (it prints the mpirun command hvdrun would run)"},
        BadCase{{"-np", "1", "--gloo", "--mpi-args", "-v", "true"},
                "--mpi-args: only with --mpi (they are mpirun's arguments)"},
        BadCase{{"-np", "1", "--mpi", "--mpi-args", "-mca btl 'self", "true"},
                "--mpi-args: unterminated ' quote"},
        BadCase{{"-np", "1", "--mpi", "--mpi-args", "\"-x", "true"}, "--mpi-args: unterminated \" quote"},
        BadCase{{"-np", "1", "--mpi", "--mpi-args"}, "--mpi-args: needs a value"},
        BadCase{{"-np", "1", "--network-interface", "eth0,", "true"},
                "--network-interface 'eth0,': an empty interface name"},
        BadCase{{"-np", "1", "--network-interface", "eth0:1", "true"},
                "--network-interface 'eth0:1': 'eth0:1' is not an interface name (1 to 15 characters, no "
                "'/', ':' or spaces)"},
        BadCase{{"-np", "1", "--fusion-threshold-mb", "-1", "true"},
                "--fusion-threshold-mb: -1 is out of range (0 to 1048576)"},
        BadCase{{"-np", "1", "--cycle-time-ms", "1ms", "true"},
                "--cycle-time-ms: '1ms' is not a number of milliseconds from 0 to 60000"},
        BadCase{{"-np", "1", "--cache-capacity", "x", "true"}, "--cache-capacity: 'x' is not a whole number"},
        BadCase{{"-np", "1", "-x", "HOROVOD_CYCLE_TIME=5", "--cycle-time-ms", "1", "true"},
                "-x HOROVOD_CYCLE_TIME: --cycle-time-ms sets it too; give one of them"},
        BadCase{
            {"-np", "1", "--gloo", "--timeline-filename", "a.json", "-x", "HOROVOD_TIMELINE=b.json", "true"},
            "-x HOROVOD_TIMELINE: --timeline-filename sets it too; give one of them"},
        BadCase{{"-np", "1", "--timeline-filename", "a.json", "true"},
                "--timeline-filename: the timeline is libhvdrun's; give --gloo, --mpi or --nccl"},
        BadCase{{"-np", "1", "--gloo", "--compression", "fp4", "true"},
                "--compression: 'fp4' is not a compression (none, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2)"},
        BadCase{{"-np", "1", "--compression", "fp16", "true"},
                "--compression: compression is libhvdrun's; give --gloo or --mpi"},
        BadCase{{"-np", "1", "--nccl", "--compression", "fp8", "true"},
                "--compression: fp8 converts gradients in host memory and --nccl's are on the GPU; compress "
                "over --gloo or --mpi"},
        BadCase{{"-np", "1", "--gloo", "--compression", "fp16", "--error-feedback", "off", "true"},
                "--error-feedback: a safeguard of fp8 compression; give --compression fp8"},
        BadCase{{"-np", "1", "--gloo", "--compression", "fp8", "--fp8-scaling", "no", "true"},
                "--fp8-scaling: 'no' is not on or off"},
        BadCase{{"-np", "1", "--gloo", "--compression", "fp8", "-x", "HVDRUN_COMPRESSION=none", "true"},
                "-x HVDRUN_COMPRESSION: --compression sets it too; give one of them"},
        BadCase{{"-np", "1", "--gloo", "--timeline-mark-cycles", "true"},
                "--timeline-mark-cycles: give --timeline-filename too"},
        BadCase{{"-np", "1", "--mpi", "-x", "HVDRUN_SECRET=00", "true"},
                "-x HVDRUN_SECRET: with --mpi, hvdrun-agent needs hvdrun's own value of HVDRUN_SECRET, so "
                "it cannot be exported"}));

const std::map<std::string, std::string> kAllocation = {{"SLURM_JOB_ID", "42"},
                                                        {"SLURM_JOB_NODELIST", "n[1-2]"},
                                                        {"SLURM_TASKS_PER_NODE", "2(x2)"},
                                                        {"SLURM_NTASKS", "4"}};

TEST(LaunchOptions, InsideASlurmAllocationHostsSlotsAndNpComeFromIt) {
  ParsedCommandLine parsed = Parse({"--gloo", "./train"}, kAllocation);
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->agent_start, AgentStart::kSlurm);
  EXPECT_EQ(parsed.options->hosts, (std::vector<HostSlots>{{"n1", 2}, {"n2", 2}}));
  EXPECT_EQ(parsed.options->num_proc, 4);
  ASSERT_TRUE(parsed.options->slurm.has_value());
  EXPECT_EQ(parsed.options->slurm->job_id, "42");
  EXPECT_EQ(DescribeAgentStart(*parsed.options),
            "slurm (Slurm job 42: SLURM_JOB_NODELIST='n[1-2]', SLURM_TASKS_PER_NODE='2(x2)')");

  std::map<std::string, std::string> fewer = kAllocation;
  fewer["SLURM_NTASKS"] = "3";
  parsed = Parse({"./train"}, fewer);
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->num_proc, 3);
  parsed = Parse({"-np", "2", "./train"}, kAllocation);
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->num_proc, 2);
}

TEST(LaunchOptions, ANpTheAllocationCannotHoldNamesBoth) {
  EXPECT_EQ(
      Parse({"-np", "5", "./train"}, kAllocation).error,
      "-np 5: Slurm job 42 (SLURM_JOB_NODELIST='n[1-2]', SLURM_TASKS_PER_NODE='2(x2)') holds 4 tasks; ask "
      "Slurm for more (salloc -n) or give a smaller -np");
  std::map<std::string, std::string> broken = kAllocation;
  broken["SLURM_TASKS_PER_NODE"] = "2(x3)";
  ParsedCommandLine parsed = Parse({"./train"}, broken);
  EXPECT_EQ(parsed.exit_code, 2);
  EXPECT_EQ(
      parsed.error,
      "inside Slurm job 42: SLURM_TASKS_PER_NODE='2(x3)' gives 3 nodes, but SLURM_JOB_NODELIST='n[1-2]' "
      "has 2");
}

TEST(LaunchOptions, TheLauncherFlagOverridesTheChoice) {
  ParsedCommandLine parsed = Parse({"-H", "a:2", "./train"}, kAllocation);
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->agent_start, AgentStart::kSsh);
  EXPECT_FALSE(parsed.options->slurm.has_value());
  EXPECT_EQ(DescribeAgentStart(*parsed.options), "ssh");

  parsed = Parse({"--launcher", "ssh", "./train"}, kAllocation);
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->agent_start, AgentStart::kSsh);
  EXPECT_EQ(parsed.options->hosts, (std::vector<HostSlots>{{"n1", 2}, {"n2", 2}}));

  parsed = Parse({"--launcher", "local", "-np", "2", "./train"}, kAllocation);
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->agent_start, AgentStart::kLocal);
  EXPECT_EQ(parsed.options->hosts, (std::vector<HostSlots>{{"localhost", 2}}));

  parsed = Parse({"--launcher", "slurm", "-H", "n2:1", "./train"}, kAllocation);
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->hosts, (std::vector<HostSlots>{{"n2", 1}}));
  EXPECT_EQ(parsed.options->num_proc, 1);

  EXPECT_EQ(Parse({"--launcher", "slurm", "-H", "bob@n2:1", "./train"}, kAllocation).error,
            "--launcher slurm: host 'bob@n2': srun starts the agents as the job's own user, so a login name "
            "does not apply; drop 'bob@' (or give --launcher ssh)");
  EXPECT_EQ(Parse({"--launcher", "slurm", "-H", "n3", "./train"}, kAllocation).error,
            "--launcher slurm: host 'n3' is not a node of Slurm job 42 (SLURM_JOB_NODELIST='n[1-2]', "
            "SLURM_TASKS_PER_NODE='2(x2)')");
  EXPECT_EQ(
      Parse({"--launcher", "slurm", "./train"}).error,
      "--launcher slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set); run hvdrun under salloc "
      "or sbatch");
  EXPECT_EQ(Parse({"--launcher", "pbs", "./train"}).error, "--launcher 'pbs': one of ssh, slurm, local");
  parsed = Parse({"-np", "2", "./train"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->agent_start, AgentStart::kSsh);
}

TEST(LaunchOptions, VersionAndHelpExitZero) {
  testing::internal::CaptureStdout();
  ParsedCommandLine version = Parse({"--version"});
  std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_FALSE(version.options.has_value());
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(printed, std::string("hvdrun ") + kVersion + "\n");

  testing::internal::CaptureStdout();
  ParsedCommandLine help = Parse({"--help"});
  printed = testing::internal::GetCapturedStdout();
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(printed.find("--num-proc"), std::string::npos);
  EXPECT_NE(printed.find("-np"), std::string::npos);
  EXPECT_NE(printed.find("--hostfile"), std::string::npos);
}

}  // namespace
}  // namespace hvdrun
