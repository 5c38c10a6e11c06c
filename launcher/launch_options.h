// LaunchOptions: what the user asked hvdrun to do, checked and complete: what a job (JobRun), the
// mpirun command and --check run with. ParseCommandLine (launcher/command_line/command_line.h)
// makes it from hvdrun's command line, whose options keep horovodrun's names and meanings.
#ifndef HVDRUN_LAUNCHER_LAUNCH_OPTIONS_H_
#define HVDRUN_LAUNCHER_LAUNCH_OPTIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "common/placement/host_spec.h"
#include "common/placement/slurm_allocation.h"
#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "launcher/elastic/elastic_options.h"
#include "launcher/ssh/ssh_options.h"

namespace hvdrun {

// --launcher: how hvdrun starts each host's agent (with --mpi: how mpirun finds the hosts).
enum class AgentStart {
  // A child process for a host that is this machine, SSH for any other. The default outside a
  // Slurm allocation, and inside one when -H or --hostfile is given.
  kSsh,
  // srun inside the Slurm allocation, one step per node (launcher/agents/srun_agent_command.h); with --mpi,
  // mpirun reads the allocation itself. The default inside an allocation without -H/--hostfile.
  kSlurm,
  // Every agent a child process of hvdrun on this machine; every host must be this machine.
  kLocal,
};

// "ssh", "slurm", "local": --launcher's values, also plan.json's "launcher".
const char* AgentStartName(AgentStart start);

struct LaunchOptions {
  int num_proc = 0;  // 0: every slot of the hosts
  AgentStart agent_start = AgentStart::kSsh;
  std::vector<HostSlots> hosts;
  std::string output_dir;    // --output-filename; empty: no per-rank files
  int start_timeout_s = 30;  // horovodrun's default
  // --heartbeat-timeout: an agent (or launcher) silent this long has failed. Long enough for a
  // host under heavy load; short enough that a lost host ends a job in well under a minute.
  int heartbeat_timeout_s = 30;
  // How hosts that are not this machine are reached (--ssh-* flags).
  SshOptions ssh;
  // --agent-path: hvdrun-agent on hosts that are not this machine. Default: found in their PATH,
  // else at this machine's own agent path (ssh.agent_fallback_path, which main.cc sets when the
  // flag is not given); a given path is the only one tried.
  std::string remote_agent_path = "hvdrun-agent";
  bool remote_agent_path_given = false;
  // --cwd: the ranks' working directory on every host; empty: hvdrun's own.
  std::string working_dir;
  bool verbose = false;
  // -prefix-timestamp: every output line of the ranks is stamped with the local time.
  bool prefix_timestamp = false;
  // --dry-run, with --mpi only: print the mpirun command and start nothing.
  bool dry_run = false;
  // The job's controller: the collective backend the ranks use (--gloo, --mpi, --nccl, else chosen:
  // launcher/command_line/controller_choice.h), for which hvdrun runs its rendezvous service. With
  // kMpi, mpirun starts the ranks instead of hvdrun's agents (launcher/mpirun/mpirun_launcher.h).
  std::optional<BackendKind> backend;
  // Why that controller, in words, for --verbose, plan.json and --check.
  std::string backend_reason;
  // --mpi-args, with --mpi only: the string split into words (common/shell_words.h), added to
  // mpirun's arguments before the program.
  std::vector<std::string> mpi_args;
  // --binding-args, with --mpi only: mpirun's binding arguments, split as --mpi-args, in place of
  // "-bind-to none -map-by slot"; nullopt: those.
  std::optional<std::vector<std::string>> binding_args;
  // One line each, printed before the job starts: a setting that does not apply as given, and what
  // hvdrun does instead.
  std::vector<std::string> notices;
  std::string results_dir;  // --results; empty: no results directory
  // --check: start every host's agent, print its facts and start no rank (launcher/host_check.h).
  bool check = false;
  // --network-interface (repeatable, or comma-separated as horovodrun's --network-interfaces): on
  // every host, the job's traffic (rendezvous, MASTER_ADDR, the backends) uses the address of the
  // first of these interfaces the host has. Empty: hvdrun's choice (launcher/job_run.h).
  std::vector<std::string> network_interfaces;
  // -x entries resolved to NAME=VALUE (a bare NAME takes hvdrun's own value), then the variables of
  // the tuning flags (--fusion-threshold-mb: HOROVOD_FUSION_THRESHOLD, ...).
  std::vector<std::string> exports;
  // --timeline-filename (or HOROVOD_TIMELINE, in hvdrun's environment or given with -x): every rank
  // records a timeline and hvdrun merges them into this file (docs/timeline.md); empty: none.
  std::string timeline_file;
  bool timeline_mark_cycles = false;  // --timeline-mark-cycles
  std::vector<std::string> command;
  // The Slurm allocation the hosts come from (no -H/--hostfile inside an allocation, with --launcher
  // slurm or ssh); nullopt otherwise.
  std::optional<SlurmAllocation> slurm;
  // An elastic job (--min-np or --host-discovery-script given: docs/elastic.md); nullopt: the first
  // failing rank stops the job.
  std::optional<ElasticOptions> elastic;
};

// The launcher chosen and, inside an allocation whose hosts hvdrun uses, the allocation, for
// --verbose: "slurm (Slurm job 42: SLURM_JOB_NODELIST='n[1-2]', SLURM_TASKS_PER_NODE='2(x2)')".
std::string DescribeAgentStart(const LaunchOptions& options);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_LAUNCH_OPTIONS_H_
