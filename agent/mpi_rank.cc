#include "agent/mpi_rank.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "agent/descendants.h"
#include "agent/rank_spawner.h"
#include "common/env_names.h"
#include "common/environment_reader.h"
#include "common/exit_codes.h"
#include "common/host/network_interfaces.h"
#include "common/placement/host_spec.h"
#include "common/process/file_descriptor.h"
#include "common/process/rank_exit_record.h"
#include "common/process/signal_watch.h"
#include "common/process/wait_status.h"
#include "common/protocol/job_secret.h"
#include "common/protocol/mpi_job_values.h"
#include "common/protocol/rendezvous_client.h"
#include "common/whole_number.h"

namespace hvdrun {
namespace {

using Clock = std::chrono::steady_clock;

// Agent mode's kill grace (launcher/agents/agent_launcher.cc): the most a rank gets between SIGTERM and
// SIGKILL.
constexpr std::chrono::milliseconds kMaxKillGrace{1000};
// Open MPI's default odls_base_sigkill_timeout.
constexpr std::chrono::milliseconds kDefaultSigkillTimeout{1000};
// Of mpirun's SIGTERM-to-SIGKILL interval, what the agent keeps for sending the exit record after
// its own SIGKILL to the rank: a loopback connection and two round trips take milliseconds.
constexpr std::chrono::milliseconds kRecordMargin{250};
// How much longer than mpirun's interval a stopped agent waits for mpirun's SIGKILL.
constexpr std::chrono::milliseconds kMpirunKillSlack{1000};
// Connecting to hvdrun's service: at the start, hvdrun is known to be up; at the end of a job
// that is being stopped, hvdrun may be gone, and mpirun SIGKILLs the agent soon anyway.
constexpr std::chrono::milliseconds kConnectTimeout{10'000};
constexpr std::chrono::milliseconds kConnectTimeoutWhileStopping{500};

// How the agent's variables come to be set, for the error that says one is missing.
constexpr const char* kMissingHint = "hvdrun-agent --mpi-rank runs under the mpirun that hvdrun --mpi starts";

StatusOr<int> RequiredInt(const EnvironmentReader& env, const char* name, int min, int max) {
  StatusOr<int64_t> value = env.RequiredWholeNumber(name, min, max);
  if (!value.ok()) return value.status();
  return static_cast<int>(value.value());
}

uint64_t UnixNanos() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(now.tv_nsec);
}

// Dies by `signal`, as the rank did; core dumps are off, so the agent leaves no core of its own.
[[noreturn]] void DieBySignal(int signal) {
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  std::fflush(nullptr);
  ::signal(signal, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  ::raise(signal);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  // A signal whose default action is not to end the process cannot have ended the rank either.
  std::_Exit(128 + signal);
}

class MpiRankRunner {
 public:
  explicit MpiRankRunner(std::vector<std::string> command) : command_(std::move(command)) {}

  int Run();

 private:
  // One line on stderr, naming the rank once it is known; returns the setup failure's exit code.
  int SetupFailed(const std::string& message);
  Status SetUpSignals();
  // Waits until the rank's main process has ended, handling signals meanwhile; fills record_.
  void WaitForRank();
  void HandleSignal(const ReceivedSignal& received);
  void RecordEnd(int wait_status);
  void SendExitRecord(std::unique_ptr<RendezvousClient> client);
  // Places this host on the job's network (job_.host_networks) by the rule hvdrun applies to the
  // hosts it can see (common/host/network_interfaces.h), and with --network-interface takes MASTER_ADDR
  // from rank 0's agent (or, on rank 0, gives it).
  Status PlaceOnNetwork(RendezvousClient& client, const RankAssignment& assignment);
  // After a stop by mpirun: waits for mpirun's SIGKILL to the group, for a bounded time, while
  // mpirun lives.
  void AwaitMpirunsKill();
  bool MpirunGone() const { return ::getppid() != parent_; }

  std::vector<std::string> command_;
  int rank_ = -1;
  pid_t parent_ = 0;
  pid_t rank_pid_ = -1;
  std::unique_ptr<SignalWatch> signals_;
  JobEnvironment job_;
  std::chrono::milliseconds sigkill_timeout_{kDefaultSigkillTimeout};
  std::chrono::milliseconds grace_{kMaxKillGrace};
  bool rank_ended_ = false;
  bool killed_ = false;
  Clock::time_point kill_deadline_;
  RankExitRecord record_;
};

int MpiRankRunner::SetupFailed(const std::string& message) {
  if (rank_ >= 0) {
    std::fprintf(stderr, "hvdrun-agent: rank %d: %s\n", rank_, message.c_str());
  } else {
    std::fprintf(stderr, "hvdrun-agent: --mpi-rank: %s\n", message.c_str());
  }
  return kExitLaunchFailure;
}

Status MpiRankRunner::SetUpSignals() {
  // Before anything is started, so that no stop request can be missed; the rank gets an empty mask.
  StatusOr<std::unique_ptr<SignalWatch>> signals = WatchProcessSignals();
  if (!signals.ok()) return signals.status();
  signals_ = std::move(signals).value();
  // Orphans of the rank become the agent's children, so that it can kill and reap them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  // mpirun's death reaches the agent as SIGTERM while its parent is no longer mpirun.
  parent_ = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent_) return Status::Error("mpirun exited before the rank could start");
  return Status::Ok();
}

int MpiRankRunner::Run() {
  auto lookup = [](const char* name) -> const char* { return std::getenv(name); };
  const EnvironmentReader env(lookup, kMissingHint);
  if (Status status = SetUpSignals(); !status.ok()) return SetupFailed(status.message());
  StatusOr<MpiPlacement> placement = ReadMpiPlacement(lookup);
  if (!placement.ok()) return SetupFailed(placement.status().message());
  rank_ = placement.value().rank;
  StatusOr<std::string> layout = DecodeMpiLayout(lookup);
  if (!layout.ok()) return SetupFailed(layout.status().message());
  StatusOr<RankAssignment> assignment = CheckMpiPlacement(layout.value(), placement.value());
  if (!assignment.ok()) return SetupFailed(assignment.status().message());
  StatusOr<JobEnvironment> job = DecodeMpiJobEnvironment(lookup);
  if (!job.ok()) return SetupFailed(job.status().message());
  job_ = std::move(job).value();
  sigkill_timeout_ = MpiSigkillTimeout(env.Find(env::kOmpiSigkillTimeout));
  grace_ = MpiKillGrace(sigkill_timeout_);

  // Connected before the rank starts, so that a job whose records cannot reach hvdrun runs nothing.
  StatusOr<std::unique_ptr<RendezvousClient>> client =
      RendezvousClient::Connect(job_.rendezvous_addr, job_.rendezvous_port, job_.secret, kConnectTimeout);
  if (!client.ok()) return SetupFailed(client.status().message());

  protocol::RankLaunch launch;
  launch.rank = rank_;
  launch.argv = command_;
  if (Status placed = PlaceOnNetwork(*client.value(), assignment.value()); !placed.ok()) {
    return SetupFailed(placed.message());
  }
  launch.env = BuildRankEnvironment(assignment.value(), rank_, job_);
  record_.exit.rank = rank_;
  SpawnedRank spawned = SpawnRank(launch, {.capture = OutputCapture::kInherit, .own_process_group = false});
  if (spawned.pid < 0) {
    record_.exit.exit_code =
        spawned.spawn_error == protocol::SpawnError::kNotExecutable ? kExitNotExecutable : kExitNotFound;
    record_.exit.spawn_error = spawned.spawn_error;
    record_.exit.error = spawned.error;
    record_.end_unix_ns = UnixNanos();
    SendExitRecord(std::move(client).value());
    return record_.exit.exit_code;
  }
  rank_pid_ = spawned.pid;
  record_.pid = spawned.pid;
  Status started = client.value()->Set(
      RankStartedKey(rank_), EncodeRankStartedRecord({spawned.pid, static_cast<int32_t>(::getpgrp())}));
  // The connection is not kept: nothing more is said on it until the rank exits, which may be
  // hours later.
  client.value().reset();
  if (!started.ok()) {
    ::kill(rank_pid_, SIGKILL);
    WaitForRank();
    KillAndReapDescendants(kDescendantsWait, "hvdrun-agent");
    return SetupFailed("cannot record the rank's start: " + started.message());
  }

  WaitForRank();
  // Whatever the rank started dies with it: once the rank has ended, its descendants are the
  // agent's children.
  KillAndReapDescendants(kDescendantsWait, "hvdrun-agent");
  SendExitRecord(nullptr);
  if (record_.stop_requested) AwaitMpirunsKill();
  if (record_.exit.signal != 0) DieBySignal(record_.exit.signal);
  return record_.exit.exit_code;
}

void MpiRankRunner::WaitForRank() {
  while (!rank_ended_) {
    int timeout = -1;
    if (record_.stop_requested && !killed_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(kill_deadline_ - Clock::now());
      timeout = static_cast<int>(std::max<int64_t>(left.count(), 0));
    }
    pollfd fd{signals_->fd(), POLLIN, 0};
    if (::poll(&fd, 1, timeout) < 0 && errno != EINTR) {
      // Signals can no longer be watched: end the rank rather than leave it unwatched.
      ::kill(rank_pid_, SIGKILL);
      int status = 0;
      while (::waitpid(rank_pid_, &status, 0) < 0 && errno == EINTR) {
      }
      RecordEnd(status);
      return;
    }
    for (const ReceivedSignal& received : signals_->Take()) HandleSignal(received);
    if (!rank_ended_ && record_.stop_requested && !killed_ && Clock::now() >= kill_deadline_) {
      // The rest of its process group follows once it has ended (KillAndReapDescendants).
      ::kill(rank_pid_, SIGKILL);
      killed_ = true;
    }
  }
}

void MpiRankRunner::RecordEnd(int wait_status) {
  rank_ended_ = true;
  ExitStatus end = ExitStatus::FromWaitStatus(wait_status);
  record_.exit.signal = end.signal;
  record_.exit.exit_code = end.exit_code;
  record_.end_unix_ns = UnixNanos();
}

void MpiRankRunner::HandleSignal(const ReceivedSignal& received) {
  const int sig = received.number;
  if (sig == SIGCHLD) {
    int status = 0;
    pid_t pid;
    // Orphans the agent adopted are reaped here too.
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid == rank_pid_ && !rank_ended_) RecordEnd(status);
    }
    return;
  }
  // The copy of a signal the agent passed on to its own group.
  if (received.sender == ::getpid()) return;
  if (rank_ended_) return;
  if (!record_.stop_requested) {
    record_.stop_requested = true;
    kill_deadline_ = Clock::now() + grace_;
  }
  if (MpirunGone()) {
    // Nobody will SIGKILL the group later, and nobody waits for the rank.
    ::kill(rank_pid_, SIGKILL);
    killed_ = true;
    return;
  }
  // mpirun signals the whole group, the rank included; anyone else's signal is passed on.
  if (received.sender != parent_) ::kill(0, sig);
}

void MpiRankRunner::AwaitMpirunsKill() {
  Clock::time_point deadline = Clock::now() + sigkill_timeout_ + kMpirunKillSlack;
  while (!MpirunGone() && Clock::now() < deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd fd{signals_->fd(), POLLIN, 0};
    ::poll(&fd, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    for (const ReceivedSignal& received : signals_->Take()) {
      if (received.number != SIGCHLD) continue;
      while (::waitpid(-1, nullptr, WNOHANG) > 0) {
      }
    }
  }
}

Status MpiRankRunner::PlaceOnNetwork(RendezvousClient& client, const RankAssignment& assignment) {
  const int host_index = assignment.placement(rank_).host_index;
  const std::string& host = assignment.hosts()[host_index].host;
  // A job on several hosts reaches this one at the address its traffic to hvdrun's rendezvous
  // service leaves from (hvdrun cannot see this host's interfaces under mpirun); a job all on
  // this machine keeps the host's own name, as hvdrun does.
  StatusOr<std::string> seen = HostAddress(host);
  if (assignment.hosts().size() > 1) seen = LocalAddressToward(job_.rendezvous_addr);
  if (!seen.ok()) return Status::Error("rendezvous: " + seen.status().message());
  StatusOr<HostNetwork> network =
      ChooseHostNetwork(ListInterfaceAddresses(), job_.network_interfaces, seen.value(), host);
  if (!network.ok()) return Status::Error("--network-interface: " + network.status().message());
  job_.host_networks.assign(assignment.hosts().size(), HostNetwork{});
  job_.host_networks[host_index] = network.value();
  if (job_.network_interfaces.empty()) return Status::Ok();
  if (rank_ == 0) {
    job_.master_addr = network.value().address;
    return client.Set(kMasterAddrKey, job_.master_addr);
  }
  StatusOr<std::string> master = client.Get(kMasterAddrKey, kConnectTimeout);
  if (!master.ok()) return Status::Error("MASTER_ADDR from rank 0's agent: " + master.status().message());
  job_.master_addr = std::move(master).value();
  return Status::Ok();
}

void MpiRankRunner::SendExitRecord(std::unique_ptr<RendezvousClient> client) {
  Status status = Status::Ok();
  if (client == nullptr) {
    StatusOr<std::unique_ptr<RendezvousClient>> connected =
        RendezvousClient::Connect(job_.rendezvous_addr, job_.rendezvous_port, job_.secret,
                                  record_.stop_requested ? kConnectTimeoutWhileStopping : kConnectTimeout);
    if (connected.ok()) {
      client = std::move(connected).value();
    } else {
      status = connected.status();
    }
  }
  if (client != nullptr) status = client->Set(RankExitKey(rank_), EncodeRankExitRecord(record_));
  if (status.ok()) return;
  // hvdrun cannot tell the user what happened, so the agent does, as far as it can.
  if (record_.exit.spawn_error != protocol::SpawnError::kNone) {
    std::fprintf(stderr, "hvdrun-agent: rank %d: %s\n", rank_, record_.exit.error.c_str());
  }
  if (!record_.stop_requested) {
    std::fprintf(stderr, "hvdrun-agent: rank %d: cannot send its exit record to hvdrun: %s\n", rank_,
                 status.message().c_str());
  }
}

}  // namespace

StatusOr<MpiPlacement> ReadMpiPlacement(const EnvironmentLookup& lookup) {
  const EnvironmentReader env(lookup, kMissingHint);
  constexpr int kMaxRanks = 1 << 20;
  MpiPlacement placement;
  StatusOr<int> size = RequiredInt(env, env::kOmpiSize, 1, kMaxRanks);
  if (!size.ok()) return size.status();
  placement.size = size.value();
  StatusOr<int> rank = RequiredInt(env, env::kOmpiRank, 0, placement.size - 1);
  if (!rank.ok()) return rank.status();
  placement.rank = rank.value();
  StatusOr<int> local_size = RequiredInt(env, env::kOmpiLocalSize, 1, placement.size);
  if (!local_size.ok()) return local_size.status();
  placement.local_size = local_size.value();
  StatusOr<int> local_rank = RequiredInt(env, env::kOmpiLocalRank, 0, placement.local_size - 1);
  if (!local_rank.ok()) return local_rank.status();
  placement.local_rank = local_rank.value();
  return placement;
}

StatusOr<RankAssignment> CheckMpiPlacement(const std::string& layout, const MpiPlacement& placement) {
  StatusOr<std::vector<HostSlots>> hosts = ParseHostList(layout);
  if (!hosts.ok()) return Status::Error(std::string(env::kMpiLayout) + ": " + hosts.status().message());
  StatusOr<RankAssignment> assignment = RankAssignment::Assign(hosts.value(), TotalSlots(hosts.value()));
  if (!assignment.ok()) {
    return Status::Error(std::string(env::kMpiLayout) + ": " + assignment.status().message());
  }
  const std::string where = " (check --mpi-args: mpirun must place ranks as -H and -map-by slot say)";
  if (assignment.value().size() != placement.size) {
    return Status::Error("mpirun started " + std::to_string(placement.size) +
                         " processes, but hvdrun's layout " + layout + " has " +
                         std::to_string(assignment.value().size()) + " ranks" + where);
  }
  const RankPlacement& expected = assignment.value().placement(placement.rank);
  if (expected.local_rank != placement.local_rank || expected.local_size != placement.local_size) {
    return Status::Error("mpirun placed it as local rank " + std::to_string(placement.local_rank) + " of " +
                         std::to_string(placement.local_size) + " on its node, but hvdrun's layout " +
                         layout + " has it as local rank " + std::to_string(expected.local_rank) + " of " +
                         std::to_string(expected.local_size) + " on host " +
                         assignment.value().hosts()[expected.host_index].host + where);
  }
  return assignment;
}

std::chrono::milliseconds MpiSigkillTimeout(const char* sigkill_timeout) {
  if (sigkill_timeout == nullptr) return kDefaultSigkillTimeout;
  const ParsedWholeNumber seconds = ParseWholeNumber(sigkill_timeout, 0, std::numeric_limits<int>::max());
  if (!seconds.ok()) return kDefaultSigkillTimeout;
  return std::chrono::seconds(seconds.value);
}

std::chrono::milliseconds MpiKillGrace(std::chrono::milliseconds sigkill_timeout) {
  return std::clamp(sigkill_timeout - kRecordMargin, std::chrono::milliseconds(0), kMaxKillGrace);
}

int RunMpiRank(const std::vector<std::string>& command) { return MpiRankRunner(command).Run(); }

}  // namespace hvdrun
