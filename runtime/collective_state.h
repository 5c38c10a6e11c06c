// CollectiveHandle::State: what a handle shares with the collective thread that completes it.
//
// Thread-safe: Complete is called once, by the collective thread (or at once by the submitting
// thread for a call that is refused before it is queued); Wait and Ready from any thread.
#ifndef HVDRUN_RUNTIME_COLLECTIVE_STATE_H_
#define HVDRUN_RUNTIME_COLLECTIVE_STATE_H_

#include <condition_variable>
#include <memory>
#include <mutex>

#include "hvdrun/export.h"
#include "hvdrun/runtime.h"
#include "hvdrun/status.h"

namespace hvdrun {

struct HVDRUN_NO_EXPORT CollectiveHandle::State {
  void Complete(Status result);
  // A handle that is already complete with `result`.
  static CollectiveHandle Completed(Status result);

  mutable std::mutex mutex;
  std::condition_variable completed;
  bool done = false;  // GUARDED_BY(mutex)
  Status status;      // GUARDED_BY(mutex)
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_COLLECTIVE_STATE_H_
