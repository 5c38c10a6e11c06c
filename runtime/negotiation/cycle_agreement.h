// CycleAgreement: how the ranks agree, once a cycle, on which requests run next (the first two steps
// of negotiated_stream.h's cycle), over the control backend, in host memory:
//   1. every rank casts a ballot, a SUM allreduce of CountedFields: status flags (some rank has
//      announcements; asks for a census; stops), and one field per response-cache slot whose request
//      this rank has pending (runtime/negotiation/negotiation_message.h);
//   2. only when some rank has a request the cache cannot vouch for, or asks for a census: an
//      allgather of every rank's Announcements, which each rank's ReadinessTable turns into the same
//      conclusions.
// The ready requests come out in the order every rank runs them: the cached ones in slot order, then
// the newly agreed ones in announcement order. Once they have run, Learn puts them in the cache in
// that order, so that every rank's cache stays identical.
//
// While a rank has joined, it sets the slot of every cached allreduce (it stands in for them with
// zeros), and a cached request that is not an allreduce is announced instead, so that the readiness
// table fails it. Not thread-safe: the collective thread owns it.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_CYCLE_AGREEMENT_H_
#define HVDRUN_RUNTIME_NEGOTIATION_CYCLE_AGREEMENT_H_

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "hvdrun/status.h"
#include "runtime/backend.h"
#include "runtime/negotiation/negotiation_message.h"
#include "runtime/negotiation/pending_entries.h"
#include "runtime/negotiation/readiness_table.h"
#include "runtime/negotiation/response_cache.h"
#include "runtime/negotiation/stall_tracker.h"
#include "runtime/request/tensor_request.h"

namespace hvdrun {

class CycleAgreement {
 public:
  using Clock = std::chrono::steady_clock;

  CycleAgreement(int rank, int size, size_t cache_capacity);

  struct Result {
    bool stop = false;      // a rank stops, and so does this one, with nothing pending: the engine ends
    bool gathered = false;  // the announcements were gathered (a cycle the cache alone did not settle)
    std::vector<TensorRequest> ready;                   // run in this order
    std::optional<ReadinessTable::JoinDone> join_done;  // the cycle in which the last rank joined
  };
  // One cycle's agreement on `control`, cast from this rank's `pending` entries at `now` (which it
  // marks announced, and whose census timers it runs on `stalls`), with `join`, this rank's join
  // announcement if it joins now. `stopping`: this rank stops and has nothing pending. A name whose
  // ranks disagree fails on its own here (PendingEntries::Complete). An error breaks the runtime: the
  // control backend's, the first pending entry past the stall shutdown time, or another rank's stop
  // while this rank has work.
  StatusOr<Result> Agree(Backend& control, Clock::time_point now, bool stopping,
                         const std::optional<Announcement>& join, PendingEntries& pending,
                         const StallTracker& stalls);
  // The cache learns the requests that ran, in the order every rank ran them (also while it is off).
  void Learn(const std::vector<TensorRequest>& ran);
  // Whether the cache serves from this cycle on; every rank switches in the same cycle (the
  // autotuner's choice). Off, it is looked in for nothing but still learns what every rank ran, so
  // every rank's cache stays identical, and on again it serves in the order it was filled in:
  // emptied and filled again from the middle of a step, its order (the order cached responses run
  // in) would begin there, and a fused response of a step's tensors would no longer lie in place.
  void SetCacheEnabled(bool enabled);
  // The cache, as the ranks have filled it (tests).
  const ResponseCache& cache() const { return cache_; }

  // When the ranks last agreed, less the quickest agreement seen: a cycle's start on the last rank
  // to arrive, the same on every rank, from which the next cycle is timed.
  Clock::time_point anchor() const { return agreed_at_ - quickest_agreement_; }
  ReadinessTable& table() { return table_; }
  uint64_t cache_evictions() const { return cache_.evictions(); }

 private:
  // What this rank says in a cycle: its cached pending requests by slot in `fields`, the rest as
  // announcements in `mine`; `fields` holds every rank's sum once the ranks have agreed.
  struct Ballot {
    explicit Ballot(CountedFields empty) : fields(std::move(empty)) {}
    CountedFields fields;
    std::vector<Announcement> mine;
    std::vector<const PendingEntry*> cached;  // pending entries found in the cache, for a census
    Status timed_out;                         // the first pending entry past the stall shutdown time
  };

  Ballot Cast(Clock::time_point now, bool stopping, const std::optional<Announcement>& join,
              PendingEntries& pending, const StallTracker& stalls);
  // The SUM allreduce of the ballots' fields.
  Status Exchange(Backend& control, Clock::time_point now, Ballot& ballot);
  // The cached requests that every rank has pending.
  std::vector<TensorRequest> ReadyInCache(const CountedFields& fields) const;
  // The announcements' allgather and what the readiness table concludes from it.
  Status GatherAnnouncements(Backend& control, Clock::time_point now, Ballot& ballot, PendingEntries& pending,
                             Result* result);
  Status Gather(Backend& control, const std::vector<Announcement>& mine,
                std::vector<std::vector<Announcement>>* by_rank) const;

  const int rank_;
  const int size_;
  ResponseCache cache_;
  bool cache_enabled_ = true;
  ReadinessTable table_;
  Clock::time_point agreed_at_ = Clock::now();  // when the last cycle's allreduce returned
  Clock::duration quickest_agreement_ = std::chrono::milliseconds(1);
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_CYCLE_AGREEMENT_H_
