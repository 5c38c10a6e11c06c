#include "common/wait_status.h"

#include <sys/wait.h>

#include <cstring>

namespace hvdrun {

std::string SignalName(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return "exit code " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) return "killed by " + SignalName(WTERMSIG(wait_status));
  return "ended";
}

}  // namespace hvdrun
