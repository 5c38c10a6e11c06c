#include "tests/e2e/process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "tests/e2e/detached_spawn.h"
#include "tests/e2e/scratch_dir.h"

extern char** environ;

namespace hvdrun::e2e {
namespace {

using Clock = std::chrono::steady_clock;

// How long output is still read after the program exited, for writers it left behind.
constexpr std::chrono::milliseconds kDrainAfterExit{2000};
constexpr int kPollIntervalMs = 10;
// Outputs longer than this are shortened in assertion messages.
constexpr size_t kShownOutputBytes = 4000;

std::vector<std::string> BuildEnvironment(const ProcessOptions& options) {
  auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  auto replaced = [&](const std::string& name) {
    for (const std::string& unset : options.unset_env) {
      if (unset == name) return true;
    }
    for (const std::string& extra : options.extra_env) {
      if (name_of(extra) == name) return true;
    }
    return false;
  };
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!replaced(name_of(*entry))) env.emplace_back(*entry);
  }
  env.insert(env.end(), options.extra_env.begin(), options.extra_env.end());
  return env;
}

std::string Shortened(const std::string& text) {
  if (text.size() <= kShownOutputBytes) return text;
  return text.substr(0, kShownOutputBytes) + "\n... (" + std::to_string(text.size() - kShownOutputBytes) +
         " more bytes)";
}

// Reads what is available on `*fd` into `sink`; closes it and sets it to -1 at end of file.
void ReadAvailable(int* fd, std::string* sink) {
  char buffer[64 * 1024];
  while (true) {
    ssize_t n = ::read(*fd, buffer, sizeof(buffer));
    if (n > 0) {
      sink->append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    ::close(*fd);
    *fd = -1;
    return;
  }
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const ProcessResult& result) {
  out << "\n--- process result: ";
  if (!result.start_error.empty()) {
    out << "not started: " << result.start_error;
  } else if (result.term_signal != 0) {
    out << "killed by signal " << result.term_signal;
  } else {
    out << "exit code " << result.exit_code;
  }
  if (result.timed_out) out << " (timed out)";
  out << ", " << result.elapsed.count() << " ms\n--- stdout:\n"
      << Shortened(result.stdout_text) << "\n--- stderr:\n"
      << Shortened(result.stderr_text) << "\n---";
  return out;
}

RunningProcess RunningProcess::Start(const std::vector<std::string>& argv, const ProcessOptions& options) {
  RunningProcess process;
  process.started_ = Clock::now();
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    process.result_.start_error = std::string("pipe: ") + std::strerror(errno);
    return process;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    process.result_.start_error = std::string("pipe: ") + std::strerror(errno);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return process;
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  if (!options.working_dir.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, options.working_dir.c_str());
  }

  std::vector<std::string> env = BuildEnvironment(options);
  StatusOr<pid_t> pid = SpawnDetached(argv, actions, Detach::kProcessGroup, &env);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (!pid.ok()) {
    process.result_.start_error = "cannot run '" + argv[0] + "': " + pid.status().message();
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return process;
  }
  process.pid_ = pid.value();
  process.stdout_fd_ = out_pipe[0];
  process.stderr_fd_ = err_pipe[0];
  ::fcntl(process.stdout_fd_, F_SETFL, O_NONBLOCK);
  ::fcntl(process.stderr_fd_, F_SETFL, O_NONBLOCK);
  return process;
}

RunningProcess::RunningProcess(RunningProcess&& other) noexcept
    : pid_(other.pid_),
      stdout_fd_(other.stdout_fd_),
      stderr_fd_(other.stderr_fd_),
      reaped_(other.reaped_),
      started_(other.started_),
      result_(std::move(other.result_)) {
  other.pid_ = -1;
  other.stdout_fd_ = -1;
  other.stderr_fd_ = -1;
}

RunningProcess::~RunningProcess() {
  if (pid_ > 0 && !reaped_) {
    ::killpg(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
  if (stderr_fd_ >= 0) ::close(stderr_fd_);
}

void RunningProcess::Signal(int signal) const {
  if (pid_ > 0 && !reaped_) ::kill(pid_, signal);
}

ProcessResult RunningProcess::Wait(std::chrono::milliseconds timeout) {
  if (pid_ < 0) return result_;
  const Clock::time_point deadline = Clock::now() + timeout;
  Clock::time_point exited_at;
  while (true) {
    if (!reaped_) {
      int status = 0;
      pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        reaped_ = true;
        exited_at = Clock::now();
        result_.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(exited_at - started_);
        if (WIFSIGNALED(status)) {
          result_.term_signal = WTERMSIG(status);
        } else {
          result_.exit_code = WEXITSTATUS(status);
        }
      }
    }
    Clock::time_point now = Clock::now();
    if (reaped_ && ((stdout_fd_ < 0 && stderr_fd_ < 0) || now >= exited_at + kDrainAfterExit)) break;
    if (!reaped_ && !result_.timed_out && now >= deadline) {
      ::killpg(pid_, SIGKILL);
      result_.timed_out = true;
    }

    pollfd fds[2];
    nfds_t count = 0;
    for (int fd : {stdout_fd_, stderr_fd_}) {
      if (fd >= 0) fds[count++] = {fd, POLLIN, 0};
    }
    if (::poll(fds, count, kPollIntervalMs) > 0) {
      if (stdout_fd_ >= 0) ReadAvailable(&stdout_fd_, &result_.stdout_text);
      if (stderr_fd_ >= 0) ReadAvailable(&stderr_fd_, &result_.stderr_text);
    }
  }
  return result_;
}

ProcessResult RunProcess(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const ProcessOptions& options) {
  return RunningProcess::Start(argv, options).Wait(timeout);
}

bool IsRunning(pid_t pid) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  // The state follows the command name, which is in parentheses and may itself hold ") ".
  size_t name_end = line.rfind(')');
  if (name_end == std::string::npos || name_end + 2 >= line.size()) return false;
  char state = line[name_end + 2];
  return state != 'Z' && state != 'X';
}

std::vector<pid_t> WaitUntilEnded(const std::vector<pid_t>& pids, std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  while (true) {
    std::vector<pid_t> running;
    for (pid_t pid : pids) {
      if (IsRunning(pid)) running.push_back(pid);
    }
    if (running.empty() || Clock::now() >= deadline) return running;
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollIntervalMs));
  }
}

std::string DescribeProcesses(const std::vector<pid_t>& pids) {
  std::string text = std::to_string(pids.size()) + " processes:";
  for (pid_t pid : pids) {
    std::string command = ReadFileBytes("/proc/" + std::to_string(pid) + "/cmdline");
    std::replace(command.begin(), command.end(), '\0', ' ');
    text += " [" + std::to_string(pid) + " " + command + "]";
  }
  return text;
}

KillOnScopeExit::~KillOnScopeExit() {
  for (pid_t pid : pids_) {
    if (IsRunning(pid)) ::kill(pid, SIGKILL);
  }
}

}  // namespace hvdrun::e2e
