// ProcessExitWatch: a descriptor that becomes readable when a child process ends, so that a poll
// loop waits for that end as for any other event rather than polling waitpid on a timer.
//
// It is a Linux pidfd (pidfd_open, kernel 5.3 and later). The watch is opened while the child is
// alive and unreaped, so the pid cannot have been reused; it stays readable after the child has been
// reaped. On an older kernel the watch is invalid (fd() is -1) and the caller falls back to a short
// poll interval. Not thread-safe; owns its descriptor.
#ifndef HVDRUN_LAUNCHER_AGENTS_PROCESS_EXIT_WATCH_H_
#define HVDRUN_LAUNCHER_AGENTS_PROCESS_EXIT_WATCH_H_

#include <sys/types.h>

#include <chrono>

#include "common/process/file_descriptor.h"

namespace hvdrun {

class ProcessExitWatch {
 public:
  ProcessExitWatch() = default;  // watches nothing
  // Watches `pid`, a child of this process that has not been reaped yet.
  static ProcessExitWatch Of(pid_t pid);

  bool valid() const { return fd_.valid(); }
  // Readable (POLLIN) once the process has ended; -1 for no watch.
  int fd() const { return fd_.get(); }
  // Waits up to `timeout` for the process to end; true once it has. False at once for no watch.
  bool WaitFor(std::chrono::milliseconds timeout) const;

 private:
  UniqueFd fd_;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_AGENTS_PROCESS_EXIT_WATCH_H_
