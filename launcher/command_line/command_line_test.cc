#include "launcher/command_line/command_line.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/version.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

using e2e::ScratchDir;

ParsedCommandLine Parse(std::vector<std::string> args,
                        const std::map<std::string, std::string>& environment = {{"HOME", "/home/student"},
                                                                                 {"OMP", "4"}}) {
  args.insert(args.begin(), "hvdrun");
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data(), LookupIn(environment));
}

// What a --gloo job's ranks get first, as horovodrun --gloo gives them.
const std::vector<std::string> kGlooControllerVariables = {"HOROVOD_CONTROLLER=gloo",
                                                           "HOROVOD_CPU_OPERATIONS=gloo"};

std::vector<std::string> Joined(std::vector<std::string> first, const std::vector<std::string>& second) {
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

TEST(CommandLine, HorovodrunStyleCommandLine) {
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
  EXPECT_EQ(options.exports, Joined({"OMP=4", "NCCL_DEBUG=INFO"}, kGlooControllerVariables));
  EXPECT_EQ(options.command, (std::vector<std::string>{"./train", "--epochs", "3"}));
}

TEST(CommandLine, TuningFlagsReachTheRanksAsHorovodsVariables) {
  ParsedCommandLine parsed = Parse({"-np", "2", "--gloo", "-x", "OMP", "--fusion-threshold-mb", "64",
                                    "--cycle-time-ms", "2.5", "--cache-capacity", "0", "./train"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->exports, Joined(Joined({"OMP=4"}, kGlooControllerVariables),
                                            {"HOROVOD_FUSION_THRESHOLD=67108864", "HOROVOD_CYCLE_TIME=2.5",
                                             "HOROVOD_CACHE_CAPACITY=0"}));
}

TEST(CommandLine, AutotuneFlagsReachTheRanksAsHorovodsVariables) {
  ParsedCommandLine parsed = Parse({"-np", "2", "--gloo", "--autotune", "--autotune-log-file", "tune.csv",
                                    "--autotune-warmup-samples", "0", "--autotune-steps-per-sample", "4",
                                    "--autotune-bayes-opt-max-samples", "12",
                                    "--autotune-gaussian-process-noise", "0.25", "./train"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(
      parsed.options->exports,
      Joined(kGlooControllerVariables,
             {"HOROVOD_AUTOTUNE=1", "HOROVOD_AUTOTUNE_LOG=tune.csv", "HOROVOD_AUTOTUNE_WARMUP_SAMPLES=0",
              "HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE=4", "HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES=12",
              "HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE=0.25"}));
}

TEST(CommandLine, CompressionFlagsReachTheRanksAsHvdrunsVariables) {
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
  EXPECT_EQ(half.options->exports, Joined(kGlooControllerVariables, {"HVDRUN_COMPRESSION=bf16"}));
  ParsedCommandLine shm = Parse({"-np", "2", "--gloo", "--shared-memory", "off", "./train"});
  ASSERT_TRUE(shm.options.has_value()) << shm.error;
  EXPECT_EQ(shm.options->exports, Joined(kGlooControllerVariables, {"HVDRUN_SHM=0"}));
}

TEST(CommandLine, TheTimelineComesFromItsFlagOrHorovodsVariable) {
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
  ParsedCommandLine default_controller = Parse({"-np", "2", "./train"}, environment);
  ASSERT_TRUE(default_controller.options.has_value()) << default_controller.error;
  EXPECT_EQ(default_controller.options->timeline_file, "env.json");
  ParsedCommandLine check = Parse({"--check"}, environment);
  ASSERT_TRUE(check.options.has_value()) << check.error;
  EXPECT_EQ(check.options->timeline_file, "");
}

TEST(CommandLine, SshFlags) {
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

TEST(CommandLine, SshFlagDefaults) {
  ParsedCommandLine parsed = Parse({"-H", "server1:2", "./train"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->ssh.port, 0);
  EXPECT_FALSE(parsed.options->ssh.accept_new_host_keys);
  EXPECT_EQ(parsed.options->remote_agent_path, "hvdrun-agent");
  EXPECT_FALSE(parsed.options->remote_agent_path_given);
  EXPECT_TRUE(parsed.options->ssh.agent_fallback_path.empty());
  EXPECT_EQ(parsed.options->heartbeat_timeout_s, 30);
}

TEST(CommandLine, AnAgentPathGivenAsTheDefaultNameStillCountsAsGiven) {
  ParsedCommandLine parsed = Parse({"-H", "server1:2", "--agent-path", "hvdrun-agent", "./train"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->remote_agent_path, "hvdrun-agent");
  EXPECT_TRUE(parsed.options->remote_agent_path_given);
}

TEST(CommandLine, BadSshFlagValuesAreUsageErrors) {
  EXPECT_EQ(Parse({"-p", "70000", "true"}).error, "-p: 70000 is out of range (1 to 65535)");
  EXPECT_EQ(Parse({"--ssh-port", "0", "true"}).error, "--ssh-port: 0 is out of range (1 to 65535)");
  EXPECT_EQ(Parse({"--heartbeat-timeout", "0", "true"}).error,
            "--heartbeat-timeout: 0 is out of range (1 to 86400)");
  EXPECT_EQ(Parse({"-i", "/nonexistent/key", "true"}).error,
            "-i: cannot read '/nonexistent/key': No such file or directory");
}

TEST(CommandLine, CheckTakesHostsAndNoCommand) {
  ParsedCommandLine parsed = Parse({"--check", "-H", "root@server1,server2:4"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_TRUE(parsed.options->check);
  EXPECT_EQ(parsed.options->hosts, (std::vector<HostSlots>{{"server1", 1, "root"}, {"server2", 4, ""}}));
  ParsedCommandLine local = Parse({"--check"});
  ASSERT_TRUE(local.options.has_value()) << local.error;
  EXPECT_EQ(local.options->hosts, (std::vector<HostSlots>{{"localhost", 1}}));
  EXPECT_EQ(Parse({"--check", "-H", "a", "true"}).error, "--check runs no command, but 'true' was given");
  // --check says which controller a job would use.
  EXPECT_EQ(local.options->backend, BackendKind::kGloo);
  ParsedCommandLine mpi = Parse({"--check", "--mpi"});
  ASSERT_TRUE(mpi.options.has_value()) << mpi.error;
  EXPECT_EQ(mpi.options->backend, BackendKind::kMpi);
  EXPECT_EQ(mpi.options->backend_reason, "--mpi");
  EXPECT_TRUE(mpi.options->exports.empty());
}

TEST(CommandLine, WithoutHostsRanksRunOnLocalhost) {
  ParsedCommandLine parsed = Parse({"-np", "2", "./my_program", "arg1", "arg with spaces"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->hosts, (std::vector<HostSlots>{{"localhost", 2}}));
  EXPECT_EQ(parsed.options->command, (std::vector<std::string>{"./my_program", "arg1", "arg with spaces"}));
}

TEST(CommandLine, WithoutNpEverySlotIsUsed) {
  ParsedCommandLine parsed = Parse({"-H", "a:2,b:3", "true"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->num_proc, 5);
}

TEST(CommandLine, TheCommandIsNeverParsed) {
  // Options after the command belong to the command, even ones hvdrun knows.
  ParsedCommandLine parsed = Parse({"-np", "1", "mpi_program", "-np", "3", "--verbose", "-H", "x"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_FALSE(parsed.options->verbose);
  EXPECT_EQ(parsed.options->command,
            (std::vector<std::string>{"mpi_program", "-np", "3", "--verbose", "-H", "x"}));
}

TEST(CommandLine, DoubleDashStartsTheCommand) {
  ParsedCommandLine parsed = Parse({"-np", "1", "--", "--weird-program", "x"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->command, (std::vector<std::string>{"--weird-program", "x"}));
}

TEST(CommandLine, AttachedValues) {
  ParsedCommandLine parsed = Parse({"--num-proc=3", "-Hlocalhost:3", "--hosts=localhost:4", "true"});
  EXPECT_EQ(parsed.error, "--hosts: given twice ('localhost:3', then 'localhost:4'); give it once");
  parsed = Parse({"-np=3", "-Hlocalhost:3", "true"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->num_proc, 3);
  EXPECT_EQ(parsed.options->hosts, (std::vector<HostSlots>{{"localhost", 3}}));
}

TEST(CommandLine, MpiFlags) {
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

TEST(CommandLine, EachBackendFlag) {
  for (auto [flag, backend] : {std::pair{"--gloo", BackendKind::kGloo}, std::pair{"--mpi", BackendKind::kMpi},
                               std::pair{"--nccl", BackendKind::kNccl}}) {
    ParsedCommandLine parsed = Parse({"-np", "1", flag, "prog"});
    ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
    EXPECT_EQ(parsed.options->backend, backend) << flag;
  }
  ParsedCommandLine parsed = Parse({"-np", "1", "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->backend, BackendKind::kGloo);
}

TEST(CommandLine, NetworkInterfacesRepeatedOrCommaSeparated) {
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

class CommandLineInvalid : public testing::TestWithParam<BadCase> {};

TEST_P(CommandLineInvalid, ExitTwoWithOneLine) {
  ParsedCommandLine parsed = Parse(GetParam().args);
  EXPECT_FALSE(parsed.options.has_value());
  EXPECT_EQ(parsed.exit_code, 2);
  EXPECT_EQ(parsed.error, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    CommandLines, CommandLineInvalid,
    testing::Values(
        BadCase{{"-np", "0", "true"}, "-np: 0 is out of range (1 to 1048576)"},
        BadCase{{"-np", "two", "true"}, "-np: 'two' is not a whole number"},
        BadCase{{"-H", "a:2", "-np"}, "-np: expects a value (N) after it; none was given"},
        BadCase{{"-np", "2"}, "no command given (usage: hvdrun [options] command [args...])"},
        BadCase{{"true"}, "-np: give the number of processes (or hosts with -H or --hostfile)"},
        BadCase{{"-np", "2", "--bogus", "true"},
                "unknown option '--bogus' (hvdrun --help lists the options)"},
        BadCase{{"-q", "true"}, "unknown option '-q' (hvdrun --help lists the options)"},
        BadCase{{"-H", "a:x", "true"},
                "-H: host 1 'a:x': slots must be a whole number from 1 to 1048576, got 'x'"},
        BadCase{
            {"-H", "localhost:2000000", "true"},
            "-H: host 1 'localhost:2000000': slots must be a whole number from 1 to 1048576, got '2000000'"},
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
        BadCase{{"-np", "1", "--gloo", "--mpi", "true"}, "--gloo and --mpi: give one of them"},
        BadCase{{"-np", "1", "--nccl", "--gloo", "true"}, "--nccl and --gloo: give one of them"},
        BadCase{{"-np", "1", "--dry-run", "true"},
                "--dry-run: only with --mpi (it prints the mpirun command hvdrun would run)"},
        BadCase{{"-np", "1", "--gloo", "--mpi-args=-v", "true"},
                "--mpi-args: only with --mpi (they are mpirun's arguments; the controller is gloo: --gloo)"},
        BadCase{
            {"-np", "1", "--nccl", "--binding-args", "-bind-to core", "true"},
            "--binding-args: only with --mpi (they are mpirun's arguments; the controller is nccl: --nccl)"},
        BadCase{{"-np", "1", "--mpi", "--mpi-args", "-mca btl 'self", "true"},
                "--mpi-args: unterminated ' quote"},
        BadCase{{"-np", "1", "--mpi", "--mpi-args", "\"-x", "true"}, "--mpi-args: unterminated \" quote"},
        BadCase{{"-np", "1", "--mpi", "--mpi-args"},
                "--mpi-args: expects a value (ARGS) after it; none was given"},
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
        BadCase{{"-np", "1", "--autotune-steps-per-sample", "0", "true"},
                "--autotune-steps-per-sample: 0 is out of range (1 to 100000)"},
        BadCase{{"-np", "1", "--autotune-gaussian-process-noise", "1.5", "true"},
                "--autotune-gaussian-process-noise: '1.5' is not a number from 0 to 1"},
        BadCase{{"-np", "1", "-x", "HOROVOD_CYCLE_TIME=5", "--cycle-time-ms", "1", "true"},
                "-x HOROVOD_CYCLE_TIME: --cycle-time-ms sets it too; give one of them"},
        BadCase{
            {"-np", "1", "--gloo", "--timeline-filename", "a.json", "-x", "HOROVOD_TIMELINE=b.json", "true"},
            "-x HOROVOD_TIMELINE: --timeline-filename sets it too; give one of them"},

        BadCase{{"-np", "1", "--gloo", "--compression", "fp4", "true"},
                "--compression: 'fp4' is not a compression (none, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2)"},

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

TEST(CommandLine, InsideASlurmAllocationHostsSlotsAndNpComeFromIt) {
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

TEST(CommandLine, ANpTheAllocationCannotHoldNamesBoth) {
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

TEST(CommandLine, TheLauncherFlagOverridesTheChoice) {
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

TEST(CommandLine, TheDefaultControllerIsGlooAndSaysWhy) {
  ParsedCommandLine parsed = Parse({"-np", "4", "python", "train.py"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->backend, BackendKind::kGloo);
  EXPECT_EQ(parsed.options->backend_reason,
            "hvdrun's default: no --gloo, --mpi, --nccl, HOROVOD_CONTROLLER or --mpi-args given");
  EXPECT_EQ(parsed.options->exports, kGlooControllerVariables);
}

TEST(CommandLine, HorovodsControllerVariablesChooseWithoutAFlag) {
  ParsedCommandLine parsed = Parse({"-np", "2", "prog"}, {{"HOROVOD_CONTROLLER", "mpi"}});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->backend, BackendKind::kMpi);
  EXPECT_EQ(parsed.options->backend_reason, "HOROVOD_CONTROLLER=mpi in hvdrun's environment");
  parsed = Parse({"-np", "2", "-x", "HOROVOD_CPU_OPERATIONS=MPI", "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->backend, BackendKind::kMpi);
  EXPECT_EQ(parsed.options->backend_reason, "-x HOROVOD_CPU_OPERATIONS=MPI");
  // HOROVOD_CONTROLLER before HOROVOD_CPU_OPERATIONS; -x before hvdrun's environment.
  parsed = Parse({"-np", "2", "-x", "HOROVOD_CONTROLLER=Gloo", "prog"}, {{"HOROVOD_CONTROLLER", "mpi"}});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->backend, BackendKind::kGloo);
  EXPECT_EQ(
      Parse({"-np", "2", "prog"}, {{"HOROVOD_CONTROLLER", "ccl"}}).error,
      "HOROVOD_CONTROLLER=ccl in hvdrun's environment: oneCCL is not a library hvdrun has; its controllers "
      "are gloo or mpi");
  EXPECT_EQ(Parse({"-np", "2", "-x", "HOROVOD_CPU_OPERATIONS=bogus", "prog"}).error,
            "-x HOROVOD_CPU_OPERATIONS=bogus: not a controller hvdrun has (gloo or mpi)");
}

TEST(CommandLine, MpirunsOwnArgumentsChooseMpi) {
  ParsedCommandLine parsed =
      Parse({"-np", "2", "--binding-args", "-bind-to core -map-by core", "--dry-run", "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->backend, BackendKind::kMpi);
  EXPECT_EQ(parsed.options->backend_reason, "--binding-args, which are mpirun's");
  ASSERT_TRUE(parsed.options->binding_args.has_value());
  EXPECT_EQ(*parsed.options->binding_args, (std::vector<std::string>{"-bind-to", "core", "-map-by", "core"}));
  parsed = Parse({"-np", "2", "--mpi-args=--oversubscribe", "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->backend, BackendKind::kMpi);
  EXPECT_FALSE(parsed.options->binding_args.has_value());
}

TEST(CommandLine, AGlooJobsRanksSayGlooAsHorovodrunGlooSetsIt) {
  ParsedCommandLine parsed = Parse({"-np", "2", "--gloo", "prog"}, {{"HOROVOD_CONTROLLER", "mpi"}});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->exports, kGlooControllerVariables);
  EXPECT_EQ(parsed.options->notices,
            (std::vector<std::string>{
                "HOROVOD_CONTROLLER=mpi in hvdrun's environment: the ranks get "
                "HOROVOD_CONTROLLER=gloo, the job's controller (--gloo), as horovodrun --gloo "
                "gives them"}));
  EXPECT_EQ(Parse({"-np", "2", "--gloo", "-x", "HOROVOD_CPU_OPERATIONS=mpi", "prog"}).error,
            "-x HOROVOD_CPU_OPERATIONS=mpi: the job's controller is gloo (--gloo); give one of them");
  parsed = Parse({"-np", "2", "--gloo", "-x", "HOROVOD_CONTROLLER=gloo", "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->exports,
            (std::vector<std::string>{"HOROVOD_CONTROLLER=gloo", "HOROVOD_CPU_OPERATIONS=gloo"}));
}

TEST(CommandLine, JsrunIsRefusedWithItsReason) {
  EXPECT_EQ(Parse({"-np", "2", "--jsrun", "prog"}).error,
            "--jsrun: IBM LSF's jsrun is not a launcher hvdrun has; inside an LSF allocation give its hosts "
            "with -H "
            "or --hostfile, and --mpi to start the ranks with mpirun");
}

TEST(CommandLine, HorovodrunsOptionsBecomeTheVariablesItSets) {
  ParsedCommandLine parsed = Parse({"-np",
                                    "2",
                                    "--mpi",
                                    "--hierarchical-allgather",
                                    "--no-torus-allreduce",
                                    "--no-stall-check",
                                    "--stall-check-warning-time-seconds",
                                    "5",
                                    "--stall-check-shutdown-time-seconds",
                                    "20",
                                    "--mpi-threads-disable",
                                    "--tcp",
                                    "--num-nccl-streams",
                                    "2",
                                    "--thread-affinity",
                                    "0,1",
                                    "--gloo-timeout-seconds",
                                    "45",
                                    "--log-level",
                                    "debug",
                                    "--log-without-timestamp",
                                    "--no-hierarchical-allreduce",
                                    "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(
      parsed.options->exports,
      (std::vector<std::string>{
          "HOROVOD_HIERARCHICAL_ALLGATHER=1", "HOROVOD_TORUS_ALLREDUCE=0", "HOROVOD_STALL_CHECK_DISABLE=1",
          "HOROVOD_STALL_CHECK_TIME_SECONDS=5", "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS=20",
          "HOROVOD_MPI_THREADS_DISABLE=1", "NCCL_IB_DISABLE=1", "HOROVOD_NUM_NCCL_STREAMS=2",
          "HOROVOD_THREAD_AFFINITY=0,1", "HOROVOD_GLOO_TIMEOUT_SECONDS=45", "HOROVOD_LOG_LEVEL=DEBUG",
          "HOROVOD_LOG_HIDE_TIME=1", "HOROVOD_HIERARCHICAL_ALLREDUCE=0"}));
  parsed = Parse({"-np", "2", "--mpi", "--stall-check", "--log-with-timestamp", "--no-mpi-threads-disable",
                  "--hierarchical-allreduce", "--no-hierarchical-allgather", "--torus-allreduce", "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->exports,
            (std::vector<std::string>{"HOROVOD_STALL_CHECK_DISABLE=0", "HOROVOD_LOG_HIDE_TIME=0",
                                      "HOROVOD_MPI_THREADS_DISABLE=0", "HOROVOD_HIERARCHICAL_ALLREDUCE=1",
                                      "HOROVOD_HIERARCHICAL_ALLGATHER=0", "HOROVOD_TORUS_ALLREDUCE=1"}));
}

TEST(CommandLine, TwoOptionsOfOneSettingAreAnError) {
  EXPECT_EQ(Parse({"-np", "2", "--hierarchical-allgather", "--no-hierarchical-allgather", "prog"}).error,
            "--hierarchical-allgather and --no-hierarchical-allgather: give one of them");
  EXPECT_EQ(Parse({"-np", "2", "--log-with-timestamp", "--log-hide-timestamp", "prog"}).error,
            "--log-with-timestamp and --log-hide-timestamp: give one of them");
  EXPECT_EQ(Parse({"-np", "2", "--timeline-filename", "t.json", "--timeline-mark-cycles",
                   "--no-timeline-mark-cycles", "prog"})
                .error,
            "--timeline-mark-cycles and --no-timeline-mark-cycles: give one of them");
}

TEST(CommandLine, HorovodrunsValuesAreChecked) {
  EXPECT_EQ(Parse({"-np", "2", "--log-level", "verbose", "prog"}).error,
            "--log-level: 'verbose' is not a log level (TRACE, DEBUG, INFO, WARNING, ERROR, FATAL)");
  EXPECT_EQ(Parse({"-np", "2", "--thread-affinity", "0,x", "prog"}).error,
            "--thread-affinity: '0,x' is not core ids separated by commas, one per local rank (0,1)");
  EXPECT_EQ(Parse({"-np", "2", "--num-nccl-streams", "0", "prog"}).error,
            "--num-nccl-streams: 0 is out of range (1 to 64)");
  EXPECT_EQ(Parse({"-np", "2", "--gloo-timeout-seconds", "0", "prog"}).error,
            "--gloo-timeout-seconds: 0 is out of range (1 to 86400)");
  EXPECT_EQ(Parse({"-np", "2", "--stall-check-shutdown-time-seconds", "-1", "prog"}).error,
            "--stall-check-shutdown-time-seconds: -1 is out of range (0 to 86400)");
  EXPECT_EQ(Parse({"-np", "2", "-x", "NCCL_IB_DISABLE=0", "--tcp", "prog"}).error,
            "-x NCCL_IB_DISABLE: --tcp sets it too; give one of them");
}

TEST(CommandLine, OutputStampsAndStartTimeout) {
  ParsedCommandLine parsed =
      Parse({"-np", "2", "-prefix-timestamp", "--disable-cache", "prog"}, {{"HOROVOD_START_TIMEOUT", "7"}});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_TRUE(parsed.options->prefix_timestamp);
  EXPECT_EQ(parsed.options->start_timeout_s, 7);
  parsed = Parse({"-np", "2", "--start-timeout", "9", "prog"}, {{"HOROVOD_START_TIMEOUT", "x"}});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->start_timeout_s, 9);
  EXPECT_EQ(Parse({"-np", "2", "prog"}, {{"HOROVOD_START_TIMEOUT", "soon"}}).error,
            "HOROVOD_START_TIMEOUT in hvdrun's environment: 'soon' is not a whole number");
}

// Issue reproducers: an option's empty value never takes the next option, and switches take no value.
TEST(CommandLine, EmptyValuesAndSwitchValuesAreRefused) {
  EXPECT_EQ(Parse({"-np", "1", "--output-filename", "", "--gloo", "true"}).error,
            "--output-filename: the value is empty; expected DIR");
  EXPECT_EQ(Parse({"-np", "1", "--results", "", "--hostfile", "hf.txt", "true"}).error,
            "--results: the value is empty; expected DIR");
  EXPECT_EQ(Parse({"-np", "1", "--start-timeout", "", "--heartbeat-timeout", "5", "true"}).error,
            "--start-timeout: the value is empty; expected S");
  EXPECT_EQ(Parse({"-np", "1", "--results=", "--hostfile=hf.txt", "true"}).error,
            "--results: the value is empty; expected DIR");
  EXPECT_EQ(
      Parse({"-np", "1", "--mpi", "--dry-run=no", "true"}).error,
      "--dry-run: a switch, which takes no value ('--dry-run=no'); give --dry-run alone, or leave it out");
  EXPECT_EQ(Parse({"-np", "1", "-np", "2", "true"}).error, "-np: given twice ('1', then '2'); give it once");
  EXPECT_EQ(Parse({"-np", "1", "--hostfile"}).error,
            "--hostfile: expects a value (FILE) after it; none was given");
  EXPECT_EQ(
      Parse({"-np", "1", "--verbose=yes", "true"}).error,
      "--verbose: a switch, which takes no value ('--verbose=yes'); give --verbose alone, or leave it out");
}

// Issue reproducers: horovodrun's spellings that went wrong quietly.
TEST(CommandLine, HorovodrunsSpellingsRunAndMistakesNeverEndInHelp) {
  ScratchDir dir;
  const std::string hostfile = dir.WriteFile("myhostfile", "localhost slots=2\n");
  ParsedCommandLine parsed =
      Parse({"-np", "2", "-hostfile", hostfile, "-prefix-timestamp", "python", "train.py"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->hosts, (std::vector<HostSlots>{{"localhost", 2}}));
  EXPECT_TRUE(parsed.options->prefix_timestamp);
  parsed = Parse({"-np=2", "--fusion", "8", "--cycle", "2", "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->exports,
            Joined(kGlooControllerVariables, {"HOROVOD_FUSION_THRESHOLD=8388608", "HOROVOD_CYCLE_TIME=2"}));
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-hostfle", "h", "true"}, {"--no", "true"}, {"-h", "--bogus"}, {"--help=1"}, {"--helpp"}}) {
    parsed = Parse(args);
    EXPECT_EQ(parsed.exit_code, 2) << args[0];
    EXPECT_FALSE(parsed.error.empty()) << args[0];
  }
}

TEST(CommandLine, TheConfigFileSetsWhatTheCommandLineDoesNot) {
  ScratchDir dir;
  const std::string config = dir.WriteFile("cfg.yaml",
                                           "controller: mpi\n"
                                           "params:\n"
                                           "  fusion_threshold_mb: 32\n"
                                           "  cycle_time_ms: 3.5\n"
                                           "  hierarchical_allgather: true\n"
                                           "autotune:\n"
                                           "  enabled: false\n"
                                           "timeline:\n"
                                           "  filename: tl.json\n"
                                           "  mark_cycles: true\n"
                                           "stall_check:\n"
                                           "  enabled: false\n"
                                           "  warning_time_seconds: 10\n"
                                           "library_options:\n"
                                           "  gloo_timeout_seconds: 40\n"
                                           "  thread_affinity:\n"
                                           "logging:\n"
                                           "  level: info\n"
                                           "  with_timestamp: true\n");
  ParsedCommandLine parsed =
      Parse({"-np", "2", "--config-file", config, "--cycle-time-ms", "1", "--gloo", "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->backend, BackendKind::kGloo);
  EXPECT_EQ(parsed.options->timeline_file, "tl.json");
  EXPECT_TRUE(parsed.options->timeline_mark_cycles);
  EXPECT_EQ(
      parsed.options->exports,
      Joined(kGlooControllerVariables,
             {"HOROVOD_CYCLE_TIME=1", "HOROVOD_FUSION_THRESHOLD=33554432", "HOROVOD_HIERARCHICAL_ALLGATHER=1",
              "HOROVOD_STALL_CHECK_DISABLE=1", "HOROVOD_STALL_CHECK_TIME_SECONDS=10",
              "HOROVOD_GLOO_TIMEOUT_SECONDS=40", "HOROVOD_LOG_LEVEL=INFO", "HOROVOD_LOG_HIDE_TIME=0"}));
  parsed = Parse({"-np", "2", "--config-file", config, "prog"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->backend, BackendKind::kMpi);
  EXPECT_EQ(parsed.options->backend_reason, config + ":1: controller");
}

TEST(CommandLine, ConfigFileErrorsNameTheFileLineAndKey) {
  ScratchDir dir;
  auto error = [&](const std::string& yaml) {
    return Parse({"-np", "2", "--config-file", dir.WriteFile("c.yaml", yaml), "prog"}).error;
  };
  const std::string file = dir.path() + "/c.yaml";
  EXPECT_EQ(error("autotune:\n  gaussian_process_noise: 2\n"),
            file + ":2: autotune.gaussian_process_noise: '2' is not a number from 0 to 1");
  EXPECT_EQ(
      error("params:\n  fusion_treshold_mb: 8\n"),
      "--config-file: " + file +
          ":2: params.fusion_treshold_mb: not a key of horovodrun's config file (params: "
          "fusion_threshold_mb, "
          "cycle_time_ms, cache_capacity, hierarchical_allreduce, hierarchical_allgather, torus_allreduce)");
  EXPECT_EQ(error("params:\n  cycle_time_ms: fast\n"),
            file + ":2: params.cycle_time_ms: 'fast' is not a number of milliseconds from 0 to 60000");
  EXPECT_EQ(error("stall_check:\n  enabled: maybe\n"),
            "--config-file: " + file + ":2: stall_check.enabled: 'maybe' is not true or false");
  EXPECT_EQ(
      error("controller: jsrun\n"),
      "--config-file: " + file + ":1: controller: 'jsrun' is not a controller hvdrun has (gloo or mpi)");
  EXPECT_EQ(
      error("tuning:\n  x: 1\n"),
      "--config-file: " + file +
          ":1: tuning: not a section of horovodrun's config file (controller, params, autotune, timeline, "
          "stall_check, library_options, logging)");
  EXPECT_EQ(error("params: [1, 2\n").rfind("--config-file: " + file + ":", 0), 0u);
  EXPECT_EQ(Parse({"-np", "2", "--config-file", dir.path() + "/none.yaml", "prog"}).error,
            "--config-file: cannot read '" + dir.path() + "/none.yaml': No such file or directory");
}

TEST(CommandLine, VersionAndHelpExitZero) {
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
  EXPECT_NE(printed.find("-hostfile"), std::string::npos);
  // Old spellings and refused options are not offered.
  EXPECT_EQ(printed.find("--log-hide-timestamp"), std::string::npos);
  EXPECT_EQ(printed.find("--jsrun"), std::string::npos);
  for (const char* line_start : {"\n  -np, --num-proc N", "\n  -v, --version"}) {
    EXPECT_NE(printed.find(line_start), std::string::npos) << line_start;
  }

  testing::internal::CaptureStdout();
  ParsedCommandLine short_version = Parse({"-v"});
  EXPECT_EQ(testing::internal::GetCapturedStdout(), std::string("hvdrun ") + kVersion + "\n");
  EXPECT_EQ(short_version.exit_code, 0);
}

}  // namespace
}  // namespace hvdrun
