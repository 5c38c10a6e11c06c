#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/exit_codes.h"
#include "launcher/job_run.h"

// JobRun's part that follows an elastic job (launcher/elastic/elastic_driver.h): its first hosts,
// the ends its driver takes, and its rounds: which processes make the current round, and how the
// console, the stall check and the job's report show them (by their rank in the round).
namespace hvdrun {

bool JobRun::PrepareElastic() {
  if (!options_.elastic || options_.elastic->discovery_script.empty()) return true;
  StatusOr<std::vector<HostSlots>> hosts = FirstDiscoveredHosts(
      *options_.elastic, options_.num_proc, options_.start_timeout_s,
      [](const std::string& line) { std::fprintf(stderr, "hvdrun: %s\n", line.c_str()); });
  if (!hosts.ok()) {
    std::fprintf(stderr, "hvdrun: %s\n", hosts.status().message().c_str());
    start_failure_code_ = kExitLaunchFailure;
    return false;
  }
  options_.hosts = std::move(hosts).value();
  return true;
}

bool JobRun::ElasticTakesEnd(int rank, const std::string& why) {
  return elastic_ != nullptr && elastic_->WorkerEnded(rank, why.empty(), why);
}

std::vector<JobRound> JobRun::Rounds() const {
  if (elastic_ != nullptr) return elastic_->rounds();
  if (!launched_) return {};
  return {LaunchRound(assignment_)};
}

std::vector<RankOutcome> JobRun::JudgedOutcomes() const {
  if (elastic_ == nullptr) return outcomes_;
  // The last round's ranks, by their rank in it; the failures the job went on without are not its
  // failure.
  std::vector<RankOutcome> outcomes;
  for (int process : RoundProcesses()) {
    RankOutcome outcome = outcomes_[process];
    outcome.process = process;
    outcome.rank = static_cast<int>(outcomes.size());
    if (elastic_->TookFailure(process)) {
      outcome.stop_requested = true;
      outcome.stopped_by_hvdrun = true;
    }
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

std::vector<int> JobRun::RoundProcesses() const {
  if (elastic_ != nullptr) return elastic_->current_round();
  std::vector<int> processes(outcomes_.size());
  for (size_t i = 0; i < processes.size(); ++i) processes[i] = static_cast<int>(i);
  return processes;
}

int JobRun::RoundRankOf(int process) const {
  if (elastic_ == nullptr) return process;
  const std::vector<int>& round = elastic_->current_round();
  auto found = std::find(round.begin(), round.end(), process);
  return found != round.end() ? static_cast<int>(found - round.begin()) : -1;
}

std::string JobRun::ProcessName(int process) const {
  if (elastic_ == nullptr) return "rank " + std::to_string(process);
  const int rank = RoundRankOf(process);
  const std::string name = "process " + std::to_string(process);
  return rank < 0 ? name : "rank " + std::to_string(rank) + " (" + name + ")";
}

void JobRun::WatchRound() {
  const std::vector<int> processes = RoundProcesses();
  if (elastic_ != nullptr) {
    watched_round_ = elastic_->round();
    for (size_t rank = 0; rank < processes.size(); ++rank) {
      output_.ShowAs(processes[rank], static_cast<int>(rank));
    }
  }
  // The stall check compares the ranks of one round: it starts again with each round's.
  if (gathering_) FinishRecorders();
  records_.clear();
  stall_ = std::make_unique<StallInspector>(ReadStallSettings(options_.exports, std::getenv),
                                            static_cast<int>(processes.size()), clock_());
  for (int process : processes) {
    const RankOutcome& outcome = outcomes_[process];
    if (outcome.pid > 0) RankProgressed(RankState{.rank = process, .host = outcome.host, .pid = outcome.pid});
  }
}

}  // namespace hvdrun
