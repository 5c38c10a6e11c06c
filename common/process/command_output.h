// CaptureOutput: runs a short command and returns what it printed on stdout — for the probes of
// host facts (`mpirun --version`, `nvidia-smi ...`, `dpkg-query ...`).
//
// The command is started by SpawnProcess (common/process/process_spawner.h): argv as given (looked up in
// PATH), hvdrun's environment, stdin and stderr on /dev/null, stdout on a pipe, a process group of its
// own, and SIGKILL when the calling thread ends. It must end with exit code 0 within `timeout`; one
// that does not is killed with its whole process group. Thread-safe: each call has its own child.
#ifndef HVDRUN_COMMON_PROCESS_COMMAND_OUTPUT_H_
#define HVDRUN_COMMON_PROCESS_COMMAND_OUTPUT_H_

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun {

// What CaptureOutput keeps of a command's output; the rest is read and dropped.
inline constexpr size_t kMaxCapturedOutput = size_t{64} * 1024;

// The command's stdout, or one line naming the program and why it failed:
// "cannot run 'PROGRAM': REASON", "'PROGRAM' failed: exit code 1" (or "killed by SIGSEGV"),
// "'PROGRAM' did not finish within N ms".
StatusOr<std::string> CaptureOutput(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PROCESS_COMMAND_OUTPUT_H_
