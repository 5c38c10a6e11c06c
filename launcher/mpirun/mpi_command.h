// The mpirun command line of `hvdrun --mpi`, built as horovodrun builds its own: a pure function of
// the job's layout, the options, the job's values and the machine hvdrun runs on.
//
//   mpirun [--allow-run-as-root] --tag-output -np N -H host:ranks,...
//          (-bind-to none -map-by slot | <--binding-args words>) -mca pml ob1 -mca btl ^openib [<ssh
//          settings>]
//          (-mca btl_tcp_if_include I -mca oob_tcp_if_include I | -mca btl_tcp_if_include lo)
//          [-mca mpi_yield_when_idle 1] -x NAME ... [--mpi-args words] <hvdrun-agent> --mpi-rank --
//          command...
//
// mpi_yield_when_idle: Open MPI busy-polls while a rank waits unless it knows the host is
// oversubscribed, which it cannot see here (-H gives each rank a slot). With at least as many
// ranks as CPUs (each rank also runs libhvdrun's collective thread) the polling ranks starve each
// other: measured on 2 CPUs with hvdrun-bench, a 1 MiB allreduce took 171 ms at 4 ranks and 33 ms
// at 2 without it, 7.2 ms and 3.1 ms with it. With fewer ranks than CPUs polling is kept. The
// hosts are taken to have as many CPUs as this machine.
//
// Values never appear on the command line: each exported variable is passed as `-x NAME` and its
// value is put into mpirun's own environment (MpiCommand::env), so the job secret stays off every
// command line, --dry-run's included (Open MPI sends the values to its remote daemons over its own
// TCP connections, not on their ssh command lines).
//
// With --network-interface I (a comma-separated list when repeated), Open MPI's traffic between
// ranks (btl) and between its daemons (oob) uses those interfaces only, as horovodrun sets them;
// the ranks get HVDRUN_NETWORK_INTERFACES, NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME too. Without
// it, when every host is this machine, mpirun's TCP traffic stays on the loopback interface
// (`lo`); with hosts that are not, Open MPI uses every interface but loopback (its default).
// mpirun starts its daemon on each host that is not this machine with `ssh` (Open MPI's own
// launcher), given the settings of hvdrun's --ssh-* flags as `-mca plm_rsh_args`, and directly from
// this machine (`plm_rsh_no_tree_spawn`: the key and known_hosts need exist here only).
//
// Inside a Slurm allocation (LaunchOptions::agent_start kSlurm), there is no -H and no ssh setting:
// mpirun reads the allocation's nodes and slots itself and starts its daemons with srun, and
// `-map-by slot` places the ranks host-major over them, as hvdrun's layout does.
//
// mpirun runs one program path on every host. With hosts that are not this machine and
// options.ssh.agent_fallback_path set (no --agent-path given), that program is `/bin/sh -c
// <RemoteAgentCommand> hvdrun-agent`: each host runs hvdrun-agent from its PATH when it has it there,
// else this machine's agent path, as hvdrun's own SSH start does (launcher/ssh/remote_agent_command.h);
// a host with neither prints hvdrun's line for it (tagged as its rank's stderr) and exits 127.
#ifndef HVDRUN_LAUNCHER_MPIRUN_MPI_COMMAND_H_
#define HVDRUN_LAUNCHER_MPIRUN_MPI_COMMAND_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/placement/rank_assignment.h"
#include "common/placement/rank_environment.h"
#include "hvdrun/status.h"
#include "launcher/launch_options.h"
#include "launcher/rank_launcher.h"

namespace hvdrun {

struct MpiCommand {
  std::vector<std::string> argv;  // argv[0] is "mpirun", looked up in PATH
  // NAME=VALUE for mpirun's environment: the values of the `-x NAME` arguments, in their order.
  std::vector<std::string> env;
};

// The layout every hvdrun-agent --mpi-rank checks its placement against (HVDRUN_MPI_LAYOUT), also
// mpirun's -H value: each host with the number of ranks it runs, in rank order ("localhost:4").
std::string MpiLayout(const RankAssignment& assignment);

// Fails, with the usage line hvdrun prints, for a layout mpirun would not run as hvdrun places it:
// a host named as an IPv6 address (mpirun's -H cannot take one); two names of this machine, which
// mpirun runs as one node; or this machine named by a loopback name (localhost, 127.x.x.x) beside
// hosts that are not this machine, which cannot reach it by that name. `is_this_machine` tells
// which host names are this machine (IsLocalHost, launcher/local_host.h).
Status CheckMpiHosts(const RankAssignment& assignment,
                     const std::function<bool(const std::string&)>& is_this_machine);

// Fails, with the usage line hvdrun prints, for an --ssh-* value that mpirun cannot pass on to
// ssh: Open MPI splits plm_rsh_args at spaces, so a value must have none.
Status CheckMpiSshOptions(const SshOptions& ssh);

// How hvdrun runs mpirun, from its command line: everything the command depends on besides the job
// (JobLaunch) and the machine (MpiLaunchHost).
struct MpirunSettings {
  SshOptions ssh;                     // --ssh-*: ssh's settings for hosts that are not this machine
  int connect_timeout_s = 0;          // --start-timeout: ssh's ConnectTimeout (0: none)
  std::vector<std::string> mpi_args;  // --mpi-args, before the agent's words
  // --binding-args, in place of "-bind-to none -map-by slot" (horovodrun's); nullopt: those.
  std::optional<std::vector<std::string>> binding_args;
  // --launcher slurm inside an allocation: mpirun reads the nodes and starts its daemons with srun.
  bool in_slurm_allocation = false;
  // With in_slurm_allocation: -H or --hostfile chose some of the allocation's nodes (hvdrun-lab's
  // cells on the first S nodes), so mpirun is given -H, which restricts it to those nodes and slots.
  bool hosts_chosen_in_allocation = false;
};
MpirunSettings MpirunSettingsOf(const LaunchOptions& options);

// What the command depends on beyond the job: the machine hvdrun runs on.
struct MpiLaunchHost {
  bool as_root = false;  // Open MPI refuses to run as root unless told (--allow-run-as-root)
  int cpus = 0;          // CPUs hvdrun may run on; 0 when unknown (no mpi_yield_when_idle)
  // Some host is not this machine: mpirun reaches it over ssh, and TCP leaves loopback.
  bool remote_hosts = false;
};

// The command that runs `launch` as JobRun described it: its command, and its environment, whose
// values (common/protocol/mpi_job_values.h: the job id, the rendezvous service, MASTER_ADDR, the user's -x
// variables ...) are exported with -x; the environment is empty for --dry-run, which prints only
// names. `launch.environment.network_interfaces` also sets Open MPI's own interfaces.
// `agent_path` is the hvdrun-agent that mpirun starts for each rank.
MpiCommand BuildMpiCommand(const RankAssignment& assignment, const JobLaunch& launch,
                           const MpirunSettings& settings, const std::string& agent_path,
                           const MpiLaunchHost& host);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_MPIRUN_MPI_COMMAND_H_
