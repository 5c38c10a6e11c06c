#include "common/placement/rank_environment.h"

#include <algorithm>

#include "common/env_names.h"
#include "common/host/network_interfaces.h"

namespace hvdrun {
namespace {

// The names of a rank's place in one convention; hvdrun's and Horovod's are set alike.
struct PlaceNames {
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;
  const char* cross_rank;
  const char* cross_size;
  const char* hostname;
};
constexpr PlaceNames kHvdrunPlaceNames = {env::kRank,      env::kSize,      env::kLocalRank, env::kLocalSize,
                                          env::kCrossRank, env::kCrossSize, env::kHostname};
constexpr PlaceNames kHorovodPlaceNames = {
    env::kHorovodRank,      env::kHorovodSize,      env::kHorovodLocalRank, env::kHorovodLocalSize,
    env::kHorovodCrossRank, env::kHorovodCrossSize, env::kHorovodHostname};

}  // namespace

std::string HostAddress(const std::string& host) { return host == "localhost" ? "127.0.0.1" : host; }

void SetEnvironmentValue(std::vector<std::string>& env, const char* name, const std::string& value) {
  std::string prefix = std::string(name) + "=";
  for (std::string& entry : env) {
    if (entry.rfind(prefix, 0) == 0) {
      entry = prefix + value;
      return;
    }
  }
  env.push_back(prefix + value);
}

std::vector<std::string> BuildRankEnvironment(const RankAssignment& assignment, int rank,
                                              const JobEnvironment& job) {
  const RankPlacement& place = assignment.placement(rank);
  const std::string& host = assignment.hosts().at(place.host_index).host;
  const int num_hosts = static_cast<int>(assignment.hosts().size());
  std::vector<std::string> env;
  auto set = [&env](const char* name, const std::string& value) {
    env.push_back(std::string(name) + "=" + value);
  };
  auto set_int = [&set](const char* name, int value) { set(name, std::to_string(value)); };
  auto set_place = [&](const PlaceNames& names) {
    set_int(names.rank, place.rank);
    set_int(names.size, assignment.size());
    set_int(names.local_rank, place.local_rank);
    set_int(names.local_size, place.local_size);
    set_int(names.cross_rank, place.cross_rank);
    set_int(names.cross_size, place.cross_size);
    set(names.hostname, host);
  };

  set_place(kHvdrunPlaceNames);
  set(env::kJobId, job.job_id);
  const HostNetwork* network = place.host_index < static_cast<int>(job.host_networks.size())
                                   ? &job.host_networks[place.host_index]
                                   : nullptr;
  set(env::kHostAddr, network != nullptr && !network->address.empty() ? network->address : HostAddress(host));
  if (!job.backend.empty()) {
    set(env::kBackend, job.backend);
    set(env::kRendezvousAddr, job.rendezvous_addr);
    set_int(env::kRendezvousPort, job.rendezvous_port);
    set(env::kSecret, job.secret);
  }
  if (!job.network_interfaces.empty()) {
    std::string names = JoinInterfaceNames(job.network_interfaces);
    set(env::kNetworkInterfaces, names);
    set(env::kNcclSocketIfname, names);
    set(env::kGlooSocketIfname, names);
  } else if (num_hosts > 1 && network != nullptr && !network->interface.empty()) {
    for (const char* name : {env::kNcclSocketIfname, env::kGlooSocketIfname}) {
      if (std::find(job.user_variables.begin(), job.user_variables.end(), name) == job.user_variables.end()) {
        set(name, network->interface);
      }
    }
  }

  if (!job.timeline_dir.empty()) {
    set(env::kTimeline, job.timeline_dir);
    if (job.timeline_mark_cycles) set(env::kHorovodTimelineMarkCycles, "1");
  }

  set_place(kHorovodPlaceNames);

  set_int(env::kTorchRank, place.rank);
  set_int(env::kTorchWorldSize, assignment.size());
  set_int(env::kTorchLocalRank, place.local_rank);
  set_int(env::kTorchLocalWorldSize, place.local_size);
  set_int(env::kTorchGroupRank, place.host_index);
  set_int(env::kTorchGroupWorldSize, num_hosts);
  set(env::kTorchMasterAddr, job.master_addr);
  set_int(env::kTorchMasterPort, job.master_port);

  if (job.slurm) {
    const HostRanks& node = assignment.hosts().at(place.host_index);
    std::string gtids;
    for (int other : node.ranks) {
      if (!gtids.empty()) gtids += ',';
      gtids += std::to_string(other);
    }
    std::string node_list;
    std::string tasks_per_node;  // Slurm's form: 2(x3),1
    const std::vector<HostRanks>& hosts = assignment.hosts();
    for (size_t h = 0; h < hosts.size();) {
      size_t run = 1;
      while (h + run < hosts.size() && hosts[h + run].ranks.size() == hosts[h].ranks.size()) ++run;
      if (!tasks_per_node.empty()) tasks_per_node += ',';
      tasks_per_node += std::to_string(hosts[h].ranks.size());
      if (run > 1) tasks_per_node.append("(x").append(std::to_string(run)).append(")");
      h += run;
    }
    for (const HostRanks& other : hosts) node_list += (node_list.empty() ? "" : ",") + other.host;
    set_int(env::kSlurmProcId, place.rank);
    set_int(env::kSlurmLocalId, place.local_rank);
    set_int(env::kSlurmNodeId, place.host_index);
    set(env::kSlurmGtids, gtids);
    for (const char* name : {env::kSlurmNtasks, env::kSlurmNprocs, env::kSlurmStepNumTasks}) {
      set_int(name, assignment.size());
    }
    set_int(env::kSlurmNnodes, num_hosts);
    set_int(env::kSlurmStepNumNodes, num_hosts);
    set(env::kSlurmTasksPerNode, tasks_per_node);
    set(env::kSlurmStepTasksPerNode, tasks_per_node);
    set(env::kSlurmStepNodeList, node_list);
    if (!job.slurm_job_name.empty()) set(env::kSlurmJobName, job.slurm_job_name);
    env.emplace_back(env::kSlurmTaskPid);  // no '=': removed
  }

  env.insert(env.end(), job.exports.begin(), job.exports.end());
  return env;
}

}  // namespace hvdrun
