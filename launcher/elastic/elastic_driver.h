// ElasticDriver: the elastic half of a job's lifecycle (docs/elastic.md), which JobRun calls into
// when LaunchOptions::elastic is set. It keeps the job's workers (one per process hvdrun started,
// by JobRun's launch index), the hosts it may use (--host-discovery-script's newest good list, or
// the static hosts, which can only be lost), the blacklist, and the rounds; and it writes the keys
// of the contract into the job's rendezvous store.
//
// Lifecycle: round 0 is the launch (every worker's place is its rank; Begin() writes its keys).
// A worker of the current round that fails (exits non-zero, is killed, or is lost with its agent)
// does not stop the job: its host is blacklisted, and once no other end has arrived for
// kSettleTime, the next round is planned (round_planner.h) from the live workers on the usable
// hosts; its keys `elastic/<r>/rank/<worker_id>` (a place, or `removed`) are written, then
// `elastic/round`, and one line says what changed. A host that leaves discovery re-forms the job
// the same way. With fewer than --min-np places the job waits, planning again on every Tick(), and
// fails after --elastic-timeout; a re-formation past --reset-limit fails it too. Once a worker of
// the current round exits 0 the job is finishing: it ends when the round's workers have ended, and
// a failure then stops it as in a job that is not elastic.
//
// Growth (with --host-discovery-script and a WorkerStarter): when the usable hosts change
// (discovery adds hosts or slots, a cooldown ends) and the next round would hold new workers (up
// to --max-np), the driver has their hosts reached (an agent each) and, once all of them are ready
// or failed (a host whose agent did not start is blacklisted), plans the round with the new
// workers, adds 1 to `elastic/hosts_updated`, writes the round's keys and `elastic/round`, and
// starts the new workers (HVDRUN_ROUND: the new round). The running workers re-form at their
// next commit (HostsUpdatedInterrupt). A re-formation after a failure adds new workers on hosts
// that are ready and does not wait for the others. A host that leaves discovery adds 1 to
// `elastic/hosts_updated` too, so that its workers learn at the next commit that they are removed.
// Once a worker of a round with new workers exits 0, every live worker is `removed` in one more
// round (never announced): new workers still waiting for the survivors stop waiting and exit 0.
//
// Not thread-safe: JobRun's thread calls every method (the discovery thread is HostDiscovery's).
#ifndef HVDRUN_LAUNCHER_ELASTIC_ELASTIC_DRIVER_H_
#define HVDRUN_LAUNCHER_ELASTIC_ELASTIC_DRIVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/placement/host_spec.h"
#include "common/placement/rank_assignment.h"
#include "hvdrun/status.h"
#include "launcher/elastic/elastic_options.h"
#include "launcher/elastic/host_blacklist.h"
#include "launcher/elastic/host_discovery.h"
#include "launcher/elastic/round_planner.h"
#include "launcher/results/job_round.h"

namespace hvdrun {

// How long the driver waits after a worker's end for the ends that come with it (the other ranks
// of a lost host) before it plans the next round.
inline constexpr double kSettleSeconds = 0.5;

// The first hosts of a job with --host-discovery-script: the script's output, less the hosts
// options.allowed does not hold, once it holds `num_proc` slots, run every second for at most
// `start_timeout_s` (a failing run, or hosts left out while too few slots remain, is a warning
// through `say`); the error says what the script last gave.
StatusOr<std::vector<HostSlots>> FirstDiscoveredHosts(const ElasticOptions& options, int num_proc,
                                                      int start_timeout_s,
                                                      const std::function<void(const std::string&)>& say);

// How the driver grows a job: agents on new hosts and workers started while the job runs (JobRun
// implements it over its launcher).
class WorkerStarter {
 public:
  enum class HostState {
    kNew,       // no agent runs there (none was started, or it is gone): ReachHost() starts one
    kReaching,  // its agent is starting
    kReady,     // its agent runs and takes new workers
    kFailed,    // its agent did not start (`why` says why); said once, the host is kNew after
  };
  virtual ~WorkerStarter() = default;
  virtual HostState HostStateOf(const std::string& host, std::string* why) = 0;
  virtual void ReachHost(const HostSlots& host) = 0;
  // Starts worker `index` (the next launch index) at `places[place]`, its place in the round whose
  // places (by rank) are `places`, with `variables` (NAME=VALUE, the contract's) set last. An error
  // is one line: the worker did not start.
  virtual Status StartWorker(int index, const std::vector<WorkerPlace>& places, size_t place,
                             const std::vector<std::string>& variables) = 0;
};

class ElasticDriver {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic
  using SetKey = std::function<void(const std::string& key, const std::string& value)>;
  using Say = std::function<void(const std::string& line)>;  // one line, without "hvdrun: "

  // `first`: round 0's placement; `hosts`: the hosts it was placed on. `verbose` lines go to `say`
  // only when set.
  ElasticDriver(ElasticOptions options, const RankAssignment& first, std::vector<HostSlots> hosts, Say say,
                bool verbose, Clock clock = nullptr);
  ~ElasticDriver();
  ElasticDriver(const ElasticDriver&) = delete;
  ElasticDriver& operator=(const ElasticDriver&) = delete;

  // With --host-discovery-script, the job grows through `starter` (not owned; it outlives the
  // driver). Call before Begin().
  void AllowGrowth(WorkerStarter* starter) { starter_ = starter; }

  // The contract's variables for worker `index` (HVDRUN_ELASTIC, HVDRUN_WORKER_ID, HVDRUN_ROUND,
  // HVDRUN_ELASTIC_TIMEOUT_SECONDS), NAME=VALUE; HVDRUN_ROUND is the round it was started in.
  std::vector<std::string> RankVariables(int index) const;
  // Writes round 0's keys through `set_key` (kept for later rounds) and starts discovery. Call once
  // the job's signals are blocked.
  void Begin(SetKey set_key);
  // Worker `index` ended: with exit 0 (`succeeded`), or failed as `why` says ("killed by SIGKILL").
  // Returns true when the driver takes the end in its stride; false when it stops the job (a
  // failure while finishing).
  bool WorkerEnded(int index, bool succeeded, const std::string& why);
  // Once per turn of the job's loop: discovery, re-formation, the timeout. Returns true when the
  // job must stop because it failed (failure() says why).
  bool Tick();

  // Milliseconds until Tick() has something due (the settle time of a re-formation ends); -1: nothing
  // is due before the job's loop turns anyway.
  int WakeInMs() const;

  // Every process has ended: a re-formation still due (no worker was left for it) fails the job.
  void JobEnded();

  bool failed() const { return !failure_.empty(); }
  // Why the job failed, and the hosts it lost and why: the lines of the job's report.
  std::vector<std::string> FailureReport() const;
  // Worker `index` failed and the driver took its end (the job went on without it).
  bool TookFailure(int index) const { return workers_.at(index).failure_taken; }
  // Workers started so far (launch indexes 0 to workers() - 1).
  int workers() const { return static_cast<int>(workers_.size()); }
  // The launch indexes of the current round's workers, by rank.
  const std::vector<int>& current_round() const { return current_; }
  int round() const { return round_; }
  // For --results' plan.json: the elastic settings ("min_np", "max_np" (null: no bound),
  // "host_discovery_script" (null: static hosts), "elastic_timeout_s", "reset_limit",
  // "blacklist_cooldown_range").
  nlohmann::json PlanJson() const;
  // Every round formed so far, round 0 (formed by Begin(), at 0 s) first; for summary.json.
  const std::vector<JobRound>& rounds() const { return rounds_; }
  // For summary.json: "rounds" (how many), "final_round", "failure" (null when it did not fail),
  // "hosts_lost" ({host: why}).
  nlohmann::json SummaryJson() const;

 private:
  struct Worker {
    std::string id;
    std::string host;
    int round = 0;  // the round it was started in
    bool alive = true;
    bool in_round = true;  // has a place in the current round
    bool failure_taken = false;
  };
  void WatchDiscovery();
  // Notes a change of the usable hosts: growth may be due.
  void WatchUsableHosts();
  void Reform();
  // The next round from the live workers of the current one (and, when the job grows, new workers:
  // `index_of` maps every id of the plan to its launch index). False while a growth waits for its
  // hosts' agents; `reaching` names the hosts it does not wait for.
  bool PlanNext(RoundPlan& plan, std::map<std::string, int>& index_of, std::vector<std::string>& reaching);
  // Whether the agents of the hosts of `plan`'s new workers are ready; reaches those without one,
  // blacklists those whose agent failed (false then: the plan is stale).
  bool NewHostsReady(const RoundPlan& plan, std::vector<std::string>& reaching);
  void StartNewWorkers(const RoundPlan& plan, const std::map<std::string, int>& index_of);
  void Announce(const std::vector<std::string>& hosts_before, const std::vector<std::string>& grown_on,
                double since);
  // A worker of a round with new workers exited 0: the others stop waiting for a round (see above).
  void ReleaseWaitingWorkers();
  void Publish(const RoundPlan& plan, const std::map<std::string, int>& index_of);
  void Fail(std::string why);
  std::vector<std::string> HostsOf(const std::vector<int>& workers) const;

  const ElasticOptions options_;
  const Say say_;
  const bool verbose_;
  const Clock clock_;
  WorkerStarter* starter_ = nullptr;
  SetKey set_key_;
  HostBlacklist blacklist_;
  std::unique_ptr<HostDiscovery> discovery_;
  std::vector<HostSlots> usable_;  // the newest host list, blacklist not applied
  std::vector<Worker> workers_;    // by launch index
  std::vector<int> current_;       // the current round, by rank
  int round_ = 0;
  int resets_ = 0;
  bool finishing_ = false;
  // A re-formation is due: since when, the last event, and why (one phrase per event).
  std::optional<double> pending_since_;
  double last_event_ = 0;
  std::vector<std::string> pending_why_;
  bool notice_due_ = false;  // the next round adds 1 to elastic/hosts_updated (a host left)
  int64_t notices_ = 0;      // elastic/hosts_updated
  // Growth: the usable hosts last seen, and since when a growth has been looked for.
  std::vector<HostSlots> last_usable_;
  std::optional<double> grow_since_;
  std::optional<double> below_since_;        // fewer than --min-np places since then
  size_t below_places_ = 0;                  // how many places, at the last plan
  std::map<std::string, std::string> lost_;  // host -> why it was lost (the first reason)
  double began_ = 0;                         // when Begin() formed round 0 (clock_)
  std::vector<JobRound> rounds_;
  std::string failure_;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_ELASTIC_ELASTIC_DRIVER_H_
