// ExperimentConfig: an hvdrun-lab experiment file (YAML, schema in docs/lab.md), parsed and checked.
//
// Parsing checks everything that can be checked from the file alone: unknown keys, duplicate keys,
// wrong types, values out of range, axis names, exclude entries, the host list or hostfile. Every
// error is one line that starts with the place in the file, `path:line:column: ` (1-based), and
// names the key or value at fault. Checks that need the cells (np against slots, NCCL against
// GPUs) are the matrix's (lab/experiment/matrix.h). Relative paths in the file (hostfile, a program named
// with a '/') are taken relative to the file's directory.
#ifndef HVDRUN_LAB_EXPERIMENT_EXPERIMENT_CONFIG_H_
#define HVDRUN_LAB_EXPERIMENT_EXPERIMENT_CONFIG_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/placement/host_spec.h"
#include "hvdrun/status.h"

namespace hvdrun::lab {

// A place in the experiment file, 1-based; line 0 means "no place" (a built-in default).
struct SourcePosition {
  std::string file;
  int line = 0;
  int column = 0;

  // "file:line:column: ", or "file: " without a place; the prefix of every error.
  std::string Prefix() const;
};

// What an axis of the matrix sets in each cell's command.
enum class AxisKind {
  kBackend,         // hvdrun's --gloo, --mpi or --nccl
  kNumProc,         // hvdrun's -np: processes in all
  kProcsPerServer,  // processes on each server (np = servers × this); instead of np
  kServers,         // how many of the experiment's hosts the cell uses, np/servers processes on each
  kProgramFlag,     // a flag of the program: `--flag value`; true: `--flag` alone; false: left out
  kEnvironment,     // an environment variable of every rank (hvdrun -x NAME=VALUE)
  kFusion,          // hvdrun's --fusion-threshold-mb and --cycle-time-ms, from a FusionSetting
  kCompression,     // hvdrun's --compression (and fp8's safeguards), from CompressionSettingArguments
};

// A value of the `fusion` axis: libhvdrun's tensor fusion threshold and negotiation cycle, or
// libhvdrun's autotuning of both (hvdrun --autotune, docs/autotune.md).
struct FusionSetting {
  double threshold_mb = 0;  // MiB; 0: fusion off
  double cycle_ms = 1;
  bool autotune = false;  // neither value given: the job tunes both while it trains
};

// The autotune log's name in a run's directory: a `fusion: autotune` cell runs `hvdrun --autotune
// --autotune-log-file autotune.csv` there (rank 0 writes it in its working directory, which is the
// run's directory when rank 0 runs on the host of hvdrun-lab).
inline constexpr const char* kAutotuneLogFile = "autotune.csv";

// "off" (0 MiB, 1 ms), "on" (libhvdrun's defaults, as current Horovod's: 128 MiB, 1 ms),
// "horovod-0.19" and "horovod-0.20" (what those Horovod versions used: 64 MiB, 5 ms), "MiB/ms"
// ("32/2", whole MiB), or "autotune"; std::nullopt for anything else.
std::optional<FusionSetting> ParseFusionSetting(std::string_view text);

// hvdrun's words for a value of the `compression` axis: a format as hvdrun's --compression takes it
// (vocabulary's ParseCompressionFormat: "none", "fp16", "bf16", "fp8", "fp8-e4m3", "fp8-e5m2"), or
// "fp8-naive", fp8 with every safeguard off (docs/compression.md); std::nullopt for anything else.
std::optional<std::vector<std::string>> CompressionSettingArguments(std::string_view text);

// The values CompressionSettingArguments takes, for messages: "none, fp16, ... or fp8-naive".
std::string CompressionSettingNames();

struct AxisValue {
  std::string text;  // as written (a YAML boolean as "true"/"false")
  bool is_boolean = false;
  int number = 0;        // np, processes_per_server, servers: the value, checked to be a whole number
  FusionSetting fusion;  // fusion: the setting the text names
  SourcePosition position;
};

struct Axis {
  std::string name;  // as written: "backend", "np", "model", "--image-size", "env.OMP_NUM_THREADS"
  AxisKind kind = AxisKind::kProgramFlag;
  std::string target;  // kProgramFlag: the flag; kEnvironment: the variable's name
  std::vector<AxisValue> values;
  bool from_matrix = false;  // false: from `defaults` or hvdrun-lab's own default
  SourcePosition position;
};

// One `exclude` entry: a cell is excluded when, for every axis named, its value is one of those listed.
struct ExcludeRule {
  std::vector<std::pair<std::string, std::vector<std::string>>> conditions;
  SourcePosition position;
};

// Which figures of the ranks' reports (their "summary" objects) the report reads. The defaults are
// hvdrun-trainer's names (docs/trainer.md).
struct FigureNames {
  std::string step_time = "step_time_s";
  double step_time_scale = 1.0;  // multiplies the step-time figure into seconds (1e-6 for microseconds)
  std::string throughput = "img_per_sec";  // per rank
  std::string throughput_unit = "images/s";
  std::string accuracy = "test_accuracy";
  std::string training_time = "wall_s";  // seconds a run's training took (the fusion table's)
};

// The `hvdrun` section: hvdrun's own options, passed to the hvdrun of every run of every cell. Each
// key is one hvdrun flag (kHvdrunOptionKeys); docs/lab.md lists them.
enum class HvdrunOptionKind {
  kText,        // `--flag VALUE`
  kPath,        // `--flag PATH`: relative to the experiment file ("~/" is $HOME), made absolute
  kPort,        // a whole number from 1 to 65535
  kSeconds,     // a whole number of seconds from 1 to 86400, as hvdrun's timeouts take them
  kSwitch,      // true: `--flag` alone; false: left out
  kInterfaces,  // one name or a list: `--flag NAME` for each
};

struct HvdrunOptionKey {
  const char* key;   // in the experiment file
  const char* flag;  // hvdrun's (launcher/launch_options.cc)
  HvdrunOptionKind kind;
};

// Every key of the `hvdrun` section, in the order their flags are given to hvdrun.
inline constexpr HvdrunOptionKey kHvdrunOptionKeys[] = {
    {"ssh_user", "--ssh-user", HvdrunOptionKind::kText},
    {"ssh_port", "--ssh-port", HvdrunOptionKind::kPort},
    {"ssh_identity_file", "--ssh-identity-file", HvdrunOptionKind::kPath},
    {"ssh_known_hosts", "--ssh-known-hosts", HvdrunOptionKind::kPath},
    {"ssh_accept_new_host_keys", "--ssh-accept-new-host-keys", HvdrunOptionKind::kSwitch},
    {"agent_path", "--agent-path", HvdrunOptionKind::kText},
    {"network_interface", "--network-interface", HvdrunOptionKind::kInterfaces},
    {"start_timeout", "--start-timeout", HvdrunOptionKind::kSeconds},
    {"heartbeat_timeout", "--heartbeat-timeout", HvdrunOptionKind::kSeconds},
};

// One key of the `hvdrun` section as the file gives it.
struct HvdrunOption {
  std::string key;
  std::vector<std::string> values;     // as resolved: a path made absolute; "true"/"false" for a switch
  std::vector<std::string> arguments;  // hvdrun's words for it ("--ssh-port", "2222")
  SourcePosition position;
};

struct ExperimentConfig {
  std::string path;  // the experiment file, as given
  std::string text;  // the file's text as read once (`run` keeps it as experiment.yaml)
  std::string name;  // `name`, or the file's name without .yaml; names the results directory
  std::string description;
  // The hosts cells are placed on, in order (a cell with `servers: S` uses the first S). Empty: none
  // given, and every cell runs on localhost with np slots.
  std::vector<HostSlots> hosts;
  SourcePosition hosts_position;
  std::string program;  // as written; see ResolveProgram (lab/experiment/matrix.h)
  SourcePosition program_position;
  std::vector<std::string> args;                         // before the axes' flags
  std::vector<std::pair<std::string, std::string>> env;  // NAME, VALUE for every cell
  // backend, then np or processes_per_server, then servers (always present), then the rest in file order.
  std::vector<Axis> axes;
  std::vector<ExcludeRule> excludes;
  int repeats = 1;
  double timeout_s = 1800;   // per run of a cell; then hvdrun is stopped and the run counts as failed
  int gpus_per_server = -1;  // -1: not declared
  FigureNames figures;
  std::vector<HvdrunOption> hvdrun_options;  // the `hvdrun` section, in kHvdrunOptionKeys order
};

// hvdrun's words for the experiment's `hvdrun` section, given to every run of every cell.
std::vector<std::string> HvdrunOptionArguments(const ExperimentConfig& config);

// Parses experiment text; `path` names the file in errors and anchors its relative paths.
StatusOr<ExperimentConfig> ParseExperiment(std::string_view text, const std::string& path);

// Reads (at most kMaxExperimentFileBytes, lab/experiment/experiment_limits.h) and parses the file
// at `path`; errors read "cannot read experiment 'PATH': REASON" or ParseExperiment's.
StatusOr<ExperimentConfig> LoadExperiment(const std::string& path);

// backend, np, processes_per_server and servers: the axes that place a cell's processes, as
// opposed to those that set the program's flags and environment.
bool IsPlacementAxis(std::string_view name);

// The axis called `name`, or nullptr.
const Axis* FindAxis(const ExperimentConfig& config, std::string_view name);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_EXPERIMENT_EXPERIMENT_CONFIG_H_
