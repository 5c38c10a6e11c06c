// The state of a process as Linux shows it in /proc/<pid>/stat (the letter after the command
// name), in the agent protocol's words.
#ifndef HVDRUN_COMMON_PROGRESS_PROCESS_STATE_H_
#define HVDRUN_COMMON_PROGRESS_PROCESS_STATE_H_

#include <sys/types.h>

#include <string_view>

#include "common/protocol/agent_protocol.h"

namespace hvdrun::progress {

// The state that a /proc/<pid>/stat line gives: kUnknown when the line is not one.
protocol::ProcessState ParseProcessState(std::string_view stat_line);

// /proc/<pid>/stat's state now; kUnknown when it cannot be read (no such process).
protocol::ProcessState ReadProcessState(pid_t pid);

// "running", "sleeping", "stopped", ... for messages.
std::string_view ProcessStateName(protocol::ProcessState state);

}  // namespace hvdrun::progress

#endif  // HVDRUN_COMMON_PROGRESS_PROCESS_STATE_H_
