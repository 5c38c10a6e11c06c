#include "launcher/mpi_command.h"

#include <arpa/inet.h>
#include <algorithm>

#include "common/env_names.h"
#include "common/host_spec.h"

namespace hvdrun {
namespace {

bool IsIpv6Address(const std::string& host) {
  in6_addr address{};
  return ::inet_pton(AF_INET6, host.c_str(), &address) == 1;
}

}  // namespace

bool IsMpiAgentVariable(std::string_view name) {
  for (const char* own : {env::kRendezvousAddr, env::kRendezvousPort, env::kSecret, env::kMpiLayout}) {
    if (name == own) return true;
  }
  return false;
}

std::string MpiLayout(const RankAssignment& assignment) {
  std::string layout;
  for (const HostRanks& host : assignment.hosts()) {
    if (!layout.empty()) layout += ",";
    layout += FormatHostSlots({host.host, static_cast<int>(host.ranks.size())});
  }
  return layout;
}

Status CheckMpiHosts(const RankAssignment& assignment) {
  for (const HostRanks& host : assignment.hosts()) {
    if (IsIpv6Address(host.host)) {
      return Status::Error(
          "--mpi: host '" + host.host +
          "' is an IPv6 address, which mpirun's -H cannot take; name this machine as localhost");
    }
  }
  if (assignment.hosts().size() > 1) {
    return Status::Error(
        "--mpi: hosts '" + assignment.hosts()[0].host + "' and '" + assignment.hosts()[1].host +
        "' are both this machine, which mpirun runs as one node; name it once (-H localhost:" +
        std::to_string(assignment.size()) + ")");
  }
  return Status::Ok();
}

MpiCommand BuildMpiCommand(const RankAssignment& assignment, const LaunchOptions& options,
                           const JobEnvironment& job, const std::string& agent_path,
                           const MpiLaunchHost& host) {
  MpiCommand command;
  std::vector<std::string>& argv = command.argv;
  argv.emplace_back("mpirun");
  if (host.as_root) argv.emplace_back("--allow-run-as-root");
  std::string layout = MpiLayout(assignment);
  for (const char* word : {"--tag-output", "-np"}) argv.emplace_back(word);
  argv.push_back(std::to_string(assignment.size()));
  argv.emplace_back("-H");
  argv.push_back(layout);
  for (const char* word : {"-bind-to", "none", "-map-by", "slot", "-mca", "pml", "ob1", "-mca", "btl",
                           "^openib", "-mca", "btl_tcp_if_include", "lo"}) {
    argv.emplace_back(word);
  }
  size_t most_ranks_on_a_host = 0;
  for (const HostRanks& ranks : assignment.hosts()) {
    most_ranks_on_a_host = std::max(most_ranks_on_a_host, ranks.ranks.size());
  }
  if (host.cpus > 0 && most_ranks_on_a_host >= static_cast<size_t>(host.cpus)) {
    for (const char* word : {"-mca", "mpi_yield_when_idle", "1"}) argv.emplace_back(word);
  }

  std::vector<std::pair<std::string, std::string>> exported = {
      {env::kBackend, job.backend},
      {env::kJobId, job.job_id},
      {env::kRendezvousAddr, job.rendezvous_addr},
      {env::kRendezvousPort, job.rendezvous_port != 0 ? std::to_string(job.rendezvous_port) : ""},
      {env::kSecret, job.secret},
      {env::kTorchMasterAddr, job.master_addr},
      {env::kTorchMasterPort, job.master_port != 0 ? std::to_string(job.master_port) : ""},
      {env::kMpiLayout, layout},
  };
  for (const std::string& entry : options.exports) {
    size_t equals = entry.find('=');
    std::string name = entry.substr(0, equals);
    std::string value = equals == std::string::npos ? "" : entry.substr(equals + 1);
    auto same =
        std::find_if(exported.begin(), exported.end(), [&](const auto& e) { return e.first == name; });
    if (same != exported.end()) {
      same->second = value;
    } else {
      exported.emplace_back(name, value);
    }
  }
  for (const auto& [name, value] : exported) {
    argv.emplace_back("-x");
    argv.push_back(name);
    command.env.push_back(name + "=" + value);
  }

  argv.insert(argv.end(), options.mpi_args.begin(), options.mpi_args.end());
  argv.push_back(agent_path);
  argv.emplace_back("--mpi-rank");
  argv.emplace_back("--");
  argv.insert(argv.end(), options.command.begin(), options.command.end());
  return command;
}

}  // namespace hvdrun
