#include "common/process/wait_status.h"

#include <sys/wait.h>

#include <cstring>

namespace hvdrun {

std::string SignalName(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

ExitStatus ExitStatus::FromWaitStatus(int wait_status) {
  if (WIFSIGNALED(wait_status)) return {128 + WTERMSIG(wait_status), WTERMSIG(wait_status)};
  return {WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 0, 0};
}

std::string ExitStatus::Describe() const {
  return signal != 0 ? "killed by " + SignalName(signal) : "exit code " + std::to_string(exit_code);
}

std::string DescribeWaitStatus(int wait_status) {
  if (!WIFEXITED(wait_status) && !WIFSIGNALED(wait_status)) return "ended";
  return ExitStatus::FromWaitStatus(wait_status).Describe();
}

}  // namespace hvdrun
