// ReadinessTable: which names announced through negotiation's slow path every rank has submitted.
//
// Every rank keeps one and feeds it the same announcements (every rank's list, gathered each slow
// cycle), so every rank draws the same conclusions in the same order, with no coordinator: a name
// is ready when all ranks have announced it, and the names that became ready in one cycle are run
// in the order they were first announced (cycle, then rank, then place in that rank's list).
// Cached names never pass through here; stall probes of cached names are kept for one cycle only,
// to name who is missing.
//
// Join (Horovod's hvd.join): a rank that announces kJoin has joined. Until every rank has, a name is
// ready when every rank that has not joined has announced it: an allreduce then runs with the joined
// ranks contributing zeros, any other collective fails on the ranks that submitted it (as Horovod:
// broadcast, allgather and barrier are not supported while a rank has joined). When the last rank
// joins, the join completes on every rank with the rank that joined last (the last announcement in
// rank order of the last cycle that had one, as Horovod's coordinator counts them) and the largest
// count of unnamed calls any rank made, and the table forgets the joins.
//
// Not thread-safe: the collective thread owns it.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_READINESS_TABLE_H_
#define HVDRUN_RUNTIME_NEGOTIATION_READINESS_TABLE_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/negotiation/negotiation_message.h"
#include "runtime/request/tensor_request.h"

namespace hvdrun {

class ReadinessTable {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ReadinessTable(int size);

  struct Failure {
    std::string name;
    std::string error;  // one line
  };
  // Every rank has joined: Runtime::Join returns.
  struct JoinDone {
    int last_rank = -1;
    uint64_t unnamed_calls = 0;  // the most any rank made (Announcement::Kind::kJoin)
  };
  struct Outcome {
    std::vector<TensorRequest> ready;      // run in this order on every rank
    std::vector<Failure> failed;           // announced by every rank, but not alike, or not an
                                           // allreduce while a rank has joined
    std::vector<std::string> invalidated;  // names whose cache entries every rank erases now
    std::optional<JoinDone> joined;        // set in the cycle the last rank joined
  };
  // Applies one slow cycle's announcements; by_rank[r] is rank r's list.
  Outcome Apply(const std::vector<std::vector<Announcement>>& by_rank, Clock::time_point now);

  struct Waiting {
    std::string name;
    std::vector<int> submitted;  // ranks that have it pending
    std::vector<int> missing;    // ranks that have not submitted it (a joined rank is in neither)
    Clock::duration waited;
  };
  // Names some ranks have submitted and others not, for at least `limit`: those announced and not
  // yet ready, and the cached ones probed in the last Apply (whatever their age: a rank probes
  // only when one of its requests has waited past the limit).
  std::vector<Waiting> Stalled(Clock::time_point now, Clock::duration limit) const;
  // Drops the last Apply's probes (once they have been reported).
  void ForgetProbes() { probes_.clear(); }
  // Names announced by some ranks and not yet ready.
  size_t pending() const { return entries_.size(); }
  // Whether some rank announced `name` and it is not yet ready (the same on every rank).
  bool Announced(const std::string& name) const { return entries_.count(name) > 0; }
  // Whether `rank` has joined and the others have not all joined yet.
  bool joined(int rank) const { return joined_[static_cast<size_t>(rank)]; }
  int joined_count() const { return joined_count_; }

 private:
  struct Entry {
    TensorRequest request;  // as the first rank announced it
    int request_rank = 0;   // that rank
    std::vector<bool> announced;
    std::vector<uint64_t> counts;  // each rank's request.count
    int count = 0;
    uint64_t order = 0;
    Clock::time_point since;
    std::string mismatch;  // the first difference seen, or empty
  };
  struct Probe {
    std::vector<bool> pending;
    Clock::time_point since;
  };

  // Apply's steps, one announcement of `rank` each: a Join (with the unnamed calls it has made), a
  // stall probe, and a request, which is true when every rank has now announced it.
  void RecordJoin(int rank, uint64_t unnamed_calls);
  void RecordProbe(int rank, const std::string& name, Clock::time_point now);
  bool RecordRequest(int rank, const TensorRequest& request, Clock::time_point now);
  // Moves the `completed` entries into `outcome`, ready or failed, in the order they were first
  // announced, and forgets them.
  void Conclude(const std::vector<std::string>& completed, Outcome& outcome);
  // The Join that every rank has now made, which ends: the table's join state starts afresh.
  JoinDone EndJoin();
  // Whether the ranks that announced `entry` and the joined ranks are every rank.
  bool Covered(const Entry& entry) const;
  // The failure of a ready entry, or empty when it runs.
  std::string FailureOf(const Entry& entry) const;

  const int size_;
  uint64_t next_order_ = 0;
  std::vector<bool> joined_;
  int joined_count_ = 0;
  int last_joined_ = -1;
  uint64_t joined_unnamed_calls_ = 0;
  std::unordered_map<std::string, Entry> entries_;
  std::unordered_map<std::string, Probe> probes_;  // the last Apply's stall probes
};

// "allreduce of float32 x 1000 sum", and ", shape [10, 100]" when the caller gave one: a request's
// parameters in an error message.
std::string DescribeRequest(const TensorRequest& request);
// "[10, 100]".
std::string ShapeText(const std::vector<int64_t>& shape);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_READINESS_TABLE_H_
