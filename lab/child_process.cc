#include "lab/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/file_descriptor.h"

namespace hvdrun::lab {
namespace {

constexpr size_t kMaxCapturedBytes = size_t{64} * 1024;

// What the child could not do before exec; sent to the parent over a close-on-exec pipe.
enum class SetupStep : char { kExec = 0, kStdout = 1, kStderr = 2, kWorkingDir = 3 };

struct SetupFailure {
  SetupStep step;
  int error;
};

// Opens `path` (or /dev/null) for writing onto `target_fd`; in the child, so only async-signal-safe calls.
bool RedirectOutput(const char* path, int target_fd) {
  int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  if (fd != target_fd) {
    if (::dup2(fd, target_fd) < 0) return false;
    ::close(fd);
  }
  return true;
}

// Forks and execs; returns the child's pid.
StatusOr<pid_t> Spawn(const ChildOptions& options) {
  const int stdout_fd = options.stdout_fd;
  if (options.argv.empty()) return Status::Error("cannot run an empty command");
  std::vector<char*> argv;
  for (const std::string& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const char* stdout_path = options.stdout_path.empty() ? "/dev/null" : options.stdout_path.c_str();
  const char* stderr_path = options.stderr_path.empty() ? "/dev/null" : options.stderr_path.c_str();
  Pipe report;
  if (!MakePipe(&report)) return Status::Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return Status::Error(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    auto fail = [&](SetupStep step) {
      SetupFailure failure{step, errno};
      ssize_t ignored = ::write(report.write.get(), &failure, sizeof(failure));
      (void)ignored;
      ::_exit(127);
    };
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);  // hvdrun-lab died before prctl took effect
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    int null_in = ::open("/dev/null", O_RDONLY);
    if (null_in >= 0 && null_in != STDIN_FILENO) {
      ::dup2(null_in, STDIN_FILENO);
      ::close(null_in);
    }
    if (stdout_fd >= 0) {
      if (::dup2(stdout_fd, STDOUT_FILENO) < 0) fail(SetupStep::kStdout);
    } else if (!RedirectOutput(stdout_path, STDOUT_FILENO)) {
      fail(SetupStep::kStdout);
    }
    if (!RedirectOutput(stderr_path, STDERR_FILENO)) fail(SetupStep::kStderr);
    if (!options.working_dir.empty() && ::chdir(options.working_dir.c_str()) != 0) {
      fail(SetupStep::kWorkingDir);
    }
    ::execvp(argv[0], argv.data());
    fail(SetupStep::kExec);
  }
  ::setpgid(pid, pid);  // also here, so that the group exists before Start returns
  report.write.Reset();
  SetupFailure failure{};
  ssize_t n = 0;
  do {
    n = ::read(report.read.get(), &failure, sizeof(failure));
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof(failure))) return pid;
  int ignored_status = 0;
  ::waitpid(pid, &ignored_status, 0);
  std::string reason = std::strerror(failure.error);
  switch (failure.step) {
    case SetupStep::kExec:
      return Status::Error("cannot run '" + options.argv[0] + "': " + reason);
    case SetupStep::kStdout:
      return Status::Error("cannot create '" + std::string(stdout_path) + "': " + reason);
    case SetupStep::kStderr:
      return Status::Error("cannot create '" + std::string(stderr_path) + "': " + reason);
    case SetupStep::kWorkingDir:
      return Status::Error("cannot enter '" + options.working_dir + "': " + reason);
  }
  return Status::Error("cannot run '" + options.argv[0] + "'");
}

}  // namespace

StatusOr<ChildProcess> ChildProcess::Start(const ChildOptions& options) {
  StatusOr<pid_t> pid = Spawn(options);
  if (!pid.ok()) return pid.status();
  return ChildProcess(pid.value());
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), wait_status_(other.wait_status_) {}

ChildProcess::~ChildProcess() {
  if (pid_ <= 0 || wait_status_) return;
  KillGroup();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

std::optional<int> ChildProcess::Poll() {
  if (wait_status_ || pid_ <= 0) return wait_status_;
  int status = 0;
  pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done == pid_) wait_status_ = status;
  return wait_status_;
}

void ChildProcess::Signal(int signal) const {
  if (pid_ > 0 && !wait_status_) ::kill(pid_, signal);
}

void ChildProcess::KillGroup() const {
  if (pid_ > 0) ::killpg(pid_, SIGKILL);
}

StatusOr<std::string> CaptureOutput(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  Pipe output;
  if (!MakePipe(&output)) return Status::Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  ChildOptions options;
  options.argv = argv;
  options.stdout_fd = output.write.get();
  StatusOr<ChildProcess> started = ChildProcess::Start(options);
  if (!started.ok()) return started.status();
  ChildProcess child = std::move(started).value();
  output.write.Reset();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto late = [&] {
    return Status::Error("'" + argv[0] + "' did not finish within " + std::to_string(timeout.count()) +
                         " ms");
  };
  std::string text;
  while (true) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return late();
    pollfd readable{output.read.get(), POLLIN, 0};
    int ready = ::poll(&readable, 1, static_cast<int>(left.count()));
    if (ready <= 0) continue;
    char buffer[4096];
    ssize_t n = ::read(output.read.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, std::min(static_cast<size_t>(n),
                                 kMaxCapturedBytes - std::min(text.size(), kMaxCapturedBytes)));
  }
  std::optional<int> status;
  while (!(status = child.Poll())) {
    if (std::chrono::steady_clock::now() >= deadline) return late();
    ::usleep(10'000);
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return Status::Error("'" + argv[0] + "' ended with " + DescribeWaitStatus(*status));
  }
  return text;
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return "exit code " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(wait_status));
    return std::string("killed by SIG") + (name != nullptr ? name : std::to_string(WTERMSIG(wait_status)));
  }
  return "ended";
}

}  // namespace hvdrun::lab
