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

// The entries of one rank's environment, added in BuildRankEnvironment's order.
class RankEnvironmentBuilder {
 public:
  RankEnvironmentBuilder(const RankAssignment& assignment, int rank, const JobEnvironment& job)
      : assignment_(assignment),
        job_(job),
        place_(assignment.placement(rank)),
        host_(assignment.hosts().at(place_.host_index).host),
        num_hosts_(static_cast<int>(assignment.hosts().size())),
        network_(place_.host_index < static_cast<int>(job.host_networks.size())
                     ? &job.host_networks[place_.host_index]
                     : nullptr) {}

  // The rank's place under one convention's names.
  void SetPlace(const PlaceNames& names) {
    SetInt(names.rank, place_.rank);
    SetInt(names.size, assignment_.size());
    SetInt(names.local_rank, place_.local_rank);
    SetInt(names.local_size, place_.local_size);
    SetInt(names.cross_rank, place_.cross_rank);
    SetInt(names.cross_size, place_.cross_size);
    Set(names.hostname, host_);
  }

  // The job's identity, the host's address, the backend and its rendezvous.
  void SetJobValues() {
    Set(env::kJobId, job_.job_id);
    Set(env::kHostAddr,
        network_ != nullptr && !network_->address.empty() ? network_->address : HostAddress(host_));
    if (!job_.backend.empty()) {
      Set(env::kBackend, job_.backend);
      Set(env::kRendezvousAddr, job_.rendezvous_addr);
      SetInt(env::kRendezvousPort, job_.rendezvous_port);
      Set(env::kSecret, job_.secret);
    }
  }

  // The directory of the rank's timeline, with --timeline-filename.
  void SetTimeline() {
    if (job_.timeline_dir.empty()) return;
    Set(env::kTimeline, job_.timeline_dir);
    if (job_.timeline_mark_cycles) Set(env::kHorovodTimelineMarkCycles, "1");
  }

  // --network-interface's names, else, on several hosts, the host's job interface for NCCL and
  // torch's Gloo unless the user set them.
  void SetNetwork() {
    if (!job_.network_interfaces.empty()) {
      const std::string names = JoinInterfaceNames(job_.network_interfaces);
      for (const char* name : {env::kNetworkInterfaces, env::kNcclSocketIfname, env::kGlooSocketIfname}) {
        Set(name, names);
      }
      return;
    }
    if (num_hosts_ < 2 || network_ == nullptr || network_->interface.empty()) return;
    for (const char* name : {env::kNcclSocketIfname, env::kGlooSocketIfname}) {
      const std::vector<std::string>& user = job_.user_variables;
      if (std::find(user.begin(), user.end(), name) == user.end()) Set(name, network_->interface);
    }
  }

  // torchrun's names.
  void SetTorchValues() {
    SetInt(env::kTorchRank, place_.rank);
    SetInt(env::kTorchWorldSize, assignment_.size());
    SetInt(env::kTorchLocalRank, place_.local_rank);
    SetInt(env::kTorchLocalWorldSize, place_.local_size);
    SetInt(env::kTorchGroupRank, place_.host_index);
    SetInt(env::kTorchGroupWorldSize, num_hosts_);
    Set(env::kTorchMasterAddr, job_.master_addr);
    SetInt(env::kTorchMasterPort, job_.master_port);
  }

  // The rank's place under Slurm's task variables, as srun gives them to one step of the job.
  void SetSlurmValues() {
    const std::vector<HostRanks>& hosts = assignment_.hosts();
    std::string gtids;
    for (int other : hosts.at(place_.host_index).ranks) {
      // Appended, not (... ? "" : ",") + ...: GCC 12's -Wrestrict misreads that at -O3.
      if (!gtids.empty()) gtids += ',';
      gtids += std::to_string(other);
    }
    std::string node_list;
    for (const HostRanks& other : hosts) {
      if (!node_list.empty()) node_list += ',';
      node_list += other.host;
    }
    const std::string tasks_per_node = SlurmTasksPerNode(hosts);
    SetInt(env::kSlurmProcId, place_.rank);
    SetInt(env::kSlurmLocalId, place_.local_rank);
    SetInt(env::kSlurmNodeId, place_.host_index);
    Set(env::kSlurmGtids, gtids);
    for (const char* name : {env::kSlurmNtasks, env::kSlurmNprocs, env::kSlurmStepNumTasks}) {
      SetInt(name, assignment_.size());
    }
    SetInt(env::kSlurmNnodes, num_hosts_);
    SetInt(env::kSlurmStepNumNodes, num_hosts_);
    Set(env::kSlurmTasksPerNode, tasks_per_node);
    Set(env::kSlurmStepTasksPerNode, tasks_per_node);
    Set(env::kSlurmStepNodeList, node_list);
    if (!job_.slurm_job_name.empty()) Set(env::kSlurmJobName, job_.slurm_job_name);
    env_.emplace_back(env::kSlurmTaskPid);  // no '=': removed
  }

  // The entries, with the user's -x exports last so that they win.
  std::vector<std::string> Finish() {
    env_.insert(env_.end(), job_.exports.begin(), job_.exports.end());
    return std::move(env_);
  }

 private:
  void Set(const char* name, const std::string& value) { env_.push_back(std::string(name) + "=" + value); }
  void SetInt(const char* name, int value) { Set(name, std::to_string(value)); }

  // Slurm's form of the ranks per host: "2(x3),1".
  static std::string SlurmTasksPerNode(const std::vector<HostRanks>& hosts) {
    std::string text;
    for (size_t h = 0; h < hosts.size();) {
      size_t run = 1;
      while (h + run < hosts.size() && hosts[h + run].ranks.size() == hosts[h].ranks.size()) ++run;
      if (!text.empty()) text += ',';
      text += std::to_string(hosts[h].ranks.size());
      if (run > 1) text.append("(x").append(std::to_string(run)).append(")");
      h += run;
    }
    return text;
  }

  const RankAssignment& assignment_;
  const JobEnvironment& job_;
  const RankPlacement& place_;
  const std::string& host_;
  const int num_hosts_;
  const HostNetwork* network_;
  std::vector<std::string> env_;
};

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
  RankEnvironmentBuilder builder(assignment, rank, job);
  builder.SetPlace(kHvdrunPlaceNames);
  builder.SetJobValues();
  builder.SetNetwork();
  builder.SetTimeline();
  builder.SetPlace(kHorovodPlaceNames);
  builder.SetTorchValues();
  if (job.slurm) builder.SetSlurmValues();
  return builder.Finish();
}

}  // namespace hvdrun
