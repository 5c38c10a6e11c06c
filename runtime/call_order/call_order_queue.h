// CallOrderQueue: the engine of CollectiveOrder::kCallOrder (runtime/runtime_impl.h), where the order
// of the calls is the agreement: requests run in submission order, one at a time, without a cycle,
// and nothing is negotiated (the negotiated engine is runtime/negotiation/negotiated_stream.h).
//
// Submitted requests wait in the queue for the collective thread (RunQueued). A blocking call (Run)
// that finds the queue idle, with nothing queued and nothing running, runs on the caller's thread
// instead, as RunAfterQueue always does: that saves two thread hand-offs per call, which on a loaded
// machine cost as much as a small allreduce. Order is kept because a call only runs inline when every
// earlier one has finished. Every request runs through the Runner the owner gives, which holds the
// backend's lock, so that the backend is never used by two threads at once.
//
// The first failure (a request's, or one given to Break) is kept: queued and later requests complete
// with it without running, marked failed on the rank's progress board (common/progress/rank_board.h).
//
// Thread-safe: Submit, Run, RunAfterQueue, Break, Stop and broken from any thread; RunQueued from the
// collective thread only.
#ifndef HVDRUN_RUNTIME_CALL_ORDER_CALL_ORDER_QUEUE_H_
#define HVDRUN_RUNTIME_CALL_ORDER_CALL_ORDER_QUEUE_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "hvdrun/collective_handle.h"
#include "hvdrun/status.h"
#include "runtime/backend.h"
#include "runtime/compression/compressed_allreduce.h"
#include "runtime/request/tensor_request.h"

namespace hvdrun {

class CallOrderQueue {
 public:
  // A request with its buffers, and where the caller's stream stood when it was made.
  struct Pending {
    TensorRequest request;
    const void* send = nullptr;
    void* recv = nullptr;
    BackendMemory::ReadyMark ready;
    std::shared_ptr<CollectiveHandle::State> state;  // set for a queued request
  };
  // Runs one request on the calling thread and returns its result; must not throw.
  using Runner = std::function<Status(const Pending&)>;

  explicit CallOrderQueue(Runner run) : run_(std::move(run)) {}

  // Queues `pending`; the handle completes when it has run (at once if the queue is broken).
  CollectiveHandle Submit(Pending pending);
  // Runs `pending` on this thread when the queue is idle; else queues it and waits for it.
  Status Run(Pending pending);
  // Waits until the queue is idle (or broken), then runs `pending` on this thread.
  Status RunAfterQueue(const Pending& pending);
  // The collective thread: runs queued requests until Stop was called and the queue is empty.
  void RunQueued();
  // RunQueued returns once the queue is empty.
  void Stop();
  // Refuses every later request with `status`, unless a failure is kept already.
  void Break(const Status& status);
  // The failure kept, or OK.
  Status broken() const;

 private:
  // Runs `pending` on this thread; active_ must already count it.
  Status RunInline(const Pending& pending);

  const Runner run_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;  // queue_, active_, broken_ or stopping_ changed
  std::deque<Pending> queue_;        // GUARDED_BY(mutex_)
  int active_ = 0;                   // GUARDED_BY(mutex_): requests taken off the queue or
                                     // running inline that have not finished
  bool stopping_ = false;            // GUARDED_BY(mutex_)
  Status broken_;                    // GUARDED_BY(mutex_): the first failure, or OK
};

// A call-order request on `backend`: its order is the agreement. An allgather of varied counts first
// gathers them (the negotiated path has them from its announcements).
Status RunInCallOrder(Backend& backend, CompressedAllreduce& compressed, int rank, int size,
                      const TensorRequest& request, const void* send, void* recv);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_CALL_ORDER_CALL_ORDER_QUEUE_H_
