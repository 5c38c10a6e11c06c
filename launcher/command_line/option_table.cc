#include "launcher/command_line/option_table.h"

#include <algorithm>
#include <sstream>

#include "common/env_names.h"
#include "launcher/command_line/option_value_checks.h"

namespace hvdrun {
namespace {

OptionSyntax Switch(std::vector<std::string> names) {
  return {std::move(names), OptionKind::kSwitch, "", false};
}
OptionSyntax Value(std::vector<std::string> names, std::string value_name, bool may_be_empty = false) {
  return {std::move(names), OptionKind::kValue, std::move(value_name), may_be_empty};
}
OptionSyntax List(std::vector<std::string> names, std::string value_name) {
  return {std::move(names), OptionKind::kList, std::move(value_name), false};
}
OptionSyntax Pair(std::vector<std::string> names, std::string value_names) {
  return {std::move(names), OptionKind::kPair, std::move(value_names), false};
}

// A switch that sets a variable for every rank, and its config key.
OptionRow VariableSwitch(std::vector<std::string> names, const char* help, const char* variable,
                         const char* constant, const char* config_key, bool config_when) {
  OptionRow row;
  row.syntax = Switch(std::move(names));
  row.help = help;
  row.variable = variable;
  row.constant = constant;
  row.config_key = config_key;
  row.config_when = config_when;
  return row;
}

// A value option that sets a variable for every rank after `check`.
OptionRow VariableValue(OptionSyntax syntax, const char* help, const char* variable, ValueCheck check,
                        const char* config_key) {
  OptionRow row;
  row.syntax = std::move(syntax);
  row.help = help;
  row.variable = variable;
  row.check = check;
  row.config_key = config_key;
  return row;
}

OptionRow Field(OptionSyntax syntax, FlagField field, const char* help) {
  OptionRow row;
  row.syntax = std::move(syntax);
  row.help = help;
  row.field = field;
  return row;
}

OptionRow Section(OptionRow row, const char* section) {
  row.section = section;
  return row;
}

OptionRow InSetting(OptionRow row, const char* setting, const char* constant = nullptr) {
  row.setting = setting;
  if (constant != nullptr) row.constant = constant;
  return row;
}

OptionRow WithConfig(OptionRow row, const char* key, bool when = true) {
  row.config_key = key;
  row.config_when = when;
  return row;
}

std::vector<OptionRow> HostRows() {
  return {
      Section(Field(Value({"-np", "--num-proc"}, "N"), &LaunchFlags::num_proc,
                    "Number of processes (ranks). Default: every slot of the hosts"),
              "Ranks and hosts"),
      Field(
          Value({"-H", "--hosts"}, "HOSTS"), &LaunchFlags::hosts,
          "Hosts and their slots: [user@]host[:slots],... (IPv6 as [addr]:slots; user@ overrides --ssh-user "
          "for that host). Default: localhost with -np slots"),
      Field(Value({"-hostfile", "--hostfile"}, "FILE"), &LaunchFlags::hostfile,
            "File of '[user@]host slots=N [max_slots=M]' lines and # comments (horovodrun's and mpirun's "
            "format)"),
      Field(Value({"--launcher"}, "ssh|slurm|local"), &LaunchFlags::launcher,
            "How each host's agent starts: ssh (a child process here, SSH elsewhere), slurm (srun inside a "
            "Slurm allocation; hosts, slots and -np from the allocation unless -H/--hostfile or -np say "
            "otherwise) or local (all on this machine). Default: slurm inside an allocation (SLURM_JOB_ID "
            "set) without -H/--hostfile, else ssh"),
  };
}

std::vector<OptionRow> ElasticRows() {
  return {
      Section(Field(Value({"--min-np", "--min-num-proc"}, "N"), &LaunchFlags::min_np,
                    "An elastic job (docs/elastic.md): a failing rank or host does not stop it while at "
                    "least N slots run; the ranks re-form without it. Default with "
                    "--host-discovery-script: -np"),
              "Elastic jobs (horovodrun's; the ranks use hvd.elastic, the controller Gloo)"),
      Field(Value({"--max-np", "--max-num-proc"}, "N"), &LaunchFlags::max_np,
            "At most N ranks in an elastic job; with --host-discovery-script it grows up to N as hosts or "
            "slots are added (default: no bound)"),
      Field(Value({"--host-discovery-script"}, "FILE"), &LaunchFlags::host_discovery_script,
            "An elastic job's hosts: the program FILE, run every second, prints 'host[:slots]' lines; ranks "
            "start on hosts it adds and leave hosts it drops, the job re-forming at the ranks' next commit; "
            "a failing run or bad output is one warning and the job keeps its hosts"),
      Field(Value({"--slots-per-host"}, "N"), &LaunchFlags::slots_per_host,
            "Slots of a discovered host whose line gives none (default 1)"),
      Field(Value({"--elastic-timeout"}, "S"), &LaunchFlags::elastic_timeout,
            "Seconds an elastic job waits with fewer than --min-np slots before it fails, and a rank for its "
            "next round (default: HOROVOD_ELASTIC_TIMEOUT, else 600)"),
      Field(Value({"--reset-limit"}, "N"), &LaunchFlags::reset_limit,
            "An elastic job fails at its N+1-th re-formation, whether ranks were lost or hosts left or were "
            "added (Horovod's count of resets; default: no limit)"),
      Field(Pair({"--blacklist-cooldown-range"}, "MIN MAX"), &LaunchFlags::blacklist_cooldown_range,
            "A failed host may come back after MIN*2^n seconds plus up to MIN more, at most MAX (n: its "
            "failures; 1 <= MIN <= MAX <= 3600). Default: a failed host is out for good"),
  };
}

std::vector<OptionRow> ControllerRows() {
  return {
      Section(InSetting(Field(Switch({"--gloo"}), &LaunchFlags::gloo,
                              "The ranks use libhvdrun's Gloo backend; hvdrun runs the job's rendezvous "
                              "service. The default controller, unless HOROVOD_CONTROLLER says mpi or "
                              "--mpi-args/--binding-args are given (docs/horovodrun.md)"),
                        "controller"),
              "Controller (libhvdrun's backend for the ranks)"),
      InSetting(
          Field(Switch({"--mpi"}), &LaunchFlags::mpi,
                "Open MPI's mpirun starts the ranks, as horovodrun --mpi does; they use libhvdrun's MPI "
                "backend, and hvdrun still collects their output, exit statuses and reports"),
          "controller"),
      InSetting(Field(Switch({"--nccl"}), &LaunchFlags::nccl,
                      "The ranks use libhvdrun's NCCL backend for GPU memory (host memory over Gloo)"),
                "controller"),
      InSetting(Field(Switch({"--jsrun"}), &LaunchFlags::jsrun, nullptr), "controller"),
      Field(
          Value({"--mpi-args"}, "ARGS", true), &LaunchFlags::mpi_args,
          "More mpirun arguments, one string split into words as a shell would (quotes and \\ work; nothing "
          "is expanded); implies --mpi when no controller is given"),
      Field(Value({"--binding-args"}, "ARGS", true), &LaunchFlags::binding_args,
            "mpirun's process binding, in place of '-bind-to none -map-by slot' (horovodrun's); implies "
            "--mpi when no controller is given"),
      Field(Switch({"--dry-run"}), &LaunchFlags::dry_run,
            "With --mpi: print the mpirun command hvdrun would run; start nothing"),
  };
}

std::vector<OptionRow> OutputRows() {
  return {
      Section(Field(Value({"--output-filename"}, "DIR"), &LaunchFlags::output_dir,
                    "Also write each rank's output, exactly, to DIR/rank.N/stdout and DIR/rank.N/stderr, N "
                    "padded with zeros as horovodrun pads it (rank.00 ... rank.10 for 11 ranks)"),
              "Output"),
      Field(Switch({"-prefix-timestamp", "--prefix-output-with-timestamp"}), &LaunchFlags::prefix_timestamp,
            "Stamp every output line of the ranks with the local time, as horovodrun does"),
      Field(Switch({"--verbose"}), &LaunchFlags::verbose,
            "Say what hvdrun does: the controller and why, the launcher, agents, rank placement, "
            "MASTER_ADDR/MASTER_PORT"),
      Field(Value({"--results"}, "DIR"), &LaunchFlags::results_dir,
            "Write plan.json, ranks/rank-N.json (each rank's report), summary.json and hosts/<host>.json "
            "to DIR"),
      Field(Value({"--cwd"}, "DIR"), &LaunchFlags::working_dir,
            "Working directory of the ranks on every host (default: hvdrun's)"),
      Field(List({"-x"}, "NAME[=VALUE]"), &LaunchFlags::exports,
            "Export NAME (hvdrun's value) or NAME=VALUE to every rank; repeatable"),
  };
}

std::vector<OptionRow> CheckRows() {
  return {
      Section(Field(Switch({"--check"}), &LaunchFlags::check,
                    "Check the hosts: start each one's agent, print its facts (OS, kernel, CPUs, memory, "
                    "NICs, GPUs, MPI/Gloo/NCCL/CUDA versions) and the controller a job would use, start no "
                    "rank; exit 0 when every host answers with the same versions"),
              "Checks and timeouts"),
      Field(Switch({"-cb", "--check-build"}), &LaunchFlags::check_build,
            "Print horovodrun's table of the frameworks, controllers and tensor operations this hvdrun has, "
            "and exit"),
      Field(Value({"--start-timeout"}, "S"), &LaunchFlags::start_timeout,
            "Seconds every host's agent has to start (default: HOROVOD_START_TIMEOUT, else 30)"),
      Field(Value({"--heartbeat-timeout"}, "S"), &LaunchFlags::heartbeat_timeout,
            "Seconds of silence after which an agent, or the launcher, counts as lost (default 30)"),
      Field(Switch({"--disable-cache"}), &LaunchFlags::disable_cache,
            "Accepted for horovodrun's users: hvdrun keeps no cache of its start-up checks, which run on "
            "every start"),
  };
}

std::vector<OptionRow> SshRows() {
  return {
      Section(Field(Value({"--ssh-user"}, "USER"), &LaunchFlags::ssh_user,
                    "User on hosts that are not this machine (default: ~/.ssh/config's, else your own)"),
              "SSH and agents"),
      Field(Value({"-p", "--ssh-port"}, "PORT"), &LaunchFlags::ssh_port,
            "SSH port of the hosts (default: ~/.ssh/config's, else 22)"),
      Field(Value({"-i", "--ssh-identity-file"}, "FILE"), &LaunchFlags::ssh_identity_file,
            "Private key to log in with, after the ssh-agent's keys and before ~/.ssh/id_*"),
      Field(Value({"--ssh-known-hosts"}, "FILE"), &LaunchFlags::ssh_known_hosts,
            "known_hosts file to check host keys against (default ~/.ssh/known_hosts)"),
      Field(Switch({"--ssh-accept-new-host-keys"}), &LaunchFlags::ssh_accept_new_host_keys,
            "Trust hosts missing from known_hosts and record their keys (a changed key is always refused)"),
      Field(Value({"--agent-path"}, "PATH"), &LaunchFlags::agent_path,
            "hvdrun-agent on the remote hosts (default: hvdrun-agent in their PATH, else the path of this "
            "machine's hvdrun-agent)"),
      Section(Field(List({"--network-interface", "--network-interfaces"}, "NAME"),
                    &LaunchFlags::network_interfaces,
                    "Network interface for the job's traffic (rendezvous, MASTER_ADDR, Gloo, NCCL, MPI); "
                    "repeatable or comma-separated: each host uses the first it has. Default: the interface "
                    "the hosts reach this machine by"),
              "Network"),
      VariableSwitch({"--tcp"},
                     "Only TCP between hosts: NCCL_IB_DISABLE=1 for the ranks, as horovodrun sets it",
                     env::kNcclIbDisable, "1", nullptr, true),
  };
}

std::vector<OptionRow> TuningRows() {
  return {
      Section(
          VariableValue(Value({"--fusion-threshold-mb"}, "MB"),
                        "Tensor fusion: the largest fused buffer, in MiB; 0 turns fusion off (default 128)",
                        env::kHorovodFusionThreshold, &CheckFusionThreshold, "params.fusion_threshold_mb"),
          "libhvdrun's tuning (Horovod's variables for the ranks)"),
      VariableValue(Value({"--cycle-time-ms"}, "MS"), "Negotiation cycle, in ms (default 1)",
                    env::kHorovodCycleTime, &CheckCycleTime, "params.cycle_time_ms"),
      VariableValue(Value({"--cache-capacity"}, "N"),
                    "Response cache, in entries; 0 turns it off (default 1024)", env::kHorovodCacheCapacity,
                    &CheckCacheCapacity, "params.cache_capacity"),
      VariableSwitch(
          {"--hierarchical-allreduce"},
          "On several hosts with as many ranks each, over Gloo: reduce inside each host through "
          "shared memory, then across hosts one slice per local rank (the default where it applies)",
          env::kHorovodHierarchicalAllreduce, "1", "params.hierarchical_allreduce", true),
      VariableSwitch({"--no-hierarchical-allreduce"}, "Reduce across hosts in one flat ring over every rank",
                     env::kHorovodHierarchicalAllreduce, "0", "params.hierarchical_allreduce", false),
      VariableSwitch({"--hierarchical-allgather"},
                     "Horovod's hierarchical allgather (libhvdrun has none: one line says so, the job runs)",
                     env::kHorovodHierarchicalAllgather, "1", "params.hierarchical_allgather", true),
      VariableSwitch({"--no-hierarchical-allgather"}, "Allgather in one step (what libhvdrun does)",
                     env::kHorovodHierarchicalAllgather, "0", "params.hierarchical_allgather", false),
      VariableSwitch({"--torus-allreduce"},
                     "Horovod's 2D NCCL torus allreduce (libhvdrun has none: one line says so, the job runs)",
                     env::kHorovodTorusAllreduce, "1", "params.torus_allreduce", true),
      VariableSwitch({"--no-torus-allreduce"}, "No torus allreduce (what libhvdrun does)",
                     env::kHorovodTorusAllreduce, "0", "params.torus_allreduce", false),
      Field(Value({"--compression"}, "FORMAT"), &LaunchFlags::compression,
            "Gradient compression: float32 sums and averages travel as none (default), fp16, bf16, fp8 "
            "(E4M3; also fp8-e4m3) or fp8-e5m2 (HVDRUN_COMPRESSION for the ranks)"),
      Field(
          Value({"--fp8-scaling"}, "on|off"), &LaunchFlags::fp8_scaling,
          "With fp8 compression: scale blocks of values by a power of two shared by every rank (default on)"),
      Field(Value({"--fp8-safe-cast"}, "on|off"), &LaunchFlags::fp8_safe_cast,
            "With fp8 compression: saturate beyond fp8's range and keep subnormals (default on)"),
      Field(Value({"--fp8-float32-sums"}, "on|off"), &LaunchFlags::fp8_float32_sums,
            "With fp8 compression: sum every rank's values in float32, never in fp8 (default on)"),
      Field(Value({"--error-feedback"}, "on|off"), &LaunchFlags::error_feedback,
            "With fp8 compression: add what encoding lost to the same tensor's next values (default on)"),
      Field(Value({"--shared-memory"}, "on|off"), &LaunchFlags::shared_memory,
            "Allreduces of a job whose ranks are all on one host go through its shared memory, not the "
            "backend (default on; HVDRUN_SHM for the ranks)"),
  };
}

// horovodrun's autotuning (docs/autotune.md); the config file's autotune section.
std::vector<OptionRow> AutotuneRows() {
  return {
      Section(VariableSwitch({"--autotune"},
                             "Tune the fusion threshold and cycle time while the job runs (Bayesian search), "
                             "then the hierarchical allreduce and the response cache on or off; values set "
                             "explicitly stay fixed",
                             env::kHorovodAutotune, "1", "autotune.enabled", true),
              "Autotuning (horovodrun's)"),
      VariableValue(Value({"--autotune-log-file"}, "FILE"),
                    "Rank 0 writes each sample's setting and score there as CSV (Horovod's columns and more)",
                    env::kHorovodAutotuneLog, nullptr, "autotune.log_file"),
      VariableValue(Value({"--autotune-warmup-samples"}, "N"), "Samples discarded first (default 3)",
                    env::kHorovodAutotuneWarmupSamples, &CheckAutotuneWarmup, "autotune.warmup_samples"),
      VariableValue(Value({"--autotune-steps-per-sample"}, "N"), "Training steps per sample (default 10)",
                    env::kHorovodAutotuneStepsPerSample, &CheckAutotuneSamples, "autotune.steps_per_sample"),
      VariableValue(Value({"--autotune-bayes-opt-max-samples"}, "N"),
                    "Settings scored, the starting one included, before the best is kept (default 20)",
                    env::kHorovodAutotuneBayesOptMaxSamples, &CheckAutotuneSamples,
                    "autotune.bayes_opt_max_samples"),
      VariableValue(Value({"--autotune-gaussian-process-noise"}, "X"),
                    "The scores' noise for the search's Gaussian process, 0 to 1 (default 0.8)",
                    env::kHorovodAutotuneGaussianProcessNoise, &CheckAutotuneNoise,
                    "autotune.gaussian_process_noise"),
  };
}

std::vector<OptionRow> StallAndTimelineRows() {
  return {
      Section(
          VariableSwitch({"--stall-check"}, "Warn of collectives some ranks have not submitted (the default)",
                         env::kHorovodStallCheckDisable, "0", "stall_check.enabled", true),
          "Stall check and timeline"),
      VariableSwitch({"--no-stall-check"}, "No stall warnings, and no stall shutdown",
                     env::kHorovodStallCheckDisable, "1", "stall_check.enabled", false),
      VariableValue(Value({"--stall-check-time", "--stall-check-warning-time-seconds"}, "S"),
                    "Seconds without a completed collective while a rank waits before hvdrun warns, naming "
                    "the tensors, the missing ranks and their state; repeated at that period (default 60)",
                    env::kHorovodStallCheckTime, &CheckSeconds, "stall_check.warning_time_seconds"),
      VariableValue(Value({"--stall-shutdown-time", "--stall-check-shutdown-time-seconds"}, "S"),
                    "Seconds stalled after which hvdrun ends the job, exit 6 (default 0: never; ignored "
                    "below the check time)",
                    env::kHorovodStallShutdownTime, &CheckShutdownSeconds,
                    "stall_check.shutdown_time_seconds"),
      WithConfig(Field(Value({"--timeline-filename"}, "FILE"), &LaunchFlags::timeline_filename,
                       "Record every rank's libhvdrun timeline and merge them into FILE, a Chrome trace for "
                       "Perfetto or chrome://tracing, one process per rank (also: HOROVOD_TIMELINE)"),
                 "timeline.filename"),
      WithConfig(InSetting(Field(Switch({"--timeline-mark-cycles"}), &LaunchFlags::timeline_mark_cycles,
                                 "With --timeline-filename: mark each negotiation cycle in the timeline"),
                           "--timeline-mark-cycles", "1"),
                 "timeline.mark_cycles", true),
      WithConfig(InSetting(Field(Switch({"--no-timeline-mark-cycles"}), &LaunchFlags::timeline_mark_cycles,
                                 "Mark no cycle (the default)"),
                           "--timeline-mark-cycles", "0"),
                 "timeline.mark_cycles", false),
  };
}

std::vector<OptionRow> LibraryRows() {
  return {
      Section(VariableSwitch(
                  {"--mpi-threads-disable"},
                  "MPI without MPI_THREAD_MULTIPLE (libhvdrun never asks for it: MPI_THREAD_SERIALIZED)",
                  env::kHorovodMpiThreadsDisable, "1", "library_options.mpi_threads_disable", true),
              "Library and logging"),
      VariableSwitch({"--no-mpi-threads-disable"},
                     "MPI_THREAD_MULTIPLE as Horovod asks (one line says what "
                     "libhvdrun does instead)",
                     env::kHorovodMpiThreadsDisable, "0", "library_options.mpi_threads_disable", false),
      VariableValue(Value({"--num-nccl-streams"}, "N"),
                    "NCCL streams per runtime (libhvdrun's NCCL backend has one)",
                    env::kHorovodNumNcclStreams, &CheckNcclStreams, "library_options.num_nccl_streams"),
      VariableValue(
          Value({"--thread-affinity"}, "CORES"),
          "Pin each rank's collective thread to a core: one core id per local rank, comma-separated",
          env::kHorovodThreadAffinity, &CheckCoreList, "library_options.thread_affinity"),
      VariableValue(
          Value({"--gloo-timeout-seconds"}, "S"),
          "Seconds libhvdrun's bootstrap and each backend operation wait for the other ranks (default 30)",
          env::kHorovodGlooTimeout, &CheckSeconds, "library_options.gloo_timeout_seconds"),
      VariableValue(Value({"--log-level"}, "LEVEL"),
                    "libhvdrun's messages from LEVEL up: TRACE, DEBUG, INFO, WARNING (default), ERROR, FATAL",
                    env::kHorovodLogLevel, &CheckLogLevelOf, "logging.level"),
      VariableSwitch({"--log-with-timestamp"}, "Stamp libhvdrun's messages with the time",
                     env::kHorovodLogHideTime, "0", "logging.with_timestamp", true),
      VariableSwitch({"--log-without-timestamp"}, "libhvdrun's messages without the time (the default)",
                     env::kHorovodLogHideTime, "1", "logging.with_timestamp", false),
      VariableSwitch({"--log-hide-timestamp"}, nullptr, env::kHorovodLogHideTime, "1", nullptr, true),
      VariableSwitch({"--no-log-hide-timestamp"}, nullptr, env::kHorovodLogHideTime, "0", nullptr, true),
      Section(
          Field(Value({"--config-file"}, "FILE"), &LaunchFlags::config_file,
                "horovodrun's YAML of settings (params, autotune, timeline, stall_check, library_options, "
                "logging, controller); an option on the command line wins over the file"),
          "Configuration and help"),
      Field(Switch({"-h", "--help"}), &LaunchFlags::help, "Print this help and exit"),
      Field(Switch({"-v", "--version"}), &LaunchFlags::version, "Print hvdrun's version and exit"),
  };
}

std::vector<OptionRow> MakeTable() {
  std::vector<OptionRow> table;
  for (auto rows : {HostRows, ElasticRows, ControllerRows, OutputRows, CheckRows, SshRows, TuningRows,
                    AutotuneRows, StallAndTimelineRows, LibraryRows}) {
    std::vector<OptionRow> part = rows();
    table.insert(table.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return table;
}

}  // namespace

const std::vector<OptionRow>& OptionTable() {
  static const std::vector<OptionRow> table = MakeTable();
  return table;
}

const std::vector<OptionSyntax>& OptionTableSyntax() {
  static const std::vector<OptionSyntax> syntax = [] {
    std::vector<OptionSyntax> rows;
    for (const OptionRow& row : OptionTable()) rows.push_back(row.syntax);
    return rows;
  }();
  return syntax;
}

const std::string& CanonicalName(const OptionRow& row) { return row.syntax.names.back(); }

std::string SettingOf(const OptionRow& row) {
  if (row.setting != nullptr) return row.setting;
  if (row.variable != nullptr) return row.variable;
  return CanonicalName(row);
}

Status ApplyOption(const OptionRow& row, const std::string& shown, const std::string& value,
                   LaunchFlags& flags) {
  const std::string& name = CanonicalName(row);
  flags.given.insert(name);
  flags.shown[name] = shown;
  if (row.variable != nullptr) {
    std::string converted = row.constant != nullptr ? row.constant : value;
    if (row.check != nullptr) {
      StatusOr<std::string> checked = row.check(shown, value);
      if (!checked.ok()) return checked.status();
      converted = std::move(checked).value();
    }
    flags.rank_settings.push_back(RankSetting{shown, row.variable, std::move(converted)});
    return Status::Ok();
  }
  if (auto* text = std::get_if<std::string LaunchFlags::*>(&row.field)) {
    flags.*(*text) = value;
  } else if (auto* list = std::get_if<std::vector<std::string> LaunchFlags::*>(&row.field)) {
    (flags.*(*list)).push_back(value);
  } else if (auto* on = std::get_if<bool LaunchFlags::*>(&row.field)) {
    flags.*(*on) = row.constant == nullptr || std::string(row.constant) == "1";
  }
  return Status::Ok();
}

std::string HelpText() {
  constexpr size_t kHelpColumn = 34;
  constexpr size_t kWidth = 100;
  std::ostringstream out;
  out << "usage: hvdrun [options] command [args...]\n\n"
         "Runs a distributed-training job over hosts, one process per rank, as horovodrun does: a "
         "horovodrun\n"
         "command line runs after changing the program's name (docs/horovodrun.md). The options end at the\n"
         "first word that is not one, or at --; the rest is the command, passed to every rank as typed.\n";
  for (const OptionRow& row : OptionTable()) {
    if (row.section != nullptr) out << "\n" << row.section << ":\n";
    if (row.help == nullptr) continue;
    std::string line = " ";
    for (size_t i = 0; i < row.syntax.names.size(); ++i) line += (i > 0 ? ", " : " ") + row.syntax.names[i];
    if (!row.syntax.value_name.empty()) line += " " + row.syntax.value_name;
    if (line.size() + 2 > kHelpColumn) {
      out << line << "\n";
      line.clear();
    }
    line.resize(kHelpColumn, ' ');
    std::istringstream words(row.help);
    bool line_empty = true;
    for (std::string word; words >> word;) {
      if (!line_empty && line.size() + 1 + word.size() > kWidth) {
        out << line << "\n";
        line.assign(kHelpColumn, ' ');
        line_empty = true;
      }
      line += (line_empty ? "" : " ") + word;
      line_empty = false;
    }
    out << line << "\n";
  }
  out << "\nExamples:\n"
         "  hvdrun -np 4 python3 train.py                  four ranks on this machine (Gloo: the default)\n"
         "  hvdrun -np 8 -H server1:4,server2:4 python3 train.py\n"
         "  hvdrun -np 4 -hostfile hosts.txt --output-filename logs/ ./train\n"
         "  hvdrun -np 4 --mpi hvdrun-bench -b 1M -e 64M    the ranks under Open MPI's mpirun\n"
         "  salloc -N 2 --ntasks-per-node=4 hvdrun ./train  hosts, slots and -np from Slurm\n"
         "Every rank gets HVDRUN_RANK, HVDRUN_SIZE, HVDRUN_LOCAL_RANK, ... and the same values under\n"
         "Horovod's (HOROVOD_RANK, ...) and PyTorch's names (RANK, WORLD_SIZE, MASTER_ADDR, ...).\n";
  return out.str();
}

}  // namespace hvdrun
