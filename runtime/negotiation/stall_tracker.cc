#include "runtime/negotiation/stall_tracker.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "common/error_text.h"

namespace hvdrun {

StallTracker::StallTracker(const NegotiationOptions& negotiation)
    : check_(negotiation.stall_check),
      stall_warning_(negotiation.stall_warning),
      shutdown_(negotiation.stall_shutdown),
      warn_(negotiation.warn) {}

Status StallTracker::TimedOut(const PendingEntry& entry, Clock::time_point now) const {
  if (!check_ || shutdown_.count() <= 0 || now - entry.submitted < shutdown_) return Status::Ok();
  return Status::Error(
      "stall: '" + entry.request.name + "' was not submitted by every rank within the stall shutdown time (" +
      DurationText(shutdown_) + ", HOROVOD_STALL_SHUTDOWN_TIME_SECONDS); the collective fails");
}

bool StallTracker::CensusDue(PendingEntry& entry, Clock::time_point now) const {
  if (!check_ || now < entry.next_census) return false;
  entry.next_census = now + stall_warning_;
  return true;
}

void StallTracker::Warn(const std::vector<ReadinessTable::Waiting>& stalled,
                        const std::vector<TensorRequest>& ready, Clock::time_point now) {
  if (!check_) return;
  std::unordered_map<std::string, Clock::time_point> still_stalled;
  for (const ReadinessTable::Waiting& waiting : stalled) {
    const bool runs_now = std::any_of(ready.begin(), ready.end(), [&](const TensorRequest& request) {
      return request.name == waiting.name;
    });
    if (waiting.missing.empty() || runs_now) continue;
    auto warned = next_warning_.find(waiting.name);
    if (warned != next_warning_.end() && now < warned->second) {
      still_stalled.insert(*warned);
      continue;
    }
    const std::string line =
        "stall: '" + waiting.name + "' was submitted by " + RankListText(waiting.submitted) +
        " and waits for " + RankListText(waiting.missing) +
        (shutdown_.count() > 0
             ? "; it fails after " + DurationText(shutdown_) + " (the stall shutdown time)"
             : "; no stall shutdown time is set (HOROVOD_STALL_SHUTDOWN_TIME_SECONDS), so it waits");
    if (warn_) {
      warn_(line);
    } else {
      std::fprintf(stderr, "libhvdrun: %s\n", line.c_str());
    }
    still_stalled[waiting.name] = now + stall_warning_;
  }
  next_warning_ = std::move(still_stalled);
}

}  // namespace hvdrun
