#include "launcher/job_start.h"

#include <signal.h>
#include <sys/signalfd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "launcher/local_host.h"

namespace hvdrun {

StatusOr<RankAssignment> PlanLocalJob(const LaunchOptions& options) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign(options.hosts, options.num_proc);
  if (!assignment.ok()) return assignment.status();
  for (const HostRanks& host : assignment.value().hosts()) {
    if (!IsLocalHost(host.host)) {
      return Status::Error("host '" + host.host +
                           "' is not this machine, and this hvdrun starts ranks on this machine only (use "
                           "localhost, 127.0.0.1 or this machine's own name or address)");
    }
  }
  return assignment;
}

std::vector<RankOutcome> InitialOutcomes(const RankAssignment& assignment) {
  std::vector<RankOutcome> outcomes;
  for (const RankPlacement& place : assignment.ranks()) {
    RankOutcome outcome;
    outcome.rank = place.rank;
    outcome.host = assignment.hosts()[place.host_index].host;
    outcomes.push_back(outcome);
  }
  return outcomes;
}

std::string NewJobId() {
  std::random_device random;
  char id[17];
  std::snprintf(id, sizeof(id), "%08x%08x", random(), random());
  return id;
}

StatusOr<std::unique_ptr<RendezvousServer>> StartJobRendezvous(const std::string& secret) {
  StatusOr<std::unique_ptr<RendezvousServer>> server = RendezvousServer::Start(
      kRendezvousAddress, secret,
      [](const std::string& line) { std::fprintf(stderr, "hvdrun: %s\n", line.c_str()); });
  return server;  // its errors already say "rendezvous: "
}

StatusOr<UniqueFd> WatchJobSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set, sig);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  UniqueFd fd(::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!fd.valid()) return Status::Error(std::string("cannot watch signals: ") + std::strerror(errno));
  return fd;
}

}  // namespace hvdrun
