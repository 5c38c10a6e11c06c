// LaunchFlags: hvdrun's flags as typed, and the small functions that resolve them into
// LaunchOptions (launcher/launch_options.h), each checking one concern and failing with the one
// usage line hvdrun prints.
//
// ParseCommandLine fills a LaunchFlags from the flag table (launch_options.cc: every flag's names,
// help and field, declared once) and calls ResolveLaunchFlags, which runs the resolvers below in
// this order, so that of several mistakes the first one in this order is reported: whole numbers;
// the SSH identity file; the backend (with --dry-run and --mpi-args); the command against --check;
// the hosts (--launcher, -H, --hostfile, a Slurm allocation); the network interfaces; the -x
// exports; libhvdrun's tuning flags; the timeline; then the tuning flags' variables join the
// exports. Every resolver is a pure function of its inputs but for `getenv` and the identity
// file's access check.
#ifndef HVDRUN_LAUNCHER_LAUNCH_FLAGS_H_
#define HVDRUN_LAUNCHER_LAUNCH_FLAGS_H_

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "launcher/launch_options.h"

namespace hvdrun {

using GetEnv = std::function<const char*(const char*)>;

// Every flag's value as typed (flags that take none: whether given). Empty: not typed, or typed
// empty; `given` tells them apart.
struct LaunchFlags {
  // Hosts and ranks.
  std::string num_proc, hosts, hostfile, launcher;
  // The job.
  std::string output_dir, working_dir, results_dir;
  bool verbose = false, check = false, dry_run = false;
  std::vector<std::string> exports, network_interfaces;
  // Agents and SSH.
  std::string start_timeout, heartbeat_timeout, agent_path;
  std::string ssh_user, ssh_port, ssh_identity_file, ssh_known_hosts;
  bool ssh_accept_new_host_keys = false;
  // The backend.
  bool gloo = false, mpi = false, nccl = false;
  std::string mpi_args;
  // libhvdrun's tuning, and fp8's safeguards (on|off).
  std::string fusion_threshold_mb, cycle_time_ms, cache_capacity, compression;
  std::string fp8_scaling, fp8_safe_cast, fp8_float32_sums, error_feedback;
  // libhvdrun's shared-memory allreduce (on|off), and its hierarchical form across hosts.
  std::string shared_memory;
  bool hierarchical_allreduce = false, no_hierarchical_allreduce = false;
  // The timeline.
  std::string timeline_filename;
  bool timeline_mark_cycles = false;

  // The long names ("--num-proc") of the flags given on the command line.
  std::set<std::string> given;
  bool Given(const std::string& flag) const { return given.count(flag) > 0; }
};

// A variable a tuning flag sets for every rank, and the flag ("--cycle-time-ms"), for its errors.
struct RankSetting {
  std::string flag;
  std::string name;
  std::string value;
};

// `text` as a whole number in [min, max]; the error names `flag` as the user knows it.
StatusOr<int> ResolveWholeNumber(const std::string& flag, const std::string& text, int min, int max);

// -np, --start-timeout, --heartbeat-timeout and --ssh-port, where given.
Status ResolveNumbers(const LaunchFlags& flags, LaunchOptions& options);
// The flags that are taken as typed (paths, names, switches), --ssh-user's name (CheckUserName's
// rule), and the identity file's name (not empty) and readability.
Status ResolvePlainValues(const LaunchFlags& flags, LaunchOptions& options);
// --gloo / --mpi / --nccl (at most one), --dry-run and --mpi-args (with --mpi only).
Status ResolveBackend(const LaunchFlags& flags, LaunchOptions& options);
// --check runs no command and takes no backend; any other run needs a command.
Status ResolveCommand(const LaunchOptions& options);
// --launcher, -H or --hostfile, the Slurm allocation (its nodes, slots and -np when hvdrun uses
// it), else localhost with -np slots; then -np's default, every slot.
Status ResolveHosts(const LaunchFlags& flags, const GetEnv& getenv, LaunchOptions& options);
// --network-interface's texts (each a comma-separated list) as interface names, each once.
StatusOr<std::vector<std::string>> ResolveNetworkInterfaces(const std::vector<std::string>& texts);
// -x entries as NAME=VALUE, a bare NAME taking hvdrun's own value; with --mpi, the agent's own
// variables cannot be exported (common/protocol/mpi_job_values.h).
StatusOr<std::vector<std::string>> ResolveExports(const std::vector<std::string>& entries, bool mpi,
                                                  const GetEnv& getenv);
// The variables libhvdrun's tuning flags set for the ranks (Horovod's names, which libhvdrun
// reads), in flag order: fusion threshold, cycle time, cache capacity, compression, fp8's safeguards.
StatusOr<std::vector<RankSetting>> ResolveTuning(const LaunchFlags& flags,
                                                 const std::optional<BackendKind>& backend);
// --timeline-filename, else HOROVOD_TIMELINE from -x (taken out of the exports), else from
// hvdrun's environment for a job with a backend; and --timeline-mark-cycles.
Status ResolveTimeline(const LaunchFlags& flags, const GetEnv& getenv, LaunchOptions& options);
// Appends each tuning setting to the exports; one that -x sets too is an error.
Status AddTuningExports(const std::vector<RankSetting>& tuning, LaunchOptions& options);

// Every resolver above, in order, over `flags` and the command.
StatusOr<LaunchOptions> ResolveLaunchFlags(const LaunchFlags& flags, std::vector<std::string> command,
                                           const GetEnv& getenv);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_LAUNCH_FLAGS_H_
