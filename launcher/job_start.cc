#include "launcher/job_start.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "common/network_interfaces.h"

namespace hvdrun {

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

StatusOr<std::unique_ptr<RendezvousServer>> StartJobRendezvous(const std::string& secret,
                                                               const std::string& address) {
  StatusOr<std::unique_ptr<RendezvousServer>> server = RendezvousServer::Start(
      address, secret, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  return server;  // its errors already say "rendezvous: ", its log lines "hvdrun: rendezvous: "
}

StatusOr<std::string> ThisMachineInterfaceAddress(const std::vector<std::string>& names) {
  char name[256] = {};
  std::string host = ::gethostname(name, sizeof(name) - 1) == 0 ? name : "localhost";
  StatusOr<std::string> address = ChooseInterfaceAddress(ListInterfaceAddresses(), names, host);
  if (!address.ok()) return Status::Error("--network-interface: " + address.status().message());
  return address;
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
