// WatchedBackend: a Backend in front of another that tells a CollectiveWatchdog of every call it
// passes on (runtime/collective_watchdog.h), so that a call that does not come back is named while
// it is stuck. The Runtime puts it in front of its data backend (shared memory included) whenever
// the watchdog is on; it changes nothing else: same memory, same results, same errors but for a call
// the watchdog aborted (the passing on: runtime/forwarding_backend.h).
//
// As every Backend: used by one collective thread; RequestAbort from any thread.
#ifndef HVDRUN_RUNTIME_WATCHED_BACKEND_H_
#define HVDRUN_RUNTIME_WATCHED_BACKEND_H_

#include <memory>
#include <string>
#include <utility>

#include "runtime/backend.h"
#include "runtime/collective_watchdog.h"
#include "runtime/forwarding_backend.h"

namespace hvdrun {

class WatchedBackend final : public ForwardingBackend {
 public:
  WatchedBackend(std::unique_ptr<Backend> backend, WatchdogSettings settings);
  // Watches `backend` without owning it: it must outlive this.
  WatchedBackend(Backend& backend, WatchdogSettings settings);

  // What the next calls are, for messages (WatchedCall::name), until set again.
  void set_label(std::string label) { label_ = std::move(label); }

 private:
  // Runs the call between the watchdog's Enter and Exit.
  Status Forward(const ForwardedCall& call) override;

  // A member, so destroyed before the wrapped backend (ForwardingBackend's): the watchdog's thread
  // may ask it to abort.
  CollectiveWatchdog watchdog_;
  std::string label_;
};

// Sets the label of `backend`'s next calls when it is a WatchedBackend; does nothing otherwise.
void LabelWatchedCalls(Backend& backend, std::string label);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_WATCHED_BACKEND_H_
