#include "common/protocol/mpi_job_values.h"

#include <algorithm>
#include <cstdint>
#include <sstream>

#include "common/env_names.h"
#include "common/host/network_interfaces.h"
#include "common/protocol/job_secret.h"

namespace hvdrun {
namespace {

constexpr const char* kMissingHint = "hvdrun-agent --mpi-rank runs under the mpirun that hvdrun --mpi starts";

std::string PortText(uint16_t port) { return port != 0 ? std::to_string(port) : ""; }

StatusOr<uint16_t> RequiredPort(const EnvironmentReader& env, const char* name, int min) {
  StatusOr<int64_t> value = env.RequiredWholeNumber(name, min, 65535);
  if (!value.ok()) return value.status();
  return static_cast<uint16_t>(value.value());
}

StatusOr<std::vector<std::string>> InterfaceNames(const char* list) {
  std::vector<std::string> names;
  std::stringstream items(list);
  for (std::string name; std::getline(items, name, ',');) {
    if (!IsValidInterfaceName(name)) {
      return Status::Error(std::string(env::kNetworkInterfaces) + ": '" + name +
                           "' is not an interface name");
    }
    names.push_back(name);
  }
  return names;
}

}  // namespace

MpiJobVariables EncodeMpiJobValues(const JobEnvironment& job, const std::string& layout) {
  MpiJobVariables variables = {
      {env::kBackend, job.backend},
      {env::kJobId, job.job_id},
      {env::kRendezvousAddr, job.rendezvous_addr},
      {env::kRendezvousPort, PortText(job.rendezvous_port)},
      {env::kSecret, job.secret},
      {env::kTorchMasterAddr, job.master_addr},
      {env::kTorchMasterPort, PortText(job.master_port)},
      {env::kMpiLayout, layout},
  };
  if (!job.timeline_dir.empty()) {
    variables.emplace_back(env::kTimeline, job.timeline_dir);
    if (job.timeline_mark_cycles) variables.emplace_back(env::kHorovodTimelineMarkCycles, "1");
  }
  if (!job.network_interfaces.empty()) {
    std::string names = JoinInterfaceNames(job.network_interfaces);
    for (const char* name : {env::kNetworkInterfaces, env::kNcclSocketIfname, env::kGlooSocketIfname}) {
      variables.emplace_back(name, names);
    }
  }
  for (const std::string& entry : job.exports) {
    size_t equals = entry.find('=');
    std::string name = entry.substr(0, equals);
    std::string value = equals == std::string::npos ? "" : entry.substr(equals + 1);
    auto same =
        std::find_if(variables.begin(), variables.end(), [&](const auto& v) { return v.first == name; });
    if (same != variables.end()) {
      same->second = std::move(value);
    } else {
      variables.emplace_back(std::move(name), std::move(value));
    }
  }
  return variables;
}

bool IsMpiAgentVariable(std::string_view name) {
  for (const char* own : {env::kRendezvousAddr, env::kRendezvousPort, env::kSecret, env::kMpiLayout}) {
    if (name == own) return true;
  }
  return false;
}

StatusOr<std::string> DecodeMpiLayout(const EnvironmentLookup& lookup) {
  return EnvironmentReader(lookup, kMissingHint).Required(env::kMpiLayout);
}

StatusOr<JobEnvironment> DecodeMpiJobEnvironment(const EnvironmentLookup& lookup) {
  const EnvironmentReader env(lookup, kMissingHint);
  JobEnvironment job;
  for (auto [name, field] :
       {std::pair{env::kJobId, &job.job_id}, std::pair{env::kBackend, &job.backend},
        std::pair{env::kRendezvousAddr, &job.rendezvous_addr}, std::pair{env::kSecret, &job.secret},
        std::pair{env::kTorchMasterAddr, &job.master_addr}}) {
    StatusOr<std::string> value = env.Required(name);
    if (!value.ok()) return value.status();
    *field = std::move(value).value();
  }
  if (!IsValidJobSecret(job.secret)) {
    return Status::Error(std::string(env::kSecret) +
                         " is not a job secret (64 lower-case hexadecimal digits)");
  }
  StatusOr<uint16_t> port = RequiredPort(env, env::kRendezvousPort, 1);
  if (!port.ok()) return port.status();
  job.rendezvous_port = port.value();
  StatusOr<uint16_t> master_port = RequiredPort(env, env::kTorchMasterPort, 0);
  if (!master_port.ok()) return master_port.status();
  job.master_port = master_port.value();
  const char* slurm_job = env.Find(env::kSlurmJobId);
  job.slurm = slurm_job != nullptr && *slurm_job != '\0';
  if (const char* names = env.Find(env::kNetworkInterfaces); names != nullptr) {
    StatusOr<std::vector<std::string>> interfaces = InterfaceNames(names);
    if (!interfaces.ok()) return interfaces.status();
    job.network_interfaces = std::move(interfaces).value();
  }
  if (const char* timeline = env.Find(env::kTimeline); timeline != nullptr) job.timeline_dir = timeline;
  if (const char* mark = env.Find(env::kHorovodTimelineMarkCycles); mark != nullptr) {
    job.timeline_mark_cycles = std::string_view(mark) == "1";
  }
  return job;
}

}  // namespace hvdrun
