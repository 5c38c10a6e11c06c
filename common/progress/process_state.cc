#include "common/progress/process_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "common/process/file_descriptor.h"

namespace hvdrun::progress {

using protocol::ProcessState;

ProcessState ParseProcessState(std::string_view stat_line) {
  // "pid (comm) S ...": comm may hold spaces and parentheses, so the state follows the last ')'.
  const size_t close = stat_line.rfind(')');
  if (close == std::string_view::npos || close + 2 >= stat_line.size() || stat_line[close + 1] != ' ') {
    return ProcessState::kUnknown;
  }
  switch (stat_line[close + 2]) {
    case 'R':
      return ProcessState::kRunning;
    case 'S':
    case 'I':
      return ProcessState::kSleeping;
    case 'D':
      return ProcessState::kDiskWait;
    case 'T':
      return ProcessState::kStopped;
    case 't':
      return ProcessState::kTraced;
    case 'Z':
    case 'X':
      return ProcessState::kZombie;
    default:
      return ProcessState::kUnknown;
  }
}

ProcessState ReadProcessState(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ProcessState::kUnknown;
  char buffer[512];
  const ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
  if (n <= 0) return ProcessState::kUnknown;
  return ParseProcessState(std::string_view(buffer, static_cast<size_t>(n)));
}

std::string_view ProcessStateName(ProcessState state) {
  switch (state) {
    case ProcessState::kRunning:
      return "running";
    case ProcessState::kSleeping:
      return "sleeping";
    case ProcessState::kDiskWait:
      return "in uninterruptible wait";
    case ProcessState::kStopped:
      return "stopped";
    case ProcessState::kTraced:
      return "stopped by a debugger";
    case ProcessState::kZombie:
      return "zombie";
    case ProcessState::kExited:
      return "exited";
    case ProcessState::kUnknown:
      break;
  }
  return "unknown";
}

}  // namespace hvdrun::progress
