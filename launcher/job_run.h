// JobRun: one run of a command over the planned ranks, from the command line's plan to hvdrun's
// exit code, whichever way the ranks are started (launcher/rank_launcher.h).
//
// Run():
//  - places the ranks (a plan that cannot be placed is exit 2), opens --output-filename's files,
//    takes over the signals (SignalWatch), and makes the job's identity and secret;
//  - has the launcher reach every host. A host that fails gets its one line, the others are still
//    waited for (each launcher bounds that by --start-timeout), and the job ends with the code of
//    the first such failure;
//  - decides, in this one place, where the job lives on the network: the address the hosts reach
//    this machine by (where the rendezvous service listens), and each host's address and interface
//    (common/host/network_interfaces.h's rule); a host without a --network-interface is exit 2;
//  - starts the rendezvous service when the job has a backend, and launches the ranks;
//  - routes their output (OutputRouter) until every rank has ended. The first rank that fails stops
//    the job: every other rank is stopped (SIGTERM, SIGKILL after a grace period). SIGINT, SIGTERM
//    or SIGHUP to hvdrun stops the job the same way; a second SIGINT kills every rank at once;
//  - runs the stall check (launcher/stall/stall_inspector.h) on the ranks' progress: a warning each
//    check time while the job is stalled, and the end of the job (exit 6) at the stall shutdown
//    time. SIGUSR1 to hvdrun prints every rank's state without disturbing the job;
//  - reports how the job ended (launcher/results/failure_report.h: the first failure's line or table, the
//    interrupt, or the launcher's own failure) and publishes the ranks' reports, the results
//    directory and each host's facts (launcher/results/results_writer.h), and merges every rank's timeline
//    (launcher/rendezvous/timeline_collector.h). When Run() returns, everything the launcher started has
//    ended.
//
// The first failure is the failing rank that ended, or was lost, before anything told it to stop,
// earliest first (by the ranks' own clocks when the launcher knows them, else in the order the
// ends arrived); without one, and without an interrupt, the earliest failure hvdrun did not cause.
//
// An elastic job (LaunchOptions::elastic) differs in this only: its failing ranks do not stop it
// while launcher/elastic/elastic_driver.h re-forms it, and it is judged by its last round's ranks.
// With --host-discovery-script and a launcher that can grow, the driver has JobRun reach new hosts
// and start new ranks while the job runs (launcher/job_grow.cc). The launcher numbers processes in
// the order they were started (the launch's ranks first); the console, --output-filename's files,
// the stall check and the job's report show each one's rank in its round (docs/elastic.md).
//
// Not thread-safe; one JobRun runs at a time (it takes over the process's signals).
#ifndef HVDRUN_LAUNCHER_JOB_RUN_H_
#define HVDRUN_LAUNCHER_JOB_RUN_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/placement/rank_assignment.h"
#include "common/process/signal_watch.h"
#include "launcher/elastic/elastic_driver.h"
#include "launcher/launch_options.h"
#include "launcher/output_router.h"
#include "launcher/rank_launcher.h"
#include "launcher/rendezvous/rendezvous_server.h"
#include "launcher/rendezvous/timeline_collector.h"
#include "launcher/results/failure_report.h"
#include "launcher/results/job_problem.h"
#include "launcher/results/job_round.h"
#include "launcher/stall/flight_recorders.h"
#include "launcher/stall/stall_inspector.h"

namespace hvdrun {

class JobRun : private RankEvents, private WorkerStarter {
 public:
  // `signals`: the signals the job reacts to; nullptr takes over the process's own (SignalWatch).
  JobRun(LaunchOptions options, std::unique_ptr<RankLauncher> launcher,
         std::unique_ptr<SignalWatch> signals = nullptr);
  ~JobRun() override;
  JobRun(const JobRun&) = delete;
  JobRun& operator=(const JobRun&) = delete;

  // Returns hvdrun's exit code (common/exit_codes.h, or the first failing rank's code).
  int Run();

  // The clock of the stall check; the steady clock unless a test gives its own.
  void SetClockForTesting(std::function<StallClock::time_point()> clock) { clock_ = std::move(clock); }

 private:
  // Run()'s steps; each returns false when the job cannot go on (the reason printed).
  bool Prepare();
  bool DecideNetwork();
  bool StartRendezvous();
  bool Launch();
  int Conclude();

  // One round of the event loop: signals, then the launcher.
  void PollOnce();
  void HandleSignals();
  void BeginStop();
  // The stall check, after each round of the loop.
  void CheckStall();
  // SIGUSR1: every rank's state, on stderr.
  void PrintRankStates();
  // A rank failed on its own: what the ranks waited for then, for the blame (the first failure's).
  void NoteFailure();
  std::optional<JobProblem> FindProblem(const std::vector<RankOutcome>& outcomes, int& first_failure) const;
  // Asks every running rank for its flight recorder; once each has answered, or after a wait,
  // FinishRecorders prints where the ranks diverge (and, with `print_last`, their last
  // collectives) and writes them into --results.
  void AskRecorders(bool print_last);
  void CheckRecorders();
  void FinishRecorders();
  void Verbose(const std::string& line) const;
  // Elastic jobs: the first hosts from discovery, and whether the driver takes rank `rank`'s end
  // (the job goes on).
  bool PrepareElastic();
  bool ElasticTakesEnd(int rank, const std::string& why);
  // "ended with exit 1 (last stderr line: ...)" or "killed by SIGKILL": a failed end of `process`,
  // `how` it ended, as the elastic driver records it.
  std::string ElasticEndText(int process, const protocol::RankExited& exit, const std::string& how) const;
  // Where host `host_index` (the launcher's) named `name` is on the job's network.
  StatusOr<HostNetwork> NetworkOf(int host_index, const std::string& name) const;

  // WorkerStarter (launcher/job_grow.cc).
  HostState HostStateOf(const std::string& host, std::string* why) override;
  void ReachHost(const HostSlots& host) override;
  Status StartWorker(int index, const std::vector<WorkerPlace>& places, size_t place,
                     const std::vector<std::string>& variables) override;
  // The outcomes the job is judged by (an elastic job's: its last round's ranks, by their rank in
  // it, failures the job went on without marked as stopped).
  std::vector<RankOutcome> JudgedOutcomes() const;
  // The processes (launch indexes) of the current round, by rank: every process in a job that is
  // not elastic. RoundRankOf: a process's rank in the current round, -1 when it has none.
  std::vector<int> RoundProcesses() const;
  int RoundRankOf(int process) const;
  // The job's rounds for summary.json: an elastic job's driver's; else round 0 once launched.
  std::vector<JobRound> Rounds() const;
  // For --verbose lines: "rank 3", in an elastic job "rank 1 (process 3)" ("process 3" outside the
  // current round).
  std::string ProcessName(int process) const;
  // From the launch and at each new round of an elastic job: the console shows the round's ranks
  // (OutputRouter::ShowAs), and the stall check starts over on them.
  void WatchRound();

  // RankEvents.
  void StartFailed(int host_index, const std::string& reason, int exit_code) override;
  void RankStarted(int rank, int pid) override;
  void RankOutput(const protocol::RankOutput& output) override;
  void RankEnded(const RankEnd& end) override;
  void RankLost(int rank, const std::string& reason, bool stop_requested) override;
  void RankProgressed(const RankState& state) override;

  LaunchOptions options_;
  std::unique_ptr<RankLauncher> launcher_;
  std::unique_ptr<SignalWatch> signals_;
  RankAssignment assignment_;
  OutputRouter output_;
  std::string job_id_;
  std::string secret_;  // the job secret; never printed or stored
  std::unique_ptr<RendezvousServer> rendezvous_;
  std::unique_ptr<TimelineCollector> timeline_;  // with --timeline-filename
  std::unique_ptr<ElasticDriver> elastic_;       // an elastic job's

  // Decided by DecideNetwork.
  std::string job_address_;  // where the hosts reach this machine; the rendezvous service's
  bool any_remote_ = false;  // some host of the launch is not this machine
  std::vector<HostNetwork> host_networks_;

  // What Launch() gave the launcher, for ranks started later; and, by host name, the launcher's
  // index of each host that has or had an agent, and each ready host's place on the network.
  JobLaunch job_launch_;
  std::map<std::string, int> launcher_hosts_;
  std::map<std::string, HostNetwork> networks_;

  std::function<StallClock::time_point()> clock_ = [] { return StallClock::now(); };
  std::unique_ptr<StallInspector> stall_;  // from the launch on, over the current round's ranks
  int watched_round_ = 0;                  // the elastic round stall_ and the console follow
  bool failure_noted_ = false;
  std::optional<StallFinding> failure_waits_;  // what the ranks waited for at the first failure
  std::optional<JobProblem> stall_shutdown_;   // the stall hvdrun ended the job on
  RankRecords records_;                        // each rank's latest flight recorder
  struct RecorderGathering {
    std::set<int> waiting;  // ranks whose recorder has not come yet
    StallClock::time_point deadline;
    bool print_last = false;
  };
  std::optional<RecorderGathering> gathering_;

  std::vector<RankOutcome> outcomes_;
  int ends_heard_ = 0;  // numbers the ends (and losses) in the order they arrive
  bool start_failed_ = false;
  int start_failure_code_ = 0;
  bool launched_ = false;
  bool stopping_ = false;
  int interrupt_signal_ = 0;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_JOB_RUN_H_
