// RequestQueue: what callers hand the negotiated engine's collective thread (runtime/negotiation/
// negotiated_stream.h): submitted requests, a Join, a stop; and the engine's first failure, which
// refuses them all from then on.
//
// A name may be pending on a rank only once: Submit refuses it until its collective has completed
// (PendingEntries::Complete frees it), or until its device work is queued (CollectiveHandle::
// WaitOnStream may have returned), when only the host's wait is left: the collective thread then
// takes the new request in only once it has completed the one it runs.
//
// Thread-safe: Submit, Join, RequestStop and broken from any thread; WaitForCycle, Take, Release,
// CompleteJoin and Break from the collective thread.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_REQUEST_QUEUE_H_
#define HVDRUN_RUNTIME_NEGOTIATION_REQUEST_QUEUE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hvdrun/collective_handle.h"
#include "hvdrun/status.h"
#include "runtime/backend.h"
#include "runtime/collective_state.h"
#include "runtime/negotiation/pending_entries.h"
#include "runtime/negotiation/readiness_table.h"
#include "runtime/request/tensor_request.h"

namespace hvdrun {

class RequestQueue {
 public:
  using Clock = std::chrono::steady_clock;

  // Queues `request` with its buffers; `ready` is where the caller's work stood when it submitted
  // (BackendMemory::MarkReady). `stall_warning` starts the entry's census timer (PendingEntry::
  // next_census). Fails at once (the returned handle is complete) when the runtime is broken or
  // stopping, when this rank has joined, or when the name is pending here.
  CollectiveHandle Submit(TensorRequest request, const void* send, void* recv, BackendMemory::ReadyMark ready,
                          std::chrono::milliseconds stall_warning);
  // Asks the collective thread to join with `unnamed_calls` (this rank's count of unnamed calls) and
  // blocks until CompleteJoin or Break. Fails at once when the runtime is broken or stopping, or when
  // this rank is already joining.
  StatusOr<ReadinessTable::JoinDone> Join(uint64_t unnamed_calls);
  // Asks the collective thread to stop once everything this rank submitted has completed.
  void RequestStop();
  // The first failure (the runtime is broken), or OK.
  Status broken() const;

  // What a cycle takes from the callers.
  struct Intake {
    std::vector<PendingEntry> submitted;  // in submission order
    bool stop_requested = false;
    std::optional<uint64_t> joining;  // this rank's unnamed calls, while it joins
  };
  // Blocks until the next cycle is due: at `busy_start` when this rank has anything the ranks must
  // agree on (`pending`, or a submission, a stop or a Join queued), else at `idle_start`; a
  // submission, stop or Join that arrives meanwhile brings it forward to `busy_start`.
  void WaitForCycle(Clock::time_point busy_start, Clock::time_point idle_start, bool pending);
  Intake Take();
  // `name` may be submitted again, unless it already was (its device work was queued) and `state`
  // is no longer its latest.
  void Release(const std::string& name, const std::shared_ptr<CollectiveHandle::State>& state);
  // Every rank has joined: Join returns `done`, and Submit and Join are open again.
  void CompleteJoin(const ReadinessTable::JoinDone& done);
  // Keeps `status` as the first failure unless there is one, forgets every name, and completes the
  // Join and every request not yet taken with the first failure.
  void Break(const Status& status);

 private:
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<PendingEntry> incoming_;  // GUARDED_BY(mutex_)
  // GUARDED_BY(mutex_): names pending on this rank, with the state of the handle that last took each.
  std::unordered_map<std::string, std::shared_ptr<CollectiveHandle::State>> names_;
  bool stop_requested_ = false;  // GUARDED_BY(mutex_)
  // GUARDED_BY(mutex_): while this rank joins, the Join's handle state (null otherwise), its count of
  // unnamed calls, and what CompleteJoin gave it.
  std::shared_ptr<CollectiveHandle::State> join_;
  uint64_t join_unnamed_calls_ = 0;
  ReadinessTable::JoinDone join_done_;
  Status broken_;  // GUARDED_BY(mutex_)
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_REQUEST_QUEUE_H_
