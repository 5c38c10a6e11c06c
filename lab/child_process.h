// ChildProcess: a program hvdrun-lab starts and watches (hvdrun for a run of a cell, a version
// probe such as `mpirun --version`).
//
// The child runs in a process group of its own, so that a Ctrl-C at the terminal reaches only
// hvdrun-lab, which decides what the child gets; and with a parent-death signal, so that when
// hvdrun-lab dies (even by SIGKILL) the child gets SIGTERM — hvdrun then stops its ranks. Its stdin
// is /dev/null; its stdout and stderr go to files, a pipe, or /dev/null. Destroying a ChildProcess
// that has not been reaped kills its process group and reaps it. Not thread-safe; the process that
// starts children must have one thread (the parent-death signal follows the forking thread).
#ifndef HVDRUN_LAB_CHILD_PROCESS_H_
#define HVDRUN_LAB_CHILD_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace hvdrun::lab {

struct ChildOptions {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH when it has no '/'
  std::string working_dir;        // empty: hvdrun-lab's
  std::string stdout_path;        // created or truncated; empty: /dev/null
  std::string stderr_path;
  int stdout_fd = -1;  // >= 0: the child's stdout instead of stdout_path (the caller keeps it open)
};

class ChildProcess {
 public:
  // Errors: "cannot run 'PROGRAM': REASON", "cannot create 'FILE': REASON", "cannot enter 'DIR': ...".
  static StatusOr<ChildProcess> Start(const ChildOptions& options);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  // The wait status (as waitpid gives it) once the child has ended; nullopt while it runs.
  std::optional<int> Poll();

  // Sends `signal` to the child itself.
  void Signal(int signal) const;

  // SIGKILL to the child's whole process group.
  void KillGroup() const;

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}

  pid_t pid_ = -1;
  std::optional<int> wait_status_;
};

// Runs `argv` with stdout on a pipe and returns what it printed (at most 64 KiB), once it exits with
// code 0 within `timeout`; otherwise an error naming the program. For version probes.
StatusOr<std::string> CaptureOutput(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// "exit code 3", "killed by SIGTERM": a wait status in words.
std::string DescribeWaitStatus(int wait_status);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_CHILD_PROCESS_H_
