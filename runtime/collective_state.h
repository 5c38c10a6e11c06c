// CollectiveHandle::State: what a handle shares with the collective thread that completes it.
//
// Thread-safe: SetQueued (at most once) and then Complete (once) are called by the collective thread
// (Complete at once by the submitting thread for a call that is refused before it is queued);
// Wait, WaitOnStream and Ready from any thread.
#ifndef HVDRUN_RUNTIME_COLLECTIVE_STATE_H_
#define HVDRUN_RUNTIME_COLLECTIVE_STATE_H_

#include <condition_variable>
#include <memory>
#include <mutex>

#include "hvdrun/collective_handle.h"
#include "hvdrun/export.h"
#include "hvdrun/status.h"
#include "runtime/backend.h"

namespace hvdrun {

struct HVDRUN_NO_EXPORT CollectiveHandle::State {
  void Complete(Status result);
  // The collective's device work is queued and ends where `waiter` makes a stream wait
  // (BackendMemory::OnQueued): WaitOnStream need not wait for Complete. Before Complete, if at all.
  void SetQueued(BackendMemory::StreamWaiter waiter);
  // Whether SetQueued or Complete has been called.
  bool queued() const;
  // A handle that is already complete with `result`.
  static CollectiveHandle Completed(Status result);

  mutable std::mutex mutex;
  std::condition_variable completed;   // done or waiter changed
  bool done = false;                   // GUARDED_BY(mutex)
  Status status;                       // GUARDED_BY(mutex)
  BackendMemory::StreamWaiter waiter;  // GUARDED_BY(mutex): set by SetQueued
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_COLLECTIVE_STATE_H_
