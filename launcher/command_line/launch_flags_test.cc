#include "launcher/command_line/launch_flags.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/environment_reader.h"
#include "launcher/command_line/controller_choice.h"
#include "launcher/command_line/host_flags.h"
#include "launcher/command_line/tuning_flags.h"

namespace hvdrun {
namespace {

using Variables = std::map<std::string, std::string>;

LaunchFlags Given(LaunchFlags flags, std::initializer_list<const char*> names) {
  for (const char* name : names) flags.given.insert(name);
  return flags;
}

TEST(LaunchFlags, WholeNumbersNameTheFlagAndTheRange) {
  EXPECT_EQ(ResolveWholeNumber("-np", "4", 1, 8).value(), 4);
  EXPECT_EQ(ResolveWholeNumber("-np", "9", 1, 8).status().message(), "-np: 9 is out of range (1 to 8)");
  EXPECT_EQ(ResolveWholeNumber("-np", "four", 1, 8).status().message(), "-np: 'four' is not a whole number");
}

TEST(LaunchFlags, NumbersApplyOnlyWhereGiven) {
  LaunchFlags flags;
  flags.start_timeout = "not looked at";
  LaunchOptions options;
  ASSERT_TRUE(ResolveNumbers(flags, LookupIn({}), options).ok());
  EXPECT_EQ(options.start_timeout_s, 30);
  flags = Given(flags, {"--start-timeout"});
  flags.start_timeout = "5";
  flags.ssh_port = "2222";
  flags.given.insert("--ssh-port");
  ASSERT_TRUE(ResolveNumbers(flags, LookupIn({{"HOROVOD_START_TIMEOUT", "7"}}), options).ok());
  EXPECT_EQ(options.start_timeout_s, 5);
  EXPECT_EQ(options.ssh.port, 2222);
  flags.num_proc = "0";
  flags.given.insert("--num-proc");
  flags.shown["--num-proc"] = "-np";
  EXPECT_EQ(ResolveNumbers(flags, LookupIn({}), options).message(), "-np: 0 is out of range (1 to 1048576)");
}

TEST(LaunchFlags, TheAgentPathDefaultStaysUnlessGiven) {
  LaunchFlags flags;
  LaunchOptions options;
  ASSERT_TRUE(ResolvePlainValues(flags, options).ok());
  EXPECT_EQ(options.remote_agent_path, "hvdrun-agent");
  EXPECT_FALSE(options.remote_agent_path_given);
  flags = Given(flags, {"--agent-path"});
  flags.agent_path = "/opt/hvdrun/bin/hvdrun-agent";
  ASSERT_TRUE(ResolvePlainValues(flags, options).ok());
  EXPECT_EQ(options.remote_agent_path, "/opt/hvdrun/bin/hvdrun-agent");
  EXPECT_TRUE(options.remote_agent_path_given);
  flags.ssh_identity_file = "/nonexistent/key";
  EXPECT_EQ(ResolvePlainValues(flags, options).message().rfind("--ssh-identity-file: cannot read", 0), 0u);
}

TEST(LaunchFlags, SshUserAndIdentityFileMayNotBeEmptyOrMalformed) {
  LaunchFlags flags = Given({}, {"--ssh-identity-file"});
  LaunchOptions options;
  EXPECT_EQ(ResolvePlainValues(flags, options).message(), "--ssh-identity-file: an empty file name");
  flags = Given({}, {"--ssh-user"});
  EXPECT_EQ(ResolvePlainValues(flags, options).message(), "--ssh-user '': an empty user name");
  flags.ssh_user = "a b";
  EXPECT_EQ(ResolvePlainValues(flags, options).message(),
            "--ssh-user 'a b': user names may hold only letters, digits, '-', '.' and '_'");
  flags.ssh_user = "-lroot";
  EXPECT_EQ(ResolvePlainValues(flags, options).message(),
            "--ssh-user '-lroot': a user name cannot start with '-'");
  flags.ssh_user = "lab_user";
  ASSERT_TRUE(ResolvePlainValues(flags, options).ok());
  EXPECT_EQ(options.ssh.user, "lab_user");
}

TEST(LaunchFlags, AnEmptyHostListOrHostfileIsAnErrorNotLocalhost) {
  // `-H ''` once ran the job on localhost, and `-H '' --hostfile f` skipped the "either" check.
  const Variables none;
  LaunchOptions options;
  options.num_proc = 1;
  EXPECT_EQ(ResolveHosts(Given({}, {"--hosts"}), LookupIn(none), options).message(),
            "-H: empty host list (expected host[:slots],...)");
  EXPECT_EQ(ResolveHosts(Given({}, {"--hostfile"}), LookupIn(none), options).message(),
            "--hostfile: an empty file name");
  LaunchFlags both = Given({}, {"--hosts"});
  both.hostfile = "hosts.txt";
  EXPECT_EQ(ResolveHosts(both, LookupIn(none), options).message(), "give either -H or --hostfile, not both");
  EXPECT_EQ(ResolveHosts(Given({}, {"--hosts", "--hostfile"}), LookupIn(none), options).message(),
            "give either -H or --hostfile, not both");
}

TEST(LaunchFlags, TheControllerAndItsOwnFlags) {
  LaunchFlags flags = Given({}, {"--mpi-args"});
  flags.mpi_args = "-mca btl '^openib'";
  LaunchOptions options;
  std::vector<RankSetting> settings;
  ASSERT_TRUE(ResolveController(flags, LookupIn({}), options, settings).ok());
  EXPECT_EQ(options.backend, BackendKind::kMpi);
  EXPECT_EQ(options.backend_reason, "--mpi-args, which are mpirun's");
  EXPECT_EQ(options.mpi_args, (std::vector<std::string>{"-mca", "btl", "^openib"}));
  EXPECT_TRUE(settings.empty());
  flags = Given(flags, {"--nccl"});
  flags.nccl = true;
  EXPECT_EQ(ResolveController(flags, LookupIn({}), options, settings).message(),
            "--mpi-args: only with --mpi (they are mpirun's arguments; the controller is nccl: --nccl)");
  flags = Given({}, {"--dry-run"});
  flags.dry_run = true;
  EXPECT_EQ(ResolveController(flags, LookupIn({}), options, settings)
                .message()
                .rfind("--dry-run: only with --mpi", 0),
            0u);
  flags.jsrun = true;
  EXPECT_EQ(ResolveController(flags, LookupIn({}), options, settings)
                .message()
                .rfind("--jsrun: IBM LSF's jsrun", 0),
            0u);
}

TEST(LaunchFlags, ChooseControllerRuleByRule) {
  LaunchFlags flags;
  EXPECT_EQ(ChooseController(flags, LookupIn({})).value().backend, BackendKind::kGloo);
  EXPECT_EQ(ChooseController(flags, LookupIn({{"HOROVOD_CPU_OPERATIONS", "mpi"}})).value().backend,
            BackendKind::kMpi);
  EXPECT_EQ(
      ChooseController(flags, LookupIn({{"HOROVOD_CONTROLLER", "gloo"}, {"HOROVOD_CPU_OPERATIONS", "mpi"}}))
          .value()
          .backend,
      BackendKind::kGloo);
  flags.exports = {"HOROVOD_CONTROLLER"};  // a bare -x NAME: hvdrun's value
  StatusOr<ControllerChoice> choice = ChooseController(flags, LookupIn({{"HOROVOD_CONTROLLER", "MPI"}}));
  ASSERT_TRUE(choice.ok()) << choice.status().message();
  EXPECT_EQ(choice.value().backend, BackendKind::kMpi);
  EXPECT_EQ(choice.value().reason, "-x HOROVOD_CONTROLLER=MPI");
  flags = Given({}, {"--nccl", "--binding-args"});
  flags.nccl = true;
  EXPECT_EQ(ChooseController(flags, LookupIn({{"HOROVOD_CONTROLLER", "mpi"}})).value().backend,
            BackendKind::kNccl);
}

TEST(LaunchFlags, CheckRunsNoCommandAndAnythingElseNeedsOne) {
  LaunchOptions options;
  EXPECT_EQ(ResolveCommand(LaunchFlags{}, options).message(),
            "no command given (usage: hvdrun [options] command [args...])");
  options.check = true;
  EXPECT_TRUE(ResolveCommand(LaunchFlags{}, options).ok());
  options.command = {"true"};
  EXPECT_EQ(ResolveCommand(LaunchFlags{}, options).message(),
            "--check runs no command, but 'true' was given");
}

TEST(LaunchFlags, HostsFromTheFlagsOrLocalhostWithNpSlots) {
  const Variables none;
  LaunchFlags flags;
  LaunchOptions options;
  EXPECT_EQ(ResolveHosts(flags, LookupIn(none), options).message(),
            "-np: give the number of processes (or hosts with -H or --hostfile)");
  options.num_proc = 3;
  ASSERT_TRUE(ResolveHosts(flags, LookupIn(none), options).ok());
  EXPECT_EQ(options.hosts, (std::vector<HostSlots>{{"localhost", 3, ""}}));
  EXPECT_EQ(options.agent_start, AgentStart::kSsh);

  LaunchOptions listed;
  flags.hosts = "a:2,b:2";
  ASSERT_TRUE(ResolveHosts(flags, LookupIn(none), listed).ok());
  EXPECT_EQ(listed.num_proc, 4);  // every slot
  flags.hostfile = "hosts.txt";
  EXPECT_EQ(ResolveHosts(flags, LookupIn(none), listed).message(), "give either -H or --hostfile, not both");
  flags.hostfile.clear();
  flags = Given(flags, {"--launcher"});
  flags.launcher = "pbs";
  EXPECT_EQ(ResolveHosts(flags, LookupIn(none), listed).message(),
            "--launcher 'pbs': one of ssh, slurm, local");
}

TEST(LaunchFlags, InsideAnAllocationTheLauncherDefaultsToSlurm) {
  const Variables slurm = {{"SLURM_JOB_ID", "42"},
                           {"SLURM_JOB_NODELIST", "n[1-2]"},
                           {"SLURM_TASKS_PER_NODE", "2(x2)"},
                           {"SLURM_NTASKS", "4"}};
  LaunchOptions options;
  ASSERT_TRUE(ResolveHosts(LaunchFlags{}, LookupIn(slurm), options).ok());
  EXPECT_EQ(options.agent_start, AgentStart::kSlurm);
  EXPECT_EQ(options.num_proc, 4);
  ASSERT_TRUE(options.slurm.has_value());
}

TEST(LaunchFlags, InterfacesAreSplitCheckedAndEachKeptOnce) {
  StatusOr<std::vector<std::string>> names = ResolveNetworkInterfaces({"eth0,eth1", "eth0"});
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_EQ(names.value(), (std::vector<std::string>{"eth0", "eth1"}));
  EXPECT_EQ(ResolveNetworkInterfaces({"eth0,"}).status().message(),
            "--network-interface 'eth0,': an empty interface name");
  EXPECT_FALSE(ResolveNetworkInterfaces({"a/b"}).ok());
}

TEST(LaunchFlags, ExportsTakeHvdrunsValueForABareName) {
  const Variables environment = {{"OMP_NUM_THREADS", "4"}};
  StatusOr<std::vector<std::string>> exports =
      ResolveExports({"OMP_NUM_THREADS", "A=1"}, false, LookupIn(environment));
  ASSERT_TRUE(exports.ok()) << exports.status().message();
  EXPECT_EQ(exports.value(), (std::vector<std::string>{"OMP_NUM_THREADS=4", "A=1"}));
  EXPECT_EQ(ResolveExports({"UNSET"}, false, LookupIn(environment)).status().message(),
            "-x UNSET: UNSET is not set in hvdrun's environment");
  EXPECT_EQ(ResolveExports({"1A=2"}, false, LookupIn(environment)).status().message(),
            "-x '1A=2': not a variable name (expected NAME or NAME=VALUE)");
  EXPECT_TRUE(ResolveExports({"HVDRUN_SECRET=x"}, false, LookupIn(environment)).ok());
  EXPECT_FALSE(ResolveExports({"HVDRUN_SECRET=x"}, true, LookupIn(environment)).ok());
}

TEST(LaunchFlags, TheOptionTablesSettingsFollowLibhvdrunsOwn) {
  LaunchFlags flags = Given({}, {"--compression"});
  flags.compression = "fp16";
  flags.rank_settings = {{"--cycle-time-ms", "HOROVOD_CYCLE_TIME", "2.5"}};
  StatusOr<std::vector<RankSetting>> tuning = ResolveTuning(flags, BackendKind::kGloo);
  ASSERT_TRUE(tuning.ok()) << tuning.status().message();
  ASSERT_EQ(tuning->size(), 2u);
  EXPECT_EQ((*tuning)[0].name, "HVDRUN_COMPRESSION");
  EXPECT_EQ((*tuning)[1].name, "HOROVOD_CYCLE_TIME");
  EXPECT_EQ(flags.RankSettingOf("HOROVOD_CYCLE_TIME")->value, "2.5");
  EXPECT_EQ(flags.RankSettingOf("HOROVOD_CACHE_CAPACITY"), nullptr);
}

TEST(LaunchFlags, SharedMemoryIsOnOrOffForAHostMemoryBackend) {
  LaunchFlags flags = Given({}, {"--shared-memory"});
  flags.shared_memory = "maybe";
  EXPECT_EQ(ResolveTuning(flags, BackendKind::kGloo).status().message(),
            "--shared-memory: 'maybe' is not on or off");
  flags.shared_memory = "off";
  EXPECT_EQ(ResolveTuning(flags, BackendKind::kNccl).status().message(),
            "--shared-memory: libhvdrun's path for host memory; give --gloo or --mpi");
  StatusOr<std::vector<RankSetting>> tuning = ResolveTuning(flags, BackendKind::kMpi);
  ASSERT_TRUE(tuning.ok()) << tuning.status().message();
  ASSERT_EQ(tuning->size(), 1U);
  EXPECT_EQ(tuning->back().name, "HVDRUN_SHM");
  EXPECT_EQ(tuning->back().value, "0");
}

TEST(LaunchFlags, HierarchicalAllreduceNeedsSharedMemory) {
  LaunchFlags flags;
  flags.rank_settings = {{"--hierarchical-allreduce", "HOROVOD_HIERARCHICAL_ALLREDUCE", "1"}};
  StatusOr<std::vector<RankSetting>> tuning = ResolveTuning(flags, BackendKind::kMpi);
  ASSERT_TRUE(tuning.ok()) << tuning.status().message();  // libhvdrun says where it cannot apply
  ASSERT_EQ(tuning->size(), 1U);
  flags = Given(flags, {"--shared-memory"});
  flags.shared_memory = "off";
  EXPECT_EQ(ResolveTuning(flags, BackendKind::kGloo).status().message(),
            "--hierarchical-allreduce: reduces inside each host through shared memory, which --shared-memory "
            "off turns off");
  flags.rank_settings = {{"--no-hierarchical-allreduce", "HOROVOD_HIERARCHICAL_ALLREDUCE", "0"}};
  EXPECT_TRUE(ResolveTuning(flags, BackendKind::kGloo).ok());
}

TEST(LaunchFlags, CompressionNeedsAHostMemoryBackendAndSafeguardsNeedFp8) {
  LaunchFlags flags = Given({}, {"--compression"});
  flags.compression = "fp16";
  EXPECT_FALSE(ResolveTuning(flags, BackendKind::kNccl).ok());
  flags = Given(flags, {"--fp8-scaling"});
  flags.fp8_scaling = "off";
  EXPECT_EQ(ResolveTuning(flags, BackendKind::kGloo).status().message(),
            "--fp8-scaling: a safeguard of fp8 compression; give --compression fp8");
  flags.compression = "fp8";
  StatusOr<std::vector<RankSetting>> tuning = ResolveTuning(flags, BackendKind::kGloo);
  ASSERT_TRUE(tuning.ok()) << tuning.status().message();
  EXPECT_EQ(tuning->back().name, "HVDRUN_FP8_SCALING");
  EXPECT_EQ(tuning->back().value, "0");
}

TEST(LaunchFlags, TheTimelineFromTheFlagTheExportsOrTheEnvironment) {
  const Variables environment = {{"HOROVOD_TIMELINE", "/tmp/inherited.json"}};
  LaunchOptions options;
  options.backend = BackendKind::kGloo;
  options.exports = {"A=1", "HOROVOD_TIMELINE=/tmp/exported.json"};
  ASSERT_TRUE(ResolveTimeline(LaunchFlags{}, LookupIn(environment), options).ok());
  EXPECT_EQ(options.timeline_file, "/tmp/exported.json");
  EXPECT_EQ(options.exports, (std::vector<std::string>{"A=1"}));

  LaunchOptions inherited;
  inherited.backend = BackendKind::kGloo;
  ASSERT_TRUE(ResolveTimeline(LaunchFlags{}, LookupIn(environment), inherited).ok());
  EXPECT_EQ(inherited.timeline_file, "/tmp/inherited.json");

  LaunchOptions check;
  check.check = true;
  ASSERT_TRUE(ResolveTimeline(LaunchFlags{}, LookupIn(environment), check).ok());
  EXPECT_EQ(check.timeline_file, "");

  LaunchOptions marks_only;
  marks_only.timeline_mark_cycles = true;
  EXPECT_EQ(ResolveTimeline(LaunchFlags{}, LookupIn({}), marks_only).message(),
            "--timeline-mark-cycles: give --timeline-filename too");
}

TEST(LaunchFlags, RankSettingsJoinTheExportsUnlessMinusXSetsThemToo) {
  LaunchOptions options;
  options.exports = {"A=1"};
  ASSERT_TRUE(AddRankSettings({{"--cache-capacity", "HOROVOD_CACHE_CAPACITY", "0"}}, options).ok());
  EXPECT_EQ(options.exports, (std::vector<std::string>{"A=1", "HOROVOD_CACHE_CAPACITY=0"}));
  EXPECT_EQ(AddRankSettings({{"--cache-capacity", "HOROVOD_CACHE_CAPACITY", "8"}}, options).message(),
            "-x HOROVOD_CACHE_CAPACITY: --cache-capacity sets it too; give one of them");
}

}  // namespace
}  // namespace hvdrun
