// SignalWatch: the signals a process's event loop reacts to — a stop (SIGINT, SIGTERM, SIGHUP) and
// SIGCHLD — read from a descriptor it polls beside its others. hvdrun's job, hvdrun-agent and
// `hvdrun-agent --mpi-rank` each take their process's own (WatchProcessSignals); tests give JobRun
// signals of their own (launcher/fake_rank_launcher.h).
#ifndef HVDRUN_COMMON_PROCESS_SIGNAL_WATCH_H_
#define HVDRUN_COMMON_PROCESS_SIGNAL_WATCH_H_

#include <sys/types.h>

#include <initializer_list>
#include <memory>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun {

struct ReceivedSignal {
  int number = 0;
  pid_t sender = 0;  // the process that sent it (the kernel's siginfo); 0 when unknown
};

class SignalWatch {
 public:
  virtual ~SignalWatch() = default;
  // Readable while a signal is pending.
  virtual int fd() const = 0;
  // The pending signals, in the order they came; empty when none is.
  virtual std::vector<ReceivedSignal> Take() = 0;
};

// Blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD (and the signals in `more`: hvdrun's SIGUSR1, which
// asks a running job for its ranks' states) in the calling thread, ignores SIGPIPE, and returns
// the signals that then arrive. Call it before starting any thread: threads inherit the mask, and
// a thread that did not block them would take them instead (SIGINT would then end the process on
// the spot). Children must unblock them before they exec (common/process/process_spawner.h does).
// The error is one line.
StatusOr<std::unique_ptr<SignalWatch>> WatchProcessSignals(std::initializer_list<int> more = {});

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PROCESS_SIGNAL_WATCH_H_
