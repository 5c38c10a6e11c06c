// Every row of docs/horovodrun.md's tables (horovodrun's habits, options and variables), run on two
// local ranks as the installed hvdrun runs them, checking what the row says: the environment the
// ranks see (hvdrun-test-rank env), what libhvdrun does or says (hvdrun-test-horovod-rank: the
// variables a Horovod script sets, the notes, stalls, timeouts, pinning), the files written and the
// exit code. The docs and the cases are checked against each other: a row without a case, or a case
// of no row, fails.
#include <gtest/gtest.h>
#include <sched.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

// Placeholders in a case's words: the scratch directory, the first core this test may run on, and
// the two rank programs.
constexpr char kDir[] = "{dir}";
constexpr char kCore[] = "{core}";
constexpr char kEnv[] = "{env}";
constexpr char kHorovod[] = "{horovod}";

// Files every case's scratch directory holds.
const char* const kHostfile = "localhost slots=2\n";
const char* const kConfig = "params:\n  fusion_threshold_mb: 32\n  cycle_time_ms: 3.5\n";
const char* const kAutotuneConfig = "autotune:\n  enabled: true\n  warmup_samples: 3\n";

// A stamp as horovodrun's -prefix-timestamp writes it (time.asctime()).
const char* const kAsctime = R"((Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d \d{4})";

struct RowCase {
  std::string row;                    // the row's first `...` in docs/horovodrun.md
  std::string name;                   // gtest's
  std::vector<std::string> args;      // hvdrun's words; {env} and {horovod} start the rank program
  std::vector<std::string> env = {};  // NAME=VALUE in hvdrun's environment
  int exit_code = 0;
  std::vector<std::string> out = {};       // each in stdout
  std::vector<std::string> err = {};       // each in stderr
  std::vector<std::string> no_out = {};    // none in stdout
  std::vector<std::string> no_err = {};    // none in stderr
  std::string out_regex = {};              // a match in stdout
  std::string err_regex = {};              // a match in stderr
  std::vector<std::string> files = {};     // each exists, in the scratch directory
  std::vector<std::string> file_has = {};  // "FILE:TEXT": FILE holds TEXT
  std::vector<std::string> file_lacks = {};
};

void PrintTo(const RowCase& row_case, std::ostream* out) { *out << row_case.name; }

std::string FirstAllowedCore() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (::sched_getaffinity(0, sizeof(cpus), &cpus) != 0) return "0";
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &cpus)) return std::to_string(cpu);
  }
  return "0";
}

std::string Expand(std::string text, const std::string& dir) {
  for (const auto& [placeholder, value] :
       {std::pair<std::string, std::string>{kDir, dir}, {kCore, FirstAllowedCore()}}) {
    for (size_t at = text.find(placeholder); at != std::string::npos;
         at = text.find(placeholder, at + value.size())) {
      text.replace(at, placeholder.size(), value);
    }
  }
  return text;
}

// The first `...` of each row of the tables in docs/horovodrun.md.
std::set<std::string> DocumentedRows() {
  std::ifstream docs(std::string(HVDRUN_TEST_SOURCE_DIR) + "/docs/horovodrun.md");
  std::set<std::string> rows;
  for (std::string line; std::getline(docs, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const size_t end = line.find('`', 3);
    if (end != std::string::npos) rows.insert(line.substr(3, end - 3));
  }
  return rows;
}

class HorovodrunRowTest : public testing::TestWithParam<RowCase> {};

TEST_P(HorovodrunRowTest, DoesWhatTheRowSays) {
  const RowCase& row = GetParam();
  ScratchDir dir;
  dir.WriteFile("myhostfile", kHostfile);
  dir.WriteFile("badhostfile", "localhost:2\n");
  dir.WriteFile("config.yaml", kConfig);
  dir.WriteFile("autotune.yaml", kAutotuneConfig);
  std::vector<std::string> args;
  for (const std::string& word : row.args) {
    if (word == kEnv) {
      args.push_back(TestRankPath());
      args.emplace_back("env");
    } else if (word == kHorovod) {
      args.emplace_back(HVDRUN_TEST_HOROVOD_RANK_PATH);
    } else {
      args.push_back(Expand(word, dir.path()));
    }
  }
  ProcessOptions options;
  options.working_dir = dir.path();
  // The rows' own variables come from the case alone, whatever the test runs under.
  for (const char* name : {"HOROVOD_FUSION_THRESHOLD",
                           "HOROVOD_AUTOTUNE",
                           "HOROVOD_AUTOTUNE_LOG",
                           "HOROVOD_AUTOTUNE_WARMUP_SAMPLES",
                           "HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE",
                           "HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES",
                           "HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE",
                           "HOROVOD_CYCLE_TIME",
                           "HOROVOD_CACHE_CAPACITY",
                           "HOROVOD_HIERARCHICAL_ALLREDUCE",
                           "HOROVOD_HIERARCHICAL_ALLGATHER",
                           "HOROVOD_TORUS_ALLREDUCE",
                           "HOROVOD_TIMELINE",
                           "HOROVOD_TIMELINE_MARK_CYCLES",
                           "HOROVOD_STALL_CHECK_TIME_SECONDS",
                           "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS",
                           "HOROVOD_STALL_CHECK_DISABLE",
                           "HOROVOD_LOG_LEVEL",
                           "HOROVOD_LOG_HIDE_TIME",
                           "HOROVOD_GLOO_TIMEOUT_SECONDS",
                           "HOROVOD_MPI_THREADS_DISABLE",
                           "HOROVOD_NUM_NCCL_STREAMS",
                           "HOROVOD_THREAD_AFFINITY",
                           "HOROVOD_CPU_OPERATIONS",
                           "HOROVOD_CONTROLLER",
                           "HOROVOD_GLOO_IFACE",
                           "HOROVOD_START_TIMEOUT",
                           "HOROVOD_ELASTIC_TIMEOUT",
                           "NCCL_IB_DISABLE",
                           "SLURM_JOB_ID"}) {
    options.unset_env.emplace_back(name);
  }
  for (const std::string& entry : row.env) options.extra_env.push_back(Expand(entry, dir.path()));

  const ProcessResult result = RunHvdrun(args, options);
  EXPECT_EQ(result.exit_code, row.exit_code) << result;
  for (const std::string& text : row.out) {
    EXPECT_NE(result.stdout_text.find(Expand(text, dir.path())), std::string::npos) << text << result;
  }
  for (const std::string& text : row.err) {
    EXPECT_NE(result.stderr_text.find(Expand(text, dir.path())), std::string::npos) << text << result;
  }
  for (const std::string& text : row.no_out) {
    EXPECT_EQ(result.stdout_text.find(text), std::string::npos) << text << result;
  }
  for (const std::string& text : row.no_err) {
    EXPECT_EQ(result.stderr_text.find(text), std::string::npos) << text << result;
  }
  if (!row.out_regex.empty()) {
    EXPECT_TRUE(std::regex_search(result.stdout_text, std::regex(row.out_regex))) << result;
  }
  if (!row.err_regex.empty()) {
    EXPECT_TRUE(std::regex_search(result.stderr_text, std::regex(row.err_regex))) << result;
  }
  for (const std::string& file : row.files) {
    EXPECT_FALSE(ReadFileBytes(dir.path() + "/" + file).empty()) << file;
  }
  for (const auto& [checks, present] : {std::pair{&row.file_has, true}, std::pair{&row.file_lacks, false}}) {
    for (const std::string& check : *checks) {
      const std::string file = ReadFileBytes(dir.path() + "/" + check.substr(0, check.find(':')));
      EXPECT_FALSE(file.empty()) << check;
      EXPECT_EQ(file.find(check.substr(check.find(':') + 1)) != std::string::npos, present) << check;
    }
  }
}

std::vector<RowCase> HabitCases() {
  return {
      {"-np=2", "NpEquals", {"-np=2", kEnv, "HVDRUN_SIZE"}, {}, 0, {"[1]<stdout>:HVDRUN_SIZE=2"}},
      {"-hostfile myhostfile",
       "SingleDashHostfile",
       {"-np", "2", "-hostfile", "myhostfile", kEnv, "HVDRUN_SIZE"},
       {},
       0,
       {"HVDRUN_SIZE=2"}},
      {"--fusion 32",
       "UniquePrefix",
       {"-np", "2", "--fusion", "32", kEnv, "HOROVOD_FUSION_THRESHOLD"},
       {},
       0,
       {"HOROVOD_FUSION_THRESHOLD=33554432"}},
      {"--log",
       "AmbiguousPrefix",
       {"-np", "2", "--log", "INFO", kEnv},
       {},
       2,
       {},
       {"'--log' is ambiguous: it could be"}},
      {"--verbsoe",
       "Misspelt",
       {"-np", "2", "--verbsoe", kEnv},
       {},
       2,
       {},
       {"did you mean --verbose?"},
       {"usage:"}},
      {"--output-filename ''",
       "EmptyValue",
       {"-np", "1", "--output-filename", "", "--gloo", kEnv},
       {},
       2,
       {},
       {"--output-filename: the value is empty; expected DIR"}},
      {"--dry-run=no",
       "SwitchWithValue",
       {"-np", "1", "--mpi", "--dry-run=no", kEnv},
       {},
       2,
       {},
       {"--dry-run: a switch, which takes no value"}},
  };
}

// The autotuning flags: each reaches the ranks as Horovod's variable; the log file's row runs a short
// search (autotune_e2e_test.cc checks it more closely).
std::vector<RowCase> AutotuneCases() {
  return {
      {"--autotune",
       "Autotune",
       {"-np", "2", "--autotune", kEnv, "HOROVOD_AUTOTUNE"},
       {},
       0,
       {"HOROVOD_AUTOTUNE=1"}},
      {"--autotune-log-file FILE",
       "AutotuneLogFile",
       {"-np", "2", "--gloo", "--autotune", "--autotune-log-file", std::string(kDir) + "/tune.csv",
        "--autotune-warmup-samples", "0", "--autotune-steps-per-sample", "1",
        "--autotune-bayes-opt-max-samples", "3", kHorovod, "steps", "12"},
       {},
       0,
       {"rank 0: 12 steps"},
       {"autotune: kept fusion threshold "},
       {},
       {},
       {},
       {},
       {"tune.csv"},
       {"tune.csv:hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,cycle_time_ms,"
        "tensor_fusion_threshold,score,score_spread,chosen\n"}},
      {"--autotune-warmup-samples N",
       "AutotuneWarmupSamples",
       {"-np", "2", "--autotune-warmup-samples", "5", kEnv, "HOROVOD_AUTOTUNE_WARMUP_SAMPLES"},
       {},
       0,
       {"HOROVOD_AUTOTUNE_WARMUP_SAMPLES=5"}},
      {"--autotune-steps-per-sample N",
       "AutotuneStepsPerSample",
       {"-np", "2", "--autotune-steps-per-sample", "4", kEnv, "HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE"},
       {},
       0,
       {"HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE=4"}},
      {"--autotune-bayes-opt-max-samples N",
       "AutotuneBayesOptMaxSamples",
       {"-np", "2", "--autotune-bayes-opt-max-samples", "9", kEnv, "HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES"},
       {},
       0,
       {"HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES=9"}},
      {"--autotune-gaussian-process-noise X",
       "AutotuneGaussianProcessNoise",
       {"-np", "2", "--autotune-gaussian-process-noise", "0.5", kEnv,
        "HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE"},
       {},
       0,
       {"HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE=0.5"}},
  };
}

// The elastic flags (docs/elastic.md): each job runs to its end without a failure.
std::vector<RowCase> ElasticCases() {
  return {
      {"--min-np N",
       "MinNp",
       {"-np", "2", "--min-np", "1", kEnv, "HVDRUN_ELASTIC", "HVDRUN_ROUND"},
       {},
       0,
       {"[1]<stdout>:HVDRUN_ELASTIC=1", "[1]<stdout>:HVDRUN_ROUND=0"}},
      {"--max-np N",
       "MaxNp",
       {"-np", "2", "--min-np", "1", "--max-np", "1", kEnv},
       {},
       2,
       {},
       {"--max-np 1: fewer than -np 2"}},
      // /bin/hostname prints this machine's name: one host, with --slots-per-host's slots.
      {"--slots-per-host N",
       "SlotsPerHost",
       {"-np", "2", "--host-discovery-script", "/bin/hostname", "--slots-per-host", "2", "--start-timeout",
        "5", kEnv, "HVDRUN_SIZE"},
       {},
       0,
       {"[1]<stdout>:HVDRUN_SIZE=2"}},
      {"--host-discovery-script FILE",
       "HostDiscoveryScript",
       {"-np", "1", "--host-discovery-script", "/bin/hostname", "--start-timeout", "5", kEnv,
        "HVDRUN_ELASTIC"},
       {},
       0,
       {"[0]<stdout>:HVDRUN_ELASTIC=1"}},
      {"--elastic-timeout S",
       "ElasticTimeout",
       {"-np", "2", "--min-np", "1", "--elastic-timeout", "7", kEnv, "HVDRUN_ELASTIC_TIMEOUT_SECONDS"},
       {},
       0,
       {"[0]<stdout>:HVDRUN_ELASTIC_TIMEOUT_SECONDS=7"}},
      {"--reset-limit N",
       "ResetLimit",
       {"-np", "2", "--reset-limit", "1", kEnv},
       {},
       2,
       {},
       {"--reset-limit: only for an elastic job; give --min-np or --host-discovery-script too"}},
      {"--blacklist-cooldown-range MIN MAX",
       "BlacklistCooldownRange",
       {"-np", "2", "--min-np", "1", "--blacklist-cooldown-range", "5", "1", kEnv},
       {},
       2,
       {},
       {"--blacklist-cooldown-range 5 1: MIN is above MAX"}},
  };
}

std::vector<RowCase> OptionCases() {
  return {
      {"-h", "Help", {"-h"}, {}, 0, {"usage: hvdrun [options] command"}},
      {"-v", "Version", {"-v"}, {}, 0, {std::string("hvdrun ") + HVDRUN_TEST_VERSION}},
      {"-np N", "Np", {"-np", "2", kEnv, "HVDRUN_SIZE"}, {}, 0, {"[0]<stdout>:HVDRUN_SIZE=2"}},
      {"-cb",
       "CheckBuild",
       {"-cb"},
       {},
       0,
       {"Available Frameworks:", "Available Controllers:", "[X] Gloo", "[ ] DDL"}},
      {"--disable-cache",
       "DisableCache",
       {"-np", "2", "--disable-cache", kEnv, "HVDRUN_SIZE"},
       {},
       0,
       {"HVDRUN_SIZE=2"}},
      {"--start-timeout S",
       "StartTimeout",
       {"-np", "2", "--start-timeout", "5", "--verbose", kEnv},
       {},
       0,
       {},
       {"hvdrun: each host's agent has 5 s to start"}},
      {"--network-interface NAME",
       "NetworkInterface",
       {"-np", "2", "--network-interfaces", "lo", kEnv, "HVDRUN_NETWORK_INTERFACES"},
       {},
       0,
       {"HVDRUN_NETWORK_INTERFACES=lo"}},
      {"--output-filename DIR",
       "OutputFilenamePadded",
       {"-np", "11", "--output-filename", "logs", kEnv, "HVDRUN_RANK"},
       {},
       0,
       {"[10]<stdout>:HVDRUN_RANK=10"},
       {},
       {},
       {},
       {},
       {},
       {"logs/rank.00/stdout", "logs/rank.10/stderr"},
       {"logs/rank.07/stdout:HVDRUN_RANK=7"}},
      {"--verbose",
       "Verbose",
       {"-np", "2", "--verbose", kEnv},
       {},
       0,
       {},
       {"hvdrun: controller gloo (hvdrun's default"}},
      {"--config-file FILE",
       "ConfigFile",
       {"-np", "2", "--config-file", "config.yaml", "--cycle-time-ms", "5", kEnv, "HOROVOD_FUSION_THRESHOLD",
        "HOROVOD_CYCLE_TIME"},
       {},
       0,
       {"HOROVOD_FUSION_THRESHOLD=33554432", "HOROVOD_CYCLE_TIME=5"}},
      {"--config-file FILE",
       "ConfigFileAutotune",
       {"-np", "2", "--config-file", "autotune.yaml", kEnv, "HOROVOD_AUTOTUNE",
        "HOROVOD_AUTOTUNE_WARMUP_SAMPLES"},
       {},
       0,
       {"HOROVOD_AUTOTUNE=1", "HOROVOD_AUTOTUNE_WARMUP_SAMPLES=3"}},
      {"-p PORT", "SshPort", {"-np", "2", "-p", "2222", kEnv, "HVDRUN_SIZE"}, {}, 0, {"HVDRUN_SIZE=2"}},
      {"-i FILE",
       "SshIdentityFile",
       {"-np", "2", "-i", "/nonexistent/key", kEnv},
       {},
       2,
       {},
       {"-i: cannot read '/nonexistent/key'"}},
      {"--fusion-threshold-mb MB",
       "FusionThreshold",
       {"-np", "2", "--fusion-threshold-mb", "8", kEnv, "HOROVOD_FUSION_THRESHOLD"},
       {},
       0,
       {"HOROVOD_FUSION_THRESHOLD=8388608"}},
      {"--cycle-time-ms MS",
       "CycleTime",
       {"-np", "2", "--cycle-time-ms", "2.5", kEnv, "HOROVOD_CYCLE_TIME"},
       {},
       0,
       {"HOROVOD_CYCLE_TIME=2.5"}},
      {"--cache-capacity N",
       "CacheCapacity",
       {"-np", "2", "--cache-capacity", "0", kEnv, "HOROVOD_CACHE_CAPACITY"},
       {},
       0,
       {"HOROVOD_CACHE_CAPACITY=0"}},
      {"--hierarchical-allreduce",
       "HierarchicalAllreduce",
       {"-np", "2", "--hierarchical-allreduce", kEnv, "HOROVOD_HIERARCHICAL_ALLREDUCE"},
       {},
       0,
       {"HOROVOD_HIERARCHICAL_ALLREDUCE=1"}},
      {"--no-hierarchical-allreduce",
       "NoHierarchicalAllreduce",
       {"-np", "2", "--no-hierarchical-allreduce", kEnv, "HOROVOD_HIERARCHICAL_ALLREDUCE"},
       {},
       0,
       {"HOROVOD_HIERARCHICAL_ALLREDUCE=0"}},
      {"--hierarchical-allgather",
       "HierarchicalAllgather",
       {"-np", "2", "--hierarchical-allgather", kHorovod, "allreduce"},
       {},
       0,
       {"[1]<stdout>:rank 1: backend gloo: sum 3"},
       {"[0]<stderr>:libhvdrun: HOROVOD_HIERARCHICAL_ALLGATHER=1: libhvdrun has no hierarchical allgather"},
       {},
       {"[1]<stderr>:libhvdrun: HOROVOD_HIERARCHICAL_ALLGATHER"}},
      {"--no-hierarchical-allgather",
       "NoHierarchicalAllgather",
       {"-np", "2", "--no-hierarchical-allgather", kEnv, "HOROVOD_HIERARCHICAL_ALLGATHER"},
       {},
       0,
       {"HOROVOD_HIERARCHICAL_ALLGATHER=0"}},
      {"--torus-allreduce",
       "TorusAllreduce",
       {"-np", "2", "--torus-allreduce", kHorovod, "allreduce"},
       {},
       0,
       {"sum 3"},
       {"libhvdrun: HOROVOD_TORUS_ALLREDUCE=1: libhvdrun has no torus allreduce"}},
      {"--no-torus-allreduce",
       "NoTorusAllreduce",
       {"-np", "2", "--no-torus-allreduce", kEnv, "HOROVOD_TORUS_ALLREDUCE"},
       {},
       0,
       {"HOROVOD_TORUS_ALLREDUCE=0"}},
      {"--timeline-filename FILE",
       "TimelineFilename",
       {"-np", "2", "--timeline-filename", "tl.json", kHorovod, "allreduce"},
       {},
       0,
       {"sum 3"},
       {},
       {},
       {},
       {},
       {},
       {},
       {"tl.json:\"rank 1"},
       {"tl.json:CYCLE_START"}},
      {"--timeline-mark-cycles",
       "TimelineMarkCycles",
       {"-np", "2", "--timeline-filename", "tl.json", "--timeline-mark-cycles", kHorovod, "allreduce"},
       {},
       0,
       {},
       {},
       {},
       {},
       {},
       {},
       {},
       {"tl.json:CYCLE_START"}},
      {"--no-timeline-mark-cycles",
       "NoTimelineMarkCycles",
       {"-np", "2", "--timeline-filename", "tl.json", "--no-timeline-mark-cycles", kHorovod, "allreduce"},
       {},
       0,
       {},
       {},
       {},
       {},
       {},
       {},
       {},
       {},
       {"tl.json:CYCLE_START"}},
  };
}

const char* const kStallWarning =
    "[0]<stderr>:libhvdrun: stall: 'x' was submitted by rank 0 and waits for rank 1";

std::vector<RowCase> MoreOptionCases() {
  return {
      {"--stall-check",
       "StallCheck",
       {"-np", "2", "--stall-check", "--stall-check-warning-time-seconds", "1", kHorovod, "late", "2.5"},
       {},
       0,
       {"sum 3"},
       {kStallWarning}},
      {"--no-stall-check",
       "NoStallCheck",
       {"-np", "2", "--no-stall-check", "--stall-check-warning-time-seconds", "1", kHorovod, "late", "2.5"},
       {},
       0,
       {"sum 3"},
       {},
       {},
       {"stall:"}},
      {"--stall-check-warning-time-seconds S",
       "StallWarningTime",
       {"-np", "2", "--stall-check-warning-time-seconds", "1", kHorovod, "late", "2.5"},
       {},
       0,
       {"sum 3"},
       {kStallWarning}},
      {"--stall-check-shutdown-time-seconds S",
       "StallShutdownTime",
       {"-np", "2", "--stall-check-warning-time-seconds", "1", "--stall-check-shutdown-time-seconds", "2",
        kHorovod, "late", "20"},
       {},
       6,
       {},
       {"hvdrun: stall: no collective completed for 2 s: stopping every rank"}},
      {"--mpi-threads-disable",
       "MpiThreadsDisable",
       {"-np", "2", "--mpi-threads-disable", kHorovod, "allreduce"},
       {},
       0,
       {"sum 3"},
       {"HOROVOD_MPI_THREADS_DISABLE=1: applies to MPI, and this job's ranks use gloo"}},
      {"--no-mpi-threads-disable",
       "NoMpiThreadsDisable",
       {"-np", "2", "--mpi", "--no-mpi-threads-disable", kHorovod, "allreduce"},
       {},
       0,
       {"backend mpi: sum 3"},
       {"HOROVOD_MPI_THREADS_DISABLE=0: libhvdrun initialises MPI at MPI_THREAD_SERIALIZED"}},
      {"--mpi-args \"ARGS\"",
       "MpiArgs",
       {"-np", "2", "--mpi-args=-mca btl_base_verbose 0", "--dry-run", kEnv},
       {},
       0,
       {"btl_base_verbose"}},
      {"--tcp", "Tcp", {"-np", "2", "--tcp", kEnv, "NCCL_IB_DISABLE"}, {}, 0, {"NCCL_IB_DISABLE=1"}},
      {"--binding-args \"ARGS\"",
       "BindingArgs",
       {"-np", "2", "--binding-args", "-bind-to core -map-by core", "--dry-run", kEnv},
       {},
       0,
       {"-bind-to core -map-by core"},
       {},
       {"-bind-to none"}},
      {"--num-nccl-streams N",
       "NumNcclStreams",
       {"-np", "2", "--num-nccl-streams", "2", kHorovod, "allreduce"},
       {},
       0,
       {"sum 3"},
       {"HOROVOD_NUM_NCCL_STREAMS=2: applies to NCCL (hvdrun --nccl), and this job's ranks use gloo"}},
      {"--thread-affinity CORES",
       "ThreadAffinity",
       {"-np", "2", "--thread-affinity", std::string(kCore) + "," + kCore, kHorovod, "affinity"},
       {},
       0,
       {"rank 0: collective thread on core {core}", "rank 1: collective thread on core {core}"}},
      {"--gloo-timeout-seconds S",
       "GlooTimeout",
       {"-np", "2", "--gloo-timeout-seconds", "1", kHorovod, "late-init", "20"},
       {},
       1,
       {},
       {"rank 0: "}},
      // A rank busy in user code for three such timeouts is waited for, over Gloo and over the host's
      // shared memory; the waiting rank's watchdog names the call while it waits.
      {"--gloo-timeout-seconds S",
       "GlooTimeoutSparesABusyRank",
       {"-np", "2", "--gloo-timeout-seconds", "1", "--stall-check-warning-time-seconds", "1",
        "--shared-memory", "off", kHorovod, "busy", "3"},
       {},
       0,
       {"rank 0: backend gloo: sum 3", "rank 1: backend gloo: sum 3"},
       {"watchdog: rank 0: '(unnamed allreduce 1)' (allreduce, 4 bytes) has been in the gloo backend for "}},
      {"--gloo-timeout-seconds S",
       "GlooTimeoutSparesABusyRankOverSharedMemory",
       {"-np", "2", "--gloo-timeout-seconds", "1", "--stall-check-warning-time-seconds", "1", kHorovod,
        "busy", "3"},
       {},
       0,
       {"rank 0: backend gloo: sum 3", "rank 1: backend gloo: sum 3"},
       {"watchdog: rank 0: '(unnamed allreduce 1)' (allreduce, 4 bytes) has been in the shm backend for "}},
      {"--log-level LEVEL",
       "LogLevel",
       {"-np", "2", "--log-level", "INFO", kHorovod, "allreduce"},
       {},
       0,
       {},
       {"[1]<stderr>:libhvdrun: rank 1 of 2: gloo backend, negotiated, timeout 30 s, allreduces over shm"}},
      {"--log-with-timestamp",
       "LogWithTimestamp",
       {"-np", "2", "--log-with-timestamp", "--torus-allreduce", kHorovod, "allreduce"},
       {},
       0,
       {},
       {},
       {},
       {},
       {},
       R"(\[0\]<stderr>:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] libhvdrun: HOROVOD_TORUS_ALLREDUCE=1)"},
      {"--log-without-timestamp",
       "LogWithoutTimestamp",
       {"-np", "2", "--log-without-timestamp", "--torus-allreduce", kHorovod, "allreduce"},
       {},
       0,
       {},
       {"[0]<stderr>:libhvdrun: HOROVOD_TORUS_ALLREDUCE=1"}},
      {"--log-hide-timestamp",
       "LogHideTimestamp",
       {"-np", "2", "--log-hide-timestamp", kEnv, "HOROVOD_LOG_HIDE_TIME"},
       {},
       0,
       {"HOROVOD_LOG_HIDE_TIME=1"}},
      {"--no-log-hide-timestamp",
       "NoLogHideTimestamp",
       {"-np", "2", "--no-log-hide-timestamp", kEnv, "HOROVOD_LOG_HIDE_TIME"},
       {},
       0,
       {"HOROVOD_LOG_HIDE_TIME=0"}},
      {"-prefix-timestamp",
       "PrefixTimestamp",
       {"-np", "2", "-prefix-timestamp", kEnv, "HVDRUN_RANK"},
       {},
       0,
       {},
       {},
       {},
       {},
       std::string("(^|\n)") + kAsctime + R"(\[1\]<stdout>:HVDRUN_RANK=1)"},
      {"-H HOSTS", "Hosts", {"-H", "localhost:2", kEnv, "HVDRUN_SIZE"}, {}, 0, {"HVDRUN_SIZE=2"}},
      {"-hostfile FILE",
       "Hostfile",
       {"--hostfile", "myhostfile", kEnv, "HVDRUN_SIZE"},
       {},
       0,
       {"HVDRUN_SIZE=2"}},
      {"-hostfile FILE",
       "HostfileInHsForm",
       {"-hostfile", "badhostfile", kEnv},
       {},
       2,
       {},
       {"badhostfile:1: 'localhost:2' is -H's form; a hostfile line is 'host slots=N' (write 'localhost "
        "slots=2')"}},
      {"--gloo",
       "Gloo",
       {"-np", "2", "--gloo", kEnv, "HVDRUN_BACKEND", "HOROVOD_CONTROLLER"},
       {},
       0,
       {"HVDRUN_BACKEND=gloo", "HOROVOD_CONTROLLER=gloo"}},
      {"--mpi",
       "Mpi",
       {"-np", "2", "--mpi", kEnv, "HVDRUN_BACKEND"},
       {},
       0,
       {"[1]<stdout>:HVDRUN_BACKEND=mpi"}},
      {"--jsrun",
       "Jsrun",
       {"-np", "2", "--jsrun", kEnv},
       {},
       2,
       {},
       {"--jsrun: IBM LSF's jsrun is not a launcher"}},
      {"(no controller option)",
       "DefaultController",
       {"-np", "2", "--verbose", kHorovod, "allreduce"},
       {},
       0,
       {"rank 0: backend gloo: sum 3"},
       {"hvdrun: controller gloo (hvdrun's default"}},
  };
}

std::vector<RowCase> VariableCases() {
  return {
      {"HOROVOD_FUSION_THRESHOLD",
       "FusionThresholdVariable",
       {"-np", "2", kHorovod, "allreduce"},
       {"HOROVOD_FUSION_THRESHOLD=bogus"},
       1,
       {},
       {"HOROVOD_FUSION_THRESHOLD='bogus' is not a whole number"}},
      {"HOROVOD_CYCLE_TIME",
       "CycleTimeVariable",
       {"-np", "2", kHorovod, "--set", "HOROVOD_CYCLE_TIME=bogus", "allreduce"},
       {},
       1,
       {},
       {"HOROVOD_CYCLE_TIME='bogus' is not a number of milliseconds"}},
      {"HOROVOD_CACHE_CAPACITY",
       "CacheCapacityVariable",
       {"-np", "2", kHorovod, "allreduce"},
       {"HOROVOD_CACHE_CAPACITY=-1"},
       1,
       {},
       {"HOROVOD_CACHE_CAPACITY='-1' is not a whole number"}},
      {"HOROVOD_HIERARCHICAL_ALLREDUCE",
       "HierarchicalAllreduceVariable",
       {"-np", "2", "--mpi", kHorovod, "--set", "HOROVOD_HIERARCHICAL_ALLREDUCE=1", "allreduce"},
       {},
       0,
       {"sum 3"},
       {"HOROVOD_HIERARCHICAL_ALLREDUCE=1: libhvdrun's hierarchical allreduce runs over gloo only"}},
      {"HOROVOD_HIERARCHICAL_ALLGATHER",
       "HierarchicalAllgatherVariable",
       {"-np", "2", kHorovod, "allreduce"},
       {"HOROVOD_HIERARCHICAL_ALLGATHER=1"},
       0,
       {"sum 3"},
       {"libhvdrun has no hierarchical allgather"}},
      {"HOROVOD_TORUS_ALLREDUCE",
       "TorusAllreduceVariable",
       {"-np", "2", kHorovod, "--set", "HOROVOD_TORUS_ALLREDUCE=1", "allreduce"},
       {},
       0,
       {"sum 3"},
       {"libhvdrun has no torus allreduce"}},
      {"HOROVOD_TIMELINE",
       "TimelineVariable",
       {"-np", "2", kHorovod, "allreduce"},
       {"HOROVOD_TIMELINE={dir}/env.json"},
       0,
       {"sum 3"},
       {},
       {},
       {},
       {},
       {},
       {"env.json"}},
      {"HOROVOD_TIMELINE_MARK_CYCLES",
       "TimelineMarkCyclesVariable",
       {"-np", "2", "-x", "HOROVOD_TIMELINE_MARK_CYCLES=1", kHorovod, "allreduce"},
       {"HOROVOD_TIMELINE={dir}/env.json"},
       0,
       {},
       {},
       {},
       {},
       {},
       {},
       {},
       {"env.json:CYCLE_START"}},
      {"HOROVOD_STALL_CHECK_TIME_SECONDS",
       "StallCheckTimeVariable",
       {"-np", "2", kHorovod, "--set", "HOROVOD_STALL_CHECK_TIME_SECONDS=1", "late", "2.5"},
       {},
       0,
       {"sum 3"},
       {kStallWarning}},
      {"HOROVOD_STALL_SHUTDOWN_TIME_SECONDS",
       "StallShutdownTimeVariable",
       {"-np", "2", kHorovod, "late", "20"},
       {"HOROVOD_STALL_CHECK_TIME_SECONDS=1", "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS=2"},
       6,
       {},
       {"hvdrun: stall: no collective completed for 2 s: stopping every rank"}},
      {"HOROVOD_STALL_CHECK_DISABLE",
       "StallCheckDisableVariable",
       {"-np", "2", kHorovod, "late", "2.5"},
       {"HOROVOD_STALL_CHECK_TIME_SECONDS=1", "HOROVOD_STALL_CHECK_DISABLE=1"},
       0,
       {"sum 3"},
       {},
       {},
       {"stall:"}},
      {"HOROVOD_LOG_LEVEL",
       "LogLevelVariable",
       {"-np", "2", "--torus-allreduce", kHorovod, "allreduce"},
       {"HOROVOD_LOG_LEVEL=error"},
       0,
       {"sum 3"},
       {},
       {},
       {"HOROVOD_TORUS_ALLREDUCE"}},
      {"HOROVOD_LOG_LEVEL",
       "LogLevelVariableChecked",
       {"-np", "2", kHorovod, "--set", "HOROVOD_LOG_LEVEL=loud", "allreduce"},
       {},
       1,
       {},
       {"HOROVOD_LOG_LEVEL='loud' is not a log level"}},
      {"HOROVOD_LOG_HIDE_TIME",
       "LogHideTimeVariable",
       {"-np", "2", kHorovod, "allreduce"},
       {"HOROVOD_LOG_HIDE_TIME=0", "HOROVOD_TORUS_ALLREDUCE=1"},
       0,
       {},
       {},
       {},
       {},
       {},
       R"(\[0\]<stderr>:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] libhvdrun: HOROVOD_TORUS_ALLREDUCE=1)"},
      {"HOROVOD_GLOO_TIMEOUT_SECONDS",
       "GlooTimeoutVariable",
       {"-np", "2", kHorovod, "late-init", "20"},
       {"HOROVOD_GLOO_TIMEOUT_SECONDS=1"},
       1,
       {},
       {"rank 0: "}},
      {"HOROVOD_MPI_THREADS_DISABLE",
       "MpiThreadsDisableVariable",
       {"-np", "2", kHorovod, "allreduce"},
       {"HOROVOD_MPI_THREADS_DISABLE=1"},
       0,
       {"sum 3"},
       {"HOROVOD_MPI_THREADS_DISABLE=1: applies to MPI"}},
      {"HOROVOD_NUM_NCCL_STREAMS",
       "NumNcclStreamsVariable",
       {"-np", "2", kHorovod, "--set", "HOROVOD_NUM_NCCL_STREAMS=3", "allreduce"},
       {},
       0,
       {"sum 3"},
       {"HOROVOD_NUM_NCCL_STREAMS=3: applies to NCCL"}},
      {"HOROVOD_THREAD_AFFINITY",
       "ThreadAffinityVariable",
       {"-np", "2", kHorovod, "affinity"},
       {std::string("HOROVOD_THREAD_AFFINITY=") + kCore + "," + kCore},
       0,
       {"rank 1: collective thread on core {core}"}},
      {"HOROVOD_CPU_OPERATIONS",
       "CpuOperationsGlooUnderMpi",
       {"-np", "2", "--mpi", kHorovod, "--set", "HOROVOD_CPU_OPERATIONS=gloo", "allreduce"},
       {},
       0,
       {"[0]<stdout>:rank 0: backend gloo: sum 3"}},
      {"HOROVOD_CPU_OPERATIONS",
       "CpuOperationsMpiNeedsMpirun",
       {"-np", "2", "--gloo", kHorovod, "--set", "HOROVOD_CPU_OPERATIONS=mpi", "allreduce"},
       {},
       1,
       {},
       {"HOROVOD_CPU_OPERATIONS=mpi: MPI needs ranks that mpirun started"}},
      {"HOROVOD_CONTROLLER",
       "ControllerChoosesMpi",
       {"-np", "2", "--verbose", kHorovod, "allreduce"},
       {"HOROVOD_CONTROLLER=mpi"},
       0,
       {"rank 1: backend mpi: sum 3"},
       {"hvdrun: controller mpi (HOROVOD_CONTROLLER=mpi in hvdrun's environment)"}},
      {"HOROVOD_GLOO_IFACE",
       "GlooIface",
       {"-np", "2", kHorovod, "--set", "HOROVOD_GLOO_IFACE=lo", "allreduce"},
       {},
       0,
       {"sum 3"}},
      {"HOROVOD_GLOO_IFACE",
       "GlooIfaceMissing",
       {"-np", "2", kHorovod, "allreduce"},
       {"HOROVOD_GLOO_IFACE=hvdrun-none0"},
       1,
       {},
       {"no network interface named hvdrun-none0"}},
      {"HOROVOD_START_TIMEOUT",
       "StartTimeoutVariable",
       {"-np", "2", "--verbose", kEnv},
       {"HOROVOD_START_TIMEOUT=7"},
       0,
       {},
       {"each host's agent has 7 s to start"}},
      {"HOROVOD_START_TIMEOUT",
       "StartTimeoutVariableInTheRank",
       {"-np", "2", "-x", "HOROVOD_START_TIMEOUT=0", kHorovod, "allreduce"},
       {},
       1,
       {},
       {"HOROVOD_START_TIMEOUT='0' is not a whole number from 1 to 86400"}},
  };
}

std::vector<RowCase> AllCases() {
  std::vector<RowCase> all;
  for (auto cases : {HabitCases, AutotuneCases, ElasticCases, OptionCases, MoreOptionCases, VariableCases}) {
    std::vector<RowCase> part = cases();
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

// The rows of docs/horovodrun.md and the cases above name each other.
TEST(HorovodrunRows, EveryDocumentedRowHasACaseAndEveryCaseARow) {
  const std::set<std::string> documented = DocumentedRows();
  ASSERT_GT(documented.size(), 80u);
  std::set<std::string> tested;
  for (const RowCase& row_case : AllCases()) tested.insert(row_case.row);
  for (const std::string& row : documented) EXPECT_EQ(tested.count(row), 1u) << "no case for the row " << row;
  for (const std::string& row : tested) {
    EXPECT_EQ(documented.count(row), 1u) << "no row for the case of " << row;
  }
}

INSTANTIATE_TEST_SUITE_P(Rows, HorovodrunRowTest, testing::ValuesIn(AllCases()),
                         [](const testing::TestParamInfo<RowCase>& test_info) {
                           return test_info.param.name;
                         });

}  // namespace
}  // namespace hvdrun::e2e
