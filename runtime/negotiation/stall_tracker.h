// StallTracker: the negotiated engine's watch on names that wait for other ranks (Horovod's stall
// check: NegotiationOptions::stall_check, stall_warning and stall_shutdown).
//
// Three timers, each with its own input, none of them running while the stall check is off:
//   - the stall shutdown time, per pending entry from its submission (TimedOut), when one is set
//     (Horovod's default is none: a name waits as long as its ranks take): a name not submitted by
//     every rank within it fails, and breaks the runtime on every rank;
//   - a census, per pending entry that the response cache vouches for (CensusDue): once such an entry
//     has waited the stall limit, and again each time it waits that much longer, this rank asks every
//     rank to probe its cached requests, so that the readiness table learns who lacks it;
//   - a warning, per stalled name on rank 0 (Warn): the readiness table's stalled names (announced,
//     or probed in a census), each warned of once per stall limit's length of waiting, naming the ranks
//     that submitted it and those it waits for.
// Not thread-safe: the collective thread owns it.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_STALL_TRACKER_H_
#define HVDRUN_RUNTIME_NEGOTIATION_STALL_TRACKER_H_

#include <chrono>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hvdrun/options.h"
#include "hvdrun/status.h"
#include "runtime/negotiation/pending_entries.h"
#include "runtime/negotiation/readiness_table.h"
#include "runtime/request/tensor_request.h"

namespace hvdrun {

class StallTracker {
 public:
  using Clock = std::chrono::steady_clock;

  // `negotiation`'s stall settings; its `warn` gets each warning, one line, by default (null) standard
  // error, as "libhvdrun: LINE".
  explicit StallTracker(const NegotiationOptions& negotiation);

  std::chrono::milliseconds stall_warning() const { return stall_warning_; }
  // The error of an entry that has waited past the stall shutdown time at `now`, or OK.
  Status TimedOut(const PendingEntry& entry, Clock::time_point now) const;
  // Whether the cached `entry` is due for a census at `now`; if so, its next census is a stall
  // limit later.
  bool CensusDue(PendingEntry& entry, Clock::time_point now) const;
  // Rank 0: warns of each of `stalled` (ReadinessTable::Stalled) that waits for some rank and does
  // not run now (`ready`), unless it was warned of less than a stall limit ago.
  void Warn(const std::vector<ReadinessTable::Waiting>& stalled, const std::vector<TensorRequest>& ready,
            Clock::time_point now);

 private:
  const bool check_;
  const std::chrono::milliseconds stall_warning_;
  const std::chrono::milliseconds shutdown_;  // 0: none
  const std::function<void(const std::string&)> warn_;
  // Rank 0: each stalled name warned of, with when it is warned of again if it still waits.
  std::unordered_map<std::string, Clock::time_point> next_warning_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_STALL_TRACKER_H_
