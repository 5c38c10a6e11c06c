#include "agent/rank_spawner.h"

#include <signal.h>

#include <cerrno>
#include <cstring>

#include "common/process/process_spawner.h"

namespace hvdrun {
namespace {

std::string Quote(const std::string& text) { return "'" + text + "'"; }

// The rank's spawn error and its line, as docs/protocol.md lists them under RankExited.
void DescribeFailure(const SpawnFailure& failure, const protocol::RankLaunch& launch,
                     const std::string& message, SpawnedRank* result) {
  const std::string reason = std::strerror(failure.error_number);
  const int error = failure.error_number;
  switch (failure.step) {
    case SpawnStep::kEmptyCommand:
      result->spawn_error = protocol::SpawnError::kNotFound;
      result->error = message;
      return;
    case SpawnStep::kPipe:
    case SpawnStep::kFork:
      result->spawn_error = protocol::SpawnError::kOther;
      result->error = message;
      return;
    case SpawnStep::kWorkingDir:
      result->spawn_error = protocol::SpawnError::kWorkingDir;
      result->error = "cannot enter working directory " + Quote(launch.working_dir) + " (" + reason + ")";
      return;
    case SpawnStep::kExec:
      if (error == ENOENT || error == ENOTDIR) {
        result->spawn_error = protocol::SpawnError::kNotFound;
        result->error = "command not found: " + Quote(launch.argv[0]) + " (" + reason + ")";
        return;
      }
      if (error == EACCES || error == ENOEXEC) {
        result->spawn_error = protocol::SpawnError::kNotExecutable;
        result->error = "command not executable: " + Quote(launch.argv[0]) + " (" + reason + ")";
        return;
      }
      break;
    case SpawnStep::kProcessGroup:
    case SpawnStep::kParentDeathSignal:
    case SpawnStep::kStdin:
    case SpawnStep::kStdout:
    case SpawnStep::kStderr:
      break;
  }
  result->spawn_error = protocol::SpawnError::kOther;
  result->error = "cannot start " + Quote(launch.argv[0]) + " (" + reason + ")";
}

}  // namespace

SpawnedRank SpawnRank(const protocol::RankLaunch& launch, const RankSpawnOptions& options) {
  const bool pipes = options.capture == OutputCapture::kPipes;
  SpawnOptions spawn;
  spawn.argv = launch.argv;
  spawn.env_mode = EnvironmentMode::kInheritWith;
  spawn.env = launch.env;
  spawn.working_dir = launch.working_dir;
  spawn.stdin_spec = StdioSpec::Null();
  spawn.stdout_spec = pipes ? StdioSpec::Pipe() : StdioSpec::Inherit();
  spawn.stderr_spec = pipes ? StdioSpec::Pipe() : StdioSpec::Inherit();
  spawn.own_process_group = options.own_process_group;
  spawn.parent_death_signal = SIGKILL;

  SpawnedRank result;
  SpawnFailure failure;
  StatusOr<ChildProcess> child = SpawnProcess(spawn, &failure);
  if (!child.ok()) {
    DescribeFailure(failure, launch, child.status().message(), &result);
    return result;
  }
  result.stdout_fd = std::move(child->stdout_pipe());
  result.stderr_fd = std::move(child->stderr_pipe());
  result.pid = child->Release();
  return result;
}

}  // namespace hvdrun
