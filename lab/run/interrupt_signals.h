// SIGINT, SIGTERM and SIGHUP as hvdrun-lab handles them: not fatal, but counted, so that the
// matrix loop can stop cleanly — pass the signal on to the running hvdrun, wait for it, discard
// the half-made run — and exit with 128 + the signal's number. SIGUSR1 is counted apart: it asks
// the running cell's hvdrun for its ranks' states (passed on as SIGUSR1; the cell goes on).
#ifndef HVDRUN_LAB_RUN_INTERRUPT_SIGNALS_H_
#define HVDRUN_LAB_RUN_INTERRUPT_SIGNALS_H_

namespace hvdrun::lab {

// Signals received: the last one's number and how many in all ({0, 0}: none).
struct InterruptRequest {
  int signal = 0;
  int count = 0;
  int status_requests = 0;  // SIGUSR1s received
};

// Installs the handlers, once, before any child is started. Returns false (errno set) on failure.
bool InstallInterruptHandlers();

// What the handlers have counted so far; async-signal-safe to update, cheap to poll.
InterruptRequest PendingInterrupts();

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_RUN_INTERRUPT_SIGNALS_H_
