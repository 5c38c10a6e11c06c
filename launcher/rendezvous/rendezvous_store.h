// RendezvousStore: what hvdrun's rendezvous service keeps for its job — the key-value table that
// ranks bootstrap through (common/protocol/key_value_table.h, capped by RendezvousLimits) and the end-of-run
// reports they send, and the timeline files that ranks on other hosts send in pieces — and the
// answer to each of their requests.
//
// Thread safety: Answer() and TimedOut() are called on the service's thread; Reports(),
// ValuesWithPrefix() and KeepTimelines() may be called from any thread, while the service runs.
#ifndef HVDRUN_LAUNCHER_RENDEZVOUS_RENDEZVOUS_STORE_H_
#define HVDRUN_LAUNCHER_RENDEZVOUS_RENDEZVOUS_STORE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/protocol/key_value_table.h"
#include "common/protocol/rendezvous_protocol.h"
#include "launcher/rendezvous/rendezvous_server.h"

namespace hvdrun {

class RendezvousStore {
 public:
  explicit RendezvousStore(const RendezvousLimits& limits);

  // The answer to a request (rendezvous::IsRequest), or std::nullopt for a get or wait that must
  // wait: ask again after a change (version() moves), and answer TimedOut() once its timeout
  // (rendezvous::WaitTimeout) has passed.
  std::optional<rendezvous::Message> Answer(const rendezvous::Message& request);
  rendezvous::Message TimedOut(const rendezvous::Message& request) const;
  // Moves on every change to the table.
  uint64_t version() const;

  // Reports received so far, by rank (a rank that reports twice keeps its last).
  std::map<int, std::string> Reports() const;
  // The keys of the table that begin with `prefix`, with their values, as they are now.
  std::map<std::string, std::string> ValuesWithPrefix(std::string_view prefix) const;
  // Timeline pieces are written to DIR/rank-R.json from now on; before, they are refused.
  void KeepTimelines(std::string dir);

  // Largest timeline piece, and largest copy of one rank's timeline.
  static constexpr size_t kMaxTimelinePieceBytes = size_t{16} << 20;
  static constexpr uint64_t kMaxTimelineBytes = uint64_t{1} << 30;

 private:
  rendezvous::Message AnswerReport(const rendezvous::ReportRequest& request);
  rendezvous::Message AnswerTimeline(const rendezvous::TimelineRequest& request);

  const RendezvousLimits limits_;
  mutable std::mutex mutex_;
  KeyValueTable table_;                 // GUARDED_BY(mutex_)
  std::map<int, std::string> reports_;  // GUARDED_BY(mutex_)
  size_t report_bytes_ = 0;             // GUARDED_BY(mutex_)
  std::string timeline_dir_;            // GUARDED_BY(mutex_): empty: timelines are refused
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_RENDEZVOUS_RENDEZVOUS_STORE_H_
