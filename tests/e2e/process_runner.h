// Runs a program for an end-to-end test: argv as given (no shell), stdout and stderr captured
// separately, wall-clock time measured, and a timeout after which the program's whole process group
// is killed.
//
// Each program starts in a process group of its own, so that a timeout or the end of a test can kill
// it together with anything it started in that group. Not thread-safe; one thread drives a process.
#ifndef HVDRUN_TESTS_E2E_PROCESS_RUNNER_H_
#define HVDRUN_TESTS_E2E_PROCESS_RUNNER_H_

#include <sys/types.h>

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

namespace hvdrun::e2e {

struct ProcessOptions {
  // Added to (or replacing in) the test's own environment, as NAME=VALUE.
  std::vector<std::string> extra_env;
  // Removed from the environment the program gets.
  std::vector<std::string> unset_env;
  // Empty: the test's working directory.
  std::string working_dir;
};

struct ProcessResult {
  // The exit status when the program exited; -1 when it was killed by a signal or never started.
  int exit_code = -1;
  // The signal that ended the program, 0 when it exited.
  int term_signal = 0;
  // True when the program outlived its timeout and was killed.
  bool timed_out = false;
  // Why the program could not be started; empty when it started.
  std::string start_error;
  std::string stdout_text;
  std::string stderr_text;
  // From the start until the program was reaped.
  std::chrono::milliseconds elapsed{0};
};

// Describes a result for an assertion message; long outputs are shortened.
std::ostream& operator<<(std::ostream& out, const ProcessResult& result);

// A started program. Destroying one that has not been waited for kills its process group with
// SIGKILL and reaps it, so that a failed assertion leaves nothing behind.
class RunningProcess {
 public:
  static RunningProcess Start(const std::vector<std::string>& argv, const ProcessOptions& options = {});

  RunningProcess(RunningProcess&& other) noexcept;
  RunningProcess& operator=(RunningProcess&&) = delete;
  RunningProcess(const RunningProcess&) = delete;
  RunningProcess& operator=(const RunningProcess&) = delete;
  ~RunningProcess();

  // -1 when the program could not be started.
  pid_t pid() const { return pid_; }

  // Sends `signal` to the program itself (not to its group).
  void Signal(int signal) const;

  // Collects output until the program exits; if it still runs `timeout` after this call, kills its
  // process group and marks the result timed out. Once the program has exited, output is read until every
  // writer has closed it, for at most a further two seconds (a process the program left behind may still hold
  // it). Call at most once.
  ProcessResult Wait(std::chrono::milliseconds timeout);

 private:
  RunningProcess() = default;

  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  bool reaped_ = false;
  std::chrono::steady_clock::time_point started_;
  ProcessResult result_;
};

// Starts `argv` and waits for it; see RunningProcess::Wait for `timeout`.
ProcessResult RunProcess(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const ProcessOptions& options = {});

// True when `pid` names a process that has not yet ended; a zombie has ended.
bool IsRunning(pid_t pid);

// Polls until none of `pids` runs or `timeout` has passed; returns those still running.
std::vector<pid_t> WaitUntilEnded(const std::vector<pid_t>& pids, std::chrono::milliseconds timeout);

// Describes processes for an assertion message: each pid with its command line.
std::string DescribeProcesses(const std::vector<pid_t>& pids);

// Sends SIGKILL, when the guard goes out of scope, to every process it was given that still runs:
// programs that a test expected hvdrun to stop must not outlive a failed test.
class KillOnScopeExit {
 public:
  KillOnScopeExit() = default;
  KillOnScopeExit(const KillOnScopeExit&) = delete;
  KillOnScopeExit& operator=(const KillOnScopeExit&) = delete;
  ~KillOnScopeExit();

  void Add(pid_t pid) { pids_.push_back(pid); }

 private:
  std::vector<pid_t> pids_;
};

}  // namespace hvdrun::e2e

#endif  // HVDRUN_TESTS_E2E_PROCESS_RUNNER_H_
