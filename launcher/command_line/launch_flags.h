// LaunchFlags: hvdrun's options as the command line (and --config-file) gave them, before they are
// checked; and ResolveLaunchFlags, which checks them and makes the LaunchOptions a job runs with
// (launcher/launch_options.h).
//
// The options themselves, their names, help and where each value goes, are declared once, in the
// option table (launcher/command_line/option_table.h); ParseCommandLine (command_line.h) fills a
// LaunchFlags from it. ResolveLaunchFlags runs the resolvers in this order, so that of several
// mistakes the first one in this order is reported: whole numbers; the options taken as typed and
// the SSH identity file; the controller (controller_choice.h); the command against --check; the
// hosts (host_flags.h); the network interfaces; the -x exports; the settings for the ranks and
// libhvdrun's tuning (tuning_flags.h); the timeline; then the ranks' settings join the exports.
// Every resolver is a pure function of its inputs but for the environment lookup and the identity
// file's access check.
#ifndef HVDRUN_LAUNCHER_COMMAND_LINE_LAUNCH_FLAGS_H_
#define HVDRUN_LAUNCHER_COMMAND_LINE_LAUNCH_FLAGS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/environment_reader.h"
#include "hvdrun/status.h"
#include "launcher/launch_options.h"

namespace hvdrun {

// A variable an option sets for every rank, and where it came from ("--cycle-time-ms", or
// "cfg.yaml:3: params.cycle_time_ms"), for its errors.
struct RankSetting {
  std::string flag;
  std::string name;
  std::string value;
};

// Every option's value as given (a switch: whether given). Empty: not given, or given empty;
// `given` tells them apart.
struct LaunchFlags {
  // Hosts and ranks.
  std::string num_proc, hosts, hostfile, launcher;
  // The job.
  std::string output_dir, working_dir, results_dir, config_file;
  bool verbose = false, check = false, check_build = false, dry_run = false, disable_cache = false;
  bool prefix_timestamp = false;
  std::vector<std::string> exports, network_interfaces;
  // Agents and SSH.
  std::string start_timeout, heartbeat_timeout, agent_path;
  std::string ssh_user, ssh_port, ssh_identity_file, ssh_known_hosts;
  bool ssh_accept_new_host_keys = false;
  // The controller, and how mpirun runs.
  bool gloo = false, mpi = false, nccl = false, jsrun = false;
  std::string mpi_args, binding_args;
  // libhvdrun's compression and fp8's safeguards (on|off), and its shared-memory path (on|off).
  std::string compression, fp8_scaling, fp8_safe_cast, fp8_float32_sums, error_feedback, shared_memory;
  // Elastic jobs (launcher/command_line/elastic_flags.h); the cooldown range as "MIN MAX".
  std::string min_np, max_np, host_discovery_script, slots_per_host, elastic_timeout, reset_limit;
  std::string blacklist_cooldown_range;
  // The timeline.
  std::string timeline_filename;
  bool timeline_mark_cycles = false;
  // Help and version: printed, and nothing else done.
  bool help = false, version = false;

  // The settings of the options whose values go to the ranks as variables (Horovod's: the fusion
  // threshold, the stall check, the log level ...), checked and in the ranks' form, in the order given.
  std::vector<RankSetting> rank_settings;

  // The canonical long names ("--num-proc") of the options given.
  std::set<std::string> given;
  // How each given option is named in errors: as typed ("-np"), or its place in the config file.
  std::map<std::string, std::string> shown;

  bool Given(const std::string& flag) const { return given.count(flag) > 0; }
  // `flag` as the user gave it; `flag` itself when it was not given.
  std::string Shown(const std::string& flag) const;
  // The value a rank setting gives `variable`, or nullptr when no option set it.
  const RankSetting* RankSettingOf(const std::string& variable) const;
};

// `text` as a whole number in [min, max]; the error names `flag` as the user knows it.
StatusOr<int> ResolveWholeNumber(const std::string& flag, const std::string& text, int min, int max);

// -np, --start-timeout (else HOROVOD_START_TIMEOUT in hvdrun's environment, as horovodrun reads
// it), --heartbeat-timeout and --ssh-port, where given.
Status ResolveNumbers(const LaunchFlags& flags, const EnvironmentLookup& getenv, LaunchOptions& options);
// The options that are taken as typed (paths, names, switches), --ssh-user's name (CheckUserName's
// rule), and the identity file's name (not empty) and readability.
Status ResolvePlainValues(const LaunchFlags& flags, LaunchOptions& options);
// --check runs no command and takes no controller; any other run needs a command.
Status ResolveCommand(const LaunchFlags& flags, const LaunchOptions& options);
// -x entries as NAME=VALUE, a bare NAME taking hvdrun's own value; with --mpi, the agent's own
// variables cannot be exported (common/protocol/mpi_job_values.h).
StatusOr<std::vector<std::string>> ResolveExports(const std::vector<std::string>& entries, bool mpi,
                                                  const EnvironmentLookup& getenv);
// Appends each setting for the ranks to the exports; one that -x sets too is an error.
Status AddRankSettings(const std::vector<RankSetting>& settings, LaunchOptions& options);

// Every resolver above, in order, over `flags` and the command.
StatusOr<LaunchOptions> ResolveLaunchFlags(const LaunchFlags& flags, std::vector<std::string> command,
                                           const EnvironmentLookup& getenv);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_COMMAND_LINE_LAUNCH_FLAGS_H_
