// RankLauncher: how a job's ranks are started and watched, behind one interface, so that one job
// lifecycle (launcher/job_run.h) serves every way of starting them. Two implementations:
// AgentLauncher (launcher/agents/agent_launcher.h: one hvdrun-agent per host, as a child process or over
// SSH) and MpirunLauncher (launcher/mpirun/mpirun_launcher.h: Open MPI's mpirun); tests drive JobRun with
// a fake one.
//
// JobRun calls a launcher in this order, all on one thread:
//   1. Reach(): start reaching every host. Reached() then says when every host has answered or
//      failed; until then JobRun polls the launcher's descriptors and calls Service().
//   2. host(i), LocalAddressTowardHosts(): what JobRun needs to place the job on the network
//      (network_interfaces.h's rule), which it decides in one place.
//   3. Launch(): start every rank.
//   4. The running loop: AddPollFds(), poll, Service(); ChildExited() on SIGCHLD; Stop() when the
//      job is to stop. Done() ends the loop.
//   5. ShutDown(), then Finish().
// Everything a launcher learns about hosts and ranks reaches JobRun through RankEvents, from inside
// these calls. A host that fails before the launch is reported with StartFailed(); after Reach(),
// JobRun may skip to ShutDown() at any step (a failed start, an interrupt, a network error).
#ifndef HVDRUN_LAUNCHER_RANK_LAUNCHER_H_
#define HVDRUN_LAUNCHER_RANK_LAUNCHER_H_

#include <poll.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/host/network_interfaces.h"
#include "common/placement/host_spec.h"
#include "common/placement/rank_assignment.h"
#include "common/placement/rank_environment.h"
#include "common/protocol/agent_protocol.h"
#include "hvdrun/status.h"
#include "launcher/stall/rank_state.h"

namespace hvdrun {

class RendezvousServer;

// What a launcher learned about one host of the job by reaching it.
struct ReachedHost {
  // The host is this machine (its agent is hvdrun's child; mpirun runs its ranks here).
  bool this_machine = false;
  // For a host that is not this machine: the address this machine reaches it at (the remote end
  // of its SSH connection, or the IPv4 address its name resolves to). Empty for this machine.
  std::string address{};
  // The host's IPv4 interfaces, when its agent reported them (interfaces_known); under mpirun
  // hvdrun cannot see them.
  bool interfaces_known = false;
  std::vector<InterfaceAddress> interfaces{};
  // A TCP port free on the host (MASTER_PORT when rank 0 runs there); 0 when none is known.
  uint16_t free_port = 0;
  // The host's facts, when they were asked for (DIR/hosts/<host>.json); empty otherwise.
  std::vector<protocol::HostFact> facts{};
};

// How one rank ended, as its launcher learned it.
struct RankEnd {
  protocol::RankExited exit;
  // The rank had been told to stop (by the job's stop) before it ended.
  bool stop_requested = false;
  // When it ended, by its host's clock, in nanoseconds since the Unix epoch; 0 when unknown (the
  // order in which ends arrive then stands for the order in which they happened).
  uint64_t end_unix_ns = 0;
  // Its pid, when the end is the first JobRun hears of it (under mpirun); 0 otherwise.
  int pid = 0;
};

// What a launcher reports. JobRun implements it; a launcher calls it from inside its own methods.
class RankEvents {
 public:
  virtual ~RankEvents() = default;
  // Before the launch: the job cannot start, because of host `host_index` (of the assignment), or
  // of no one host (-1). `reason` is one line, without the host: "<stage>: <what failed>" for a
  // host ("connect: connection refused"). `exit_code` is hvdrun's code for it: kExitLaunchFailure,
  // or kExitUsage for a job that cannot run as given. Every failing host is reported; the launcher
  // goes on reaching the others.
  virtual void StartFailed(int host_index, const std::string& reason, int exit_code) = 0;
  virtual void RankStarted(int rank, int pid) = 0;
  virtual void RankOutput(const protocol::RankOutput& output) = 0;
  virtual void RankEnded(const RankEnd& end) = 0;
  // The launcher can no longer learn how `rank` ends (its agent vanished, or under mpirun it left
  // no record): `reason` says why, in a few words ("agent failed: ..."). `stop_requested`: the job
  // was being stopped, so the loss is the stop's doing rather than a failure of its own.
  virtual void RankLost(int rank, const std::string& reason, bool stop_requested) = 0;
  // A rank's latest progress, as its agent reports it about once a second and when asked
  // (RankLauncher::RequestProgress); `state.rank` names it. A launcher that cannot see its ranks'
  // progress (mpirun's) never calls it.
  virtual void RankProgressed(const RankState& /*state*/) {}
};

// What JobRun gives Launch().
struct JobLaunch {
  // The values every rank's environment is built from (common/placement/rank_environment.h); with
  // host_networks decided.
  JobEnvironment environment;
  std::vector<std::string> command;  // argv, as typed after hvdrun's options
  std::string working_dir;           // the ranks' working directory on every host
  // The job's rendezvous service; nullptr when the job runs without one. Not owned; it outlives
  // the launcher's use of it.
  RendezvousServer* rendezvous = nullptr;
  // More NAME=VALUE variables for some ranks, by rank, set last (an elastic job's worker ids:
  // launcher/elastic/elastic_driver.h); empty or shorter: none.
  std::vector<std::vector<std::string>> rank_variables{};
};

class RankLauncher {
 public:
  enum class StopMode {
    kGraceful,  // SIGTERM to every rank, SIGKILL after a grace period
    kNow,       // SIGKILL to every rank at once
  };

  virtual ~RankLauncher() = default;

  // Starts reaching every host of `assignment`; `events` receives everything from now on and
  // outlives the launcher.
  virtual void Reach(const RankAssignment& assignment, RankEvents* events) = 0;
  // Every host has answered or failed.
  virtual bool Reached() const = 0;
  // Host `host_index` (of the assignment), valid once Reached() and the host answered.
  virtual const ReachedHost& host(int host_index) const = 0;
  // For a job with hosts that are not this machine: the address they reach this machine by, and
  // how the launcher knows it, for --verbose ("the local end of the SSH connection to server1");
  // an empty address when there is none.
  struct LocalAddress {
    std::string address{};
    std::string how{};
  };
  virtual LocalAddress LocalAddressTowardHosts() const = 0;

  // Starts every rank. An error is one line (without "hvdrun: "): nothing was started.
  virtual Status Launch(const JobLaunch& launch) = 0;

  // Appends the descriptors to poll; Service() gets them back, in the same order, after poll.
  virtual void AddPollFds(std::vector<pollfd>& fds) = 0;
  // The longest JobRun may wait in poll before calling Service() again (-1: no limit).
  virtual int PollTimeoutMs() const = 0;
  // Reads what is ready and checks the launcher's timers; `fds` are those AddPollFds added.
  virtual void Service(const pollfd* fds, size_t count) = 0;
  // hvdrun got SIGCHLD.
  virtual void ChildExited() = 0;
  // Asks for every running rank's progress now (RankEvents::RankProgressed answers), with its flight
  // recorder (its last collectives) when `with_recorder`; false when this launcher cannot see its
  // ranks' progress (mpirun's: docs/stall.md says what hvdrun sees there).
  virtual bool RequestProgress(bool /*with_recorder*/) { return false; }
  // Stops every rank that still runs (and, before the launch, every host being reached).
  virtual void Stop(StopMode mode) = 0;
  // The launcher has nothing more to report: every rank has ended or is lost.
  virtual bool Done() const = 0;

  // Ends what the launcher started (agents exit, or are killed after a wait; mpirun's records are
  // read) and reports what is still to be known. Blocks for a few seconds at most.
  virtual void ShutDown() = 0;

  // How the launcher itself ended, for the job's report.
  struct Ending {
    // A process of the launcher's own (mpirun) ended without starting any rank, or failed though
    // every rank succeeded: `description` names it and how it ended ("mpirun exited with code 1"),
    // and `exit_code` is hvdrun's code for that. Empty for a launcher without such a process.
    std::string description{};
    bool started_no_rank = false;
    bool failed = false;
    int exit_code = 0;
  };
  // What JobRun concluded about the job.
  struct Verdict {
    bool failure_found = false;  // a first failure, or an interrupt, explains the end
    bool every_rank_succeeded = false;
  };
  // Prints what the launcher held back for the end (mpirun's banners, unless hvdrun's own report
  // explains the job's end) and says how the launcher ended.
  virtual Ending Finish(const Verdict& verdict) = 0;

  // Growth, for an elastic job that discovery gives more hosts or slots
  // (launcher/elastic/elastic_driver.h): a launcher that can reach hosts and start ranks after
  // Launch() says so with CanGrow(); the others never get these calls (their defaults refuse).
  virtual bool CanGrow() const { return false; }
  // Starts reaching `host` (not reached before, or whose agent is gone) as Reach() reaches its
  // hosts, --start-timeout included; returns its host index for host(), StatusOf() and
  // LaunchMore(). Its failure reaches no RankEvents: StatusOf() says it.
  virtual int AddHost(const HostSlots& /*host*/) { return -1; }
  enum class HostStatus {
    kReaching,       // its agent has not answered yet
    kReady,          // its agent runs and takes LaunchMore()
    kFailedToStart,  // its agent never answered; `why` says why
    kGone,           // its agent answered and has failed or ended since; `why` says why
  };
  virtual HostStatus StatusOf(int /*host_index*/, std::string* why) const {
    *why = "this launcher adds no host while a job runs";
    return HostStatus::kGone;
  }
  // Starts `ranks` on host `host_index` (kReady), each numbered above every rank started before;
  // they are reported as the first ranks are. An error is one line: none of them was started.
  virtual Status LaunchMore(int /*host_index*/, const std::vector<protocol::RankLaunch>& /*ranks*/) {
    return Status::Error("this launcher starts no rank while a job runs");
  }
};

// One round of the running loop (step 4 above), shared by every loop that drives a launcher: appends
// the launcher's descriptors to `fds` (the caller's own come first), waits in poll for as long as the
// launcher allows, calls `own_ready` (when given) for the caller to read its own descriptors' revents,
// then has the launcher service its own. An interrupted poll (EINTR) leaves every revents 0.
// `wake_in_ms` (>= 0) shortens the wait to when the caller has something due.
void PollRankLauncher(RankLauncher& launcher, std::vector<pollfd>& fds,
                      const std::function<void()>& own_ready = nullptr, int wake_in_ms = -1);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_RANK_LAUNCHER_H_
