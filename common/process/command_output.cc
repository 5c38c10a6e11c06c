#include "common/process/command_output.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/process/process_spawner.h"
#include "common/process/wait_status.h"

namespace hvdrun {
namespace {

using Clock = std::chrono::steady_clock;

// How often a command that closed its stdout is checked for having exited.
constexpr std::chrono::milliseconds kExitPollInterval{5};

int MillisecondsLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 60'000));
}

}  // namespace

StatusOr<std::string> CaptureOutput(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  SpawnOptions options;
  options.argv = argv;
  options.stdin_spec = StdioSpec::Null();
  options.stdout_spec = StdioSpec::Pipe();
  options.stderr_spec = StdioSpec::Null();
  options.own_process_group = true;
  options.parent_death_signal = SIGKILL;
  StatusOr<ChildProcess> started = SpawnProcess(options);
  if (!started.ok()) return started.status();
  ChildProcess child = std::move(started).value();  // killed with its group and reaped on return
  const std::string program = "'" + argv[0] + "'";
  const Clock::time_point deadline = Clock::now() + timeout;
  auto late = [&] {
    return Status::Error(program + " did not finish within " + std::to_string(timeout.count()) + " ms");
  };

  std::string text;
  UniqueFd& out = child.stdout_pipe();
  while (out.valid()) {
    if (Clock::now() >= deadline) return late();
    pollfd readable{out.get(), POLLIN, 0};
    if (::poll(&readable, 1, MillisecondsLeft(deadline)) <= 0) continue;
    char buffer[4096];
    ssize_t n = ::read(out.get(), buffer, sizeof(buffer));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      out.Reset();
      break;
    }
    size_t room = kMaxCapturedOutput - std::min(text.size(), kMaxCapturedOutput);
    text.append(buffer, std::min(static_cast<size_t>(n), room));
  }
  std::optional<int> status;
  while (!(status = child.Poll())) {
    if (Clock::now() >= deadline) return late();
    ::usleep(static_cast<useconds_t>(std::chrono::microseconds(kExitPollInterval).count()));
  }
  if (*status != 0) return Status::Error(program + " failed: " + DescribeWaitStatus(*status));
  return text;
}

}  // namespace hvdrun
