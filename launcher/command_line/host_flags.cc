#include "launcher/command_line/host_flags.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <utility>

#include "common/env_names.h"
#include "common/host/network_interfaces.h"
#include "common/placement/hostfile.h"
#include "common/placement/slurm_allocation.h"

namespace hvdrun {
namespace {

StatusOr<AgentStart> ResolveAgentStart(const LaunchFlags& flags, bool in_allocation, bool hosts_given) {
  if (!flags.Given("--launcher")) {
    return in_allocation && !hosts_given ? AgentStart::kSlurm : AgentStart::kSsh;
  }
  for (AgentStart start : {AgentStart::kSsh, AgentStart::kSlurm, AgentStart::kLocal}) {
    if (flags.launcher == AgentStartName(start)) return start;
  }
  return Status::Error("--launcher '" + flags.launcher + "': one of ssh, slurm, local");
}

// Where the hosts come from inside a Slurm allocation, and the -np that fits them. `hosts_given`:
// -H or --hostfile was given (`options.hosts` holds them).
Status UseSlurmAllocation(const EnvironmentLookup& getenv, bool hosts_given, LaunchOptions& options) {
  StatusOr<std::optional<SlurmAllocation>> read = ReadSlurmAllocation(getenv);
  if (!read.ok()) return read.status();
  if (!read.value()) {
    return Status::Error(std::string("--launcher slurm: not inside a Slurm allocation (") + env::kSlurmJobId +
                         " is not set); run hvdrun under salloc or sbatch");
  }
  const SlurmAllocation& allocation = *read.value();
  const std::string described = "Slurm job " + allocation.job_id + " (" + env::kSlurmJobNodeList + "='" +
                                allocation.node_list + "', " + env::kSlurmTasksPerNode + "='" +
                                allocation.tasks_per_node + "')";
  if (hosts_given) {
    for (const HostSlots& host : options.hosts) {
      if (!host.user.empty()) {
        return Status::Error("--launcher slurm: host '" + host.user + "@" + host.host +
                             "': srun starts the agents as the job's own user, so a login name does not "
                             "apply; drop '" +
                             host.user + "@' (or give --launcher ssh)");
      }
      bool in_allocation = std::any_of(allocation.nodes.begin(), allocation.nodes.end(),
                                       [&](const HostSlots& node) { return node.host == host.host; });
      if (!in_allocation) {
        return Status::Error("--launcher slurm: host '" + host.host + "' is not a node of " + described);
      }
    }
  } else {
    options.hosts = allocation.nodes;
    if (options.num_proc == 0) options.num_proc = std::min(allocation.num_tasks, TotalSlots(options.hosts));
    if (options.num_proc > TotalSlots(options.hosts)) {
      return Status::Error("-np " + std::to_string(options.num_proc) + ": " + described + " holds " +
                           std::to_string(TotalSlots(options.hosts)) +
                           " tasks; ask Slurm for more (salloc -n) or give a smaller -np");
    }
  }
  options.slurm = allocation;
  return Status::Ok();
}

}  // namespace

Status ResolveHosts(const LaunchFlags& flags, const EnvironmentLookup& getenv, LaunchOptions& options) {
  // Typed, even empty: an empty list or file name is refused by its parser, never taken as absent.
  const bool host_list = flags.Given("--hosts") || !flags.hosts.empty();
  const bool hostfile = flags.Given("--hostfile") || !flags.hostfile.empty();
  if (host_list && hostfile) return Status::Error("give either -H or --hostfile, not both");
  const bool hosts_given = host_list || hostfile;
  const char* slurm_job = getenv(env::kSlurmJobId);
  const bool in_allocation = slurm_job != nullptr && *slurm_job != '\0';
  StatusOr<AgentStart> start = ResolveAgentStart(flags, in_allocation, hosts_given);
  if (!start.ok()) return start.status();
  options.agent_start = start.value();
  if (hosts_given) {
    StatusOr<std::vector<HostSlots>> hosts =
        host_list ? ParseHostList(flags.hosts) : ReadHostfile(flags.hostfile);
    if (!hosts.ok()) return hosts.status();
    options.hosts = std::move(hosts).value();
  }
  if (options.agent_start == AgentStart::kSlurm ||
      (options.agent_start == AgentStart::kSsh && in_allocation && !hosts_given)) {
    if (Status status = UseSlurmAllocation(getenv, hosts_given, options); !status.ok()) return status;
  } else if (!hosts_given) {
    if (options.num_proc == 0 && !options.check) {
      return Status::Error("-np: give the number of processes (or hosts with -H or --hostfile)");
    }
    options.hosts = {HostSlots{"localhost", std::max(options.num_proc, 1)}};
  }
  if (options.num_proc == 0) options.num_proc = TotalSlots(options.hosts);
  return Status::Ok();
}

StatusOr<std::vector<std::string>> ResolveNetworkInterfaces(const std::vector<std::string>& texts) {
  std::vector<std::string> interfaces;
  for (const std::string& text : texts) {
    if (text.empty() || text.back() == ',') {
      return Status::Error("--network-interface '" + text + "': an empty interface name");
    }
    std::stringstream names(text);
    for (std::string name; std::getline(names, name, ',');) {
      if (!IsValidInterfaceName(name)) {
        return Status::Error("--network-interface '" + text + "': '" + name +
                             "' is not an interface name (1 to 15 characters, no '/', ':' or spaces)");
      }
      if (std::find(interfaces.begin(), interfaces.end(), name) == interfaces.end()) {
        interfaces.push_back(name);
      }
    }
  }
  return interfaces;
}

}  // namespace hvdrun
