// The environment each rank starts with: its place in the job under hvdrun's, Horovod's and
// PyTorch's names (common/env_names.h) — and Slurm's, inside an allocation — the job's identity,
// and the user's -x exports. These are set on top of the environment the rank's agent inherited.
#ifndef HVDRUN_COMMON_PLACEMENT_RANK_ENVIRONMENT_H_
#define HVDRUN_COMMON_PLACEMENT_RANK_ENVIRONMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/host/network_interfaces.h"
#include "common/placement/rank_assignment.h"

namespace hvdrun {

struct JobEnvironment {
  std::string job_id;
  // Address of rank 0's host as the other hosts reach it, and a port free there.
  std::string master_addr;
  uint16_t master_port = 0;
  // With a backend: its name, hvdrun's rendezvous service and the job secret; empty without.
  std::string backend;
  std::string rendezvous_addr;
  uint16_t rendezvous_port = 0;
  std::string secret;
  // --network-interface's names; empty without it. They become HVDRUN_NETWORK_INTERFACES and
  // every rank's NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME.
  std::vector<std::string> network_interfaces;
  // Each host's place on the job's network, by host index (common/host/network_interfaces.h): its
  // HVDRUN_HOST_ADDR and, for a job on several hosts without --network-interface, the interface
  // its ranks' NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME name (torch's Gloo and NCCL otherwise bind
  // to what the host name resolves to, 127.0.1.1 on Debian). A host without an entry, or with an
  // empty address, gets HostAddress(its name) and no interface.
  std::vector<HostNetwork> host_networks;
  // Names of the variables the user set in hvdrun's own environment: the interface defaults above
  // leave them alone.
  std::vector<std::string> user_variables;
  // With --timeline-filename: the directory, on every rank's host, where its runtime writes its
  // timeline before sending it to hvdrun (HVDRUN_TIMELINE); empty: no timeline. With
  // timeline_mark_cycles, HOROVOD_TIMELINE_MARK_CYCLES=1 too.
  std::string timeline_dir;
  bool timeline_mark_cycles = false;
  // hvdrun runs inside a Slurm allocation (SLURM_JOB_ID in its environment, or, under mpirun, the
  // agent's): every rank also gets its place under Slurm's task variables (common/env_names.h,
  // SLURM_PROCID ...), as srun would give them to one step of the job's ranks laid out as hvdrun
  // lays them out, and loses SLURM_TASK_PID, which is its agent's.
  bool slurm = false;
  // With `slurm`: the allocation's SLURM_JOB_NAME in hvdrun's environment, given back to the ranks;
  // empty: left as the agent has it.
  std::string slurm_job_name;
  std::vector<std::string> exports;  // NAME=VALUE, applied last so that a user's -x wins
};

// The address of `host` as the job's other hosts reach it (MASTER_ADDR, HVDRUN_HOST_ADDR):
// loopback for "localhost", so that the name cannot resolve to an IPv6 address that a program
// listening on IPv4 does not serve.
std::string HostAddress(const std::string& host);

// Replaces the value of `name` among NAME=VALUE `env` entries, or appends it when unset.
void SetEnvironmentValue(std::vector<std::string>& env, const char* name, const std::string& value);

// NAME=VALUE entries for `rank`, and, with JobEnvironment::slurm, the bare NAME of each variable
// the rank must not inherit (SpawnProcess's EnvironmentMode::kInheritWith removes it).
std::vector<std::string> BuildRankEnvironment(const RankAssignment& assignment, int rank,
                                              const JobEnvironment& job);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PLACEMENT_RANK_ENVIRONMENT_H_
