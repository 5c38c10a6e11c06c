// JobSignals: the signals a running job reacts to (SIGINT, SIGTERM, SIGHUP, SIGCHLD), read from a
// descriptor in the job's event loop. The process's own (WatchProcessSignals) come through a
// signalfd; tests give JobRun signals of their own.
#ifndef HVDRUN_LAUNCHER_JOB_SIGNALS_H_
#define HVDRUN_LAUNCHER_JOB_SIGNALS_H_

#include <memory>
#include <vector>

#include "common/process/file_descriptor.h"
#include "hvdrun/status.h"

namespace hvdrun {

class JobSignals {
 public:
  virtual ~JobSignals() = default;
  // Readable while a signal is pending.
  virtual int fd() const = 0;
  // The pending signals, in the order they came; empty when none is.
  virtual std::vector<int> Take() = 0;
};

// Blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD in the calling thread, ignores SIGPIPE, and returns
// the signals that then arrive. Call it before starting any thread: threads inherit the mask, and
// a thread that did not block them would take them instead (SIGINT would then end hvdrun on the
// spot). Children must unblock them before they exec. The error is one line.
StatusOr<std::unique_ptr<JobSignals>> WatchProcessSignals();

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_JOB_SIGNALS_H_
