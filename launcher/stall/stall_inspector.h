// StallInspector: hvdrun's stall check, Horovod's stall inspector seen from the launcher. It is fed
// every rank's latest progress (RankState, from the agents' reports, about once a second) and the
// time, and says when the job has stalled, what it waits for, and who it waits for.
//
// A rank waits when it has submitted a collective (or is inside the backend with one) and has
// completed none for the check time. The job is stalled while some rank waits; the stall began
// when the earliest waiting rank last completed a collective (or when the inspector started, or
// first heard of the rank). A stall is found from the ranks' states alone:
//  - tensors submitted by some ranks and not others: their names, and the ranks missing them
//    (kMissingRanks); a missing rank's state says why (stopped, busy in user code, exited, silent);
//  - every submitted tensor submitted by every rank, and ranks inside the backend with it
//    (kStuckInBackend): the collective, and the ranks inside it.
// Ranks that do nothing (no rank has submitted anything) are never a stall: long validation or
// checkpointing on every rank is work.
//
// Check() warns once when a stall reaches the check time and again every check time after, never
// more often; with a shutdown time (0: never), it asks once for the job to end when the stall
// reaches it. A shutdown time below the check time is ignored (as Horovod's), which
// ShutdownIgnoredNote() says. Not thread-safe.
#ifndef HVDRUN_LAUNCHER_STALL_STALL_INSPECTOR_H_
#define HVDRUN_LAUNCHER_STALL_STALL_INSPECTOR_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "launcher/stall/rank_state.h"
#include "launcher/stall/stall_settings.h"

namespace hvdrun {

enum class StallKind {
  kMissingRanks,    // tensors submitted by some ranks and not by others
  kStuckInBackend,  // every rank submitted; the collective does not finish inside the backend
};

// "stall" or "stuck in backend": summary.json's problem kind.
const char* StallKindName(StallKind kind);

struct StallFinding {
  StallKind kind = StallKind::kMissingRanks;
  std::chrono::milliseconds stalled_for{0};
  // kMissingRanks: the tensors submitted by some ranks and not others, in the order first seen;
  // kStuckInBackend: the collectives ranks are inside.
  std::vector<std::string> tensors;
  std::vector<int> missing_ranks;  // ranks the others wait for (kStuckInBackend: the ranks inside)
  std::vector<int> waiting_ranks;  // ranks that wait for them
  // The rank to blame: the first missing rank that is not alive and working (stopped, exited,
  // silent), else the first missing rank; -1 with kStuckInBackend when no rank stands out.
  int cause_rank = -1;
  // One line per missing rank: "rank 1 (host b, pid 4242): stopped by SIGSTOP 61 s ago; ...".
  std::vector<std::string> rank_lines;
  std::string cause_state;   // the cause rank's state in words (DescribeRankState), "" without one
  bool cause_alive = false;  // the cause rank is running (working, or waiting for something else)
};

class StallInspector {
 public:
  // `ranks`: the job's size; `start`: when the ranks were launched.
  StallInspector(StallSettings settings, int ranks, StallClock::time_point start);

  // A rank's latest state (its rank, host and pid included), heard at `now`; one not `reported`
  // gives only where the rank runs (when it starts).
  void Update(const RankState& state, StallClock::time_point now);

  struct Action {
    bool warn = false;       // print FormatStallWarning(*finding()) now
    bool shut_down = false;  // end the job now: it has been stalled for the shutdown time
  };
  // Call at least once a second while the job runs.
  Action Check(StallClock::time_point now);

  // The stall as of the last Check(), while the job is stalled (warned or not); nullopt otherwise.
  const std::optional<StallFinding>& finding() const { return finding_; }
  // The last stall that was warned of, kept after the ranks moved on; nullopt before any.
  const std::optional<StallFinding>& last_warned() const { return last_warned_; }

  // Every rank's latest state, its state_age moved on to `now`.
  std::vector<RankState> StatesAt(StallClock::time_point now) const;
  const StallSettings& settings() const { return settings_; }

  // What the ranks wait for at `now`, however briefly (no check time): who a rank that fails
  // while waiting was waiting for. A rank that has ended counts as waiting for what it had
  // submitted; nullopt when no rank waits.
  std::optional<StallFinding> Explain(StallClock::time_point now) const;

  // One line for a shutdown time that is ignored, "" otherwise.
  std::string ShutdownIgnoredNote() const;

 private:
  std::optional<StallFinding> Find(StallClock::time_point now, std::chrono::milliseconds at_least) const;

  StallSettings settings_;
  std::vector<RankState> states_;
  // When each rank last completed a collective (or was first heard of, or the start).
  std::vector<StallClock::time_point> last_advance_;
  std::vector<StallClock::time_point> heard_;  // when each rank's state arrived
  std::optional<StallFinding> finding_;
  std::optional<StallFinding> last_warned_;
  // The stall being watched: when it began and when it was last warned of.
  std::optional<StallClock::time_point> stall_began_;
  std::optional<StallClock::time_point> last_warning_;
  bool shutdown_asked_ = false;
};

// The warning block, "hvdrun: stall: ..." and its indented lines, ending in a newline.
std::string FormatStallWarning(const StallFinding& finding, const StallSettings& settings);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_STALL_STALL_INSPECTOR_H_
