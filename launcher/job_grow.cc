#include <cstdio>
#include <string>
#include <vector>

#include "common/placement/rank_environment.h"
#include "launcher/job_run.h"

// JobRun's part that grows an elastic job for its driver (WorkerStarter, launcher/elastic/
// elastic_driver.h): agents on hosts that discovery added, and ranks started while the job runs,
// through the launcher's growth calls (launcher/rank_launcher.h).
namespace hvdrun {

WorkerStarter::HostState JobRun::HostStateOf(const std::string& host, std::string* why) {
  auto known = launcher_hosts_.find(host);
  if (known == launcher_hosts_.end()) return HostState::kNew;
  const int index = known->second;
  switch (launcher_->StatusOf(index, why)) {
    case RankLauncher::HostStatus::kReaching:
      return HostState::kReaching;
    case RankLauncher::HostStatus::kGone:
      // Its ranks' ends said what happened; a later growth may start an agent there again.
      launcher_hosts_.erase(known);
      networks_.erase(host);
      return HostState::kNew;
    case RankLauncher::HostStatus::kFailedToStart:
      launcher_hosts_.erase(known);
      return HostState::kFailed;
    case RankLauncher::HostStatus::kReady:
      break;
  }
  if (networks_.count(host) > 0) return HostState::kReady;
  // Newly ready: its place on the job's network, by the launch's rule.
  if (!any_remote_ && !launcher_->host(index).this_machine) {
    *why =
        "the job's rendezvous service listens on loopback (every host it started on is this machine), "
        "which this host cannot reach";
    launcher_hosts_.erase(known);
    return HostState::kFailed;
  }
  StatusOr<HostNetwork> network = NetworkOf(index, host);
  if (!network.ok()) {
    *why = "--network-interface: " + network.status().message();
    launcher_hosts_.erase(known);
    return HostState::kFailed;
  }
  networks_[host] = std::move(network).value();
  Verbose("host " + host + ": agent ready for new ranks, job traffic on " + networks_[host].address);
  return HostState::kReady;
}

void JobRun::ReachHost(const HostSlots& host) { launcher_hosts_[host.host] = launcher_->AddHost(host); }

Status JobRun::StartWorker(int index, const std::vector<WorkerPlace>& places, size_t place,
                           const std::vector<std::string>& variables) {
  // The round as a placement (host-major, as its places are), for the rank's environment.
  std::vector<HostSlots> hosts;
  JobEnvironment environment = job_launch_.environment;
  environment.host_networks.clear();
  for (const WorkerPlace& other : places) {
    if (!hosts.empty() && hosts.back().host == other.host) {
      ++hosts.back().slots;
      continue;
    }
    hosts.push_back(HostSlots{other.host, 1});
    auto network = networks_.find(other.host);
    environment.host_networks.push_back(network != networks_.end() ? network->second : HostNetwork{});
  }
  StatusOr<RankAssignment> round = RankAssignment::Assign(hosts, static_cast<int>(places.size()));
  if (!round.ok()) return round.status();
  const WorkerPlace& mine = places.at(place);
  protocol::RankLaunch launch{index, job_launch_.command,
                              BuildRankEnvironment(round.value(), mine.rank, environment),
                              job_launch_.working_dir};
  for (const std::string& variable : variables) {
    const size_t equals = variable.find('=');
    SetEnvironmentValue(launch.env, variable.substr(0, equals).c_str(), variable.substr(equals + 1));
  }
  if (static_cast<int>(outcomes_.size()) <= index) outcomes_.resize(index + 1);
  RankOutcome& outcome = outcomes_[index];
  outcome.rank = index;
  outcome.host = mine.host;
  if (!options_.output_dir.empty()) {
    // Its own files, named by the round it starts in and its rank there (output_router.h).
    const std::string dir = options_.output_dir + "/" +
                            RoundRankDirName(elastic_->round(), mine.rank, static_cast<int>(places.size()));
    if (Status files = output_.AddRankFiles(index, dir); !files.ok()) {
      std::fprintf(stderr, "hvdrun: %s; its output goes to the console only\n", files.message().c_str());
    }
  }
  Status launched = launcher_->LaunchMore(launcher_hosts_.at(mine.host), {std::move(launch)});
  if (!launched.ok()) {
    outcome.lost_reason = "did not start: " + launched.message();
    outcome.heard = ends_heard_++;
    return launched;
  }
  Verbose("process " + std::to_string(index) + " (rank " + std::to_string(mine.rank) + " of " +
          std::to_string(places.size()) + " in round " + std::to_string(elastic_->round()) +
          ") starting on " + mine.host);
  return Status::Ok();
}

}  // namespace hvdrun
