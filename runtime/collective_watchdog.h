// CollectiveWatchdog: watches the collective that a rank's collective thread has inside its backend,
// for what the stall check cannot see: a collective that does not come back out (a peer hung inside
// Gloo, MPI or NCCL, a lost link, or, in call order, a peer that has not made the call yet).
//
// The collective thread calls Enter before each backend call and Exit after it. A thread of the
// watchdog's own wakes every min(warn_after / 4, 1 s) and, when the call has been in the backend for
// warn_after (the stall check time, HOROVOD_STALL_CHECK_TIME_SECONDS, or HVDRUN_WATCHDOG_SECONDS),
// logs one line, and again each time it has waited that much longer (never more often):
//   watchdog: rank 0: 'grad.w' (allreduce, 4096 bytes) has been in the gloo backend for 61 s, after
//   every rank submitted it; no stall shutdown time is set (HOROVOD_STALL_SHUTDOWN_TIME_SECONDS), so it waits
// The line adds which ranks the call waits for where the backend can tell (Backend::Progress: the
// shared-memory barrier's arrivals). When abort_after is set (the stall shutdown time) and passed, it asks
// the backend to end the call (Backend::RequestAbort: NCCL aborts its communicator so that the process can
// exit) and Exit then returns the watchdog's error naming the collective, instead of the backend's own. A
// backend that cannot end a call from another thread ends it at its own limit
// (BackendContext::collective_limit).
//
// Off (no thread) when warn_after is zero (HOROVOD_STALL_CHECK_DISABLE=1). Thread-safe: Enter and
// Exit from the collective thread (one call at a time), the rest from the watchdog's thread.
#ifndef HVDRUN_RUNTIME_COLLECTIVE_WATCHDOG_H_
#define HVDRUN_RUNTIME_COLLECTIVE_WATCHDOG_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "hvdrun/status.h"
#include "runtime/backend.h"

namespace hvdrun {

struct WatchdogSettings {
  int rank = 0;
  std::string backend;  // the backend's name, for messages: "gloo"
  // What a call still in the backend waits for, appended to each line: ", after every rank
  // submitted it" where the ranks agreed on the call first (negotiation).
  std::string waiting_for;
  std::chrono::milliseconds warn_after{60000};  // 0: the watchdog is off
  std::chrono::milliseconds abort_after{0};     // 0: never aborts
  // Where each line goes; by default (null) standard error, as "libhvdrun: LINE".
  std::function<void(const std::string&)> log;
};

// What is in the backend, for messages.
struct WatchedCall {
  std::string name;  // what the call is, quoted where it is a name: "'grad.w'"; empty: "a call"
  const char* op = "allreduce";
  size_t bytes = 0;
};

// WatchdogSettings::warn_after for a job with `negotiation`'s settings: zero with the stall check off,
// else NegotiationOptions::watchdog, or the stall warning time when that is zero.
inline std::chrono::milliseconds WatchdogTime(const NegotiationOptions& negotiation) {
  if (!negotiation.stall_check) return std::chrono::milliseconds(0);
  return negotiation.watchdog.count() > 0 ? negotiation.watchdog : negotiation.stall_warning;
}

class CollectiveWatchdog {
 public:
  using Clock = std::chrono::steady_clock;

  // `backend` (not owned; outlives the watchdog) is asked to end a call past abort_after.
  CollectiveWatchdog(WatchdogSettings settings, Backend* backend);
  ~CollectiveWatchdog();
  CollectiveWatchdog(const CollectiveWatchdog&) = delete;
  CollectiveWatchdog& operator=(const CollectiveWatchdog&) = delete;

  void Enter(WatchedCall call);
  // The call returned `status`: returns it, or the watchdog's error if it aborted the call.
  Status Exit(Status status);

 private:
  void Watch();
  // The line about the call in the backend since `entered`, at `now`. Under mutex_.
  std::string Describe(Clock::time_point now) const;

  const WatchdogSettings settings_;
  Backend* const backend_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;           // GUARDED_BY(mutex_)
  bool inside_ = false;             // GUARDED_BY(mutex_): a call is in the backend
  WatchedCall call_;                // GUARDED_BY(mutex_)
  Clock::time_point entered_;       // GUARDED_BY(mutex_)
  Clock::time_point next_warning_;  // GUARDED_BY(mutex_)
  bool abort_requested_ = false;    // GUARDED_BY(mutex_): for the call in the backend
  std::thread thread_;              // last: started once the rest is set
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_COLLECTIVE_WATCHDOG_H_
