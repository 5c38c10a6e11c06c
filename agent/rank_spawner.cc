#include "agent/rank_spawner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace hvdrun {
namespace {

// What a child that failed to start writes to its status pipe before exiting.
struct ExecFailure {
  protocol::SpawnError kind;
  int error_number;
};

[[noreturn]] void FailInChild(int status_fd, protocol::SpawnError kind) {
  ExecFailure failure{kind, errno};
  ssize_t ignored = ::write(status_fd, &failure, sizeof(failure));
  (void)ignored;
  ::_exit(127);
}

// Runs in the forked child; never returns.
[[noreturn]] void ExecRank(const protocol::RankLaunch& launch, bool own_process_group, pid_t agent_pid,
                           int stdout_fd, int stderr_fd, int status_fd) {
  if (own_process_group) ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != agent_pid) ::_exit(127);  // the agent died before prctl took effect

  sigset_t all;
  sigemptyset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);

  // stdout_fd and stderr_fd are -1 when the rank keeps the agent's own.
  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0 || ::dup2(null_fd, STDIN_FILENO) < 0 ||
      (stdout_fd >= 0 && ::dup2(stdout_fd, STDOUT_FILENO) < 0) ||
      (stderr_fd >= 0 && ::dup2(stderr_fd, STDERR_FILENO) < 0)) {
    FailInChild(status_fd, protocol::SpawnError::kOther);
  }
  if (!launch.working_dir.empty() && ::chdir(launch.working_dir.c_str()) != 0) {
    FailInChild(status_fd, protocol::SpawnError::kWorkingDir);
  }
  for (const std::string& entry : launch.env) {
    size_t equals = entry.find('=');
    if (equals == std::string::npos) continue;
    ::setenv(entry.substr(0, equals).c_str(), entry.c_str() + equals + 1, 1);
  }
  std::vector<char*> argv;
  argv.reserve(launch.argv.size() + 1);
  for (const std::string& arg : launch.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  FailInChild(status_fd, errno == ENOENT || errno == ENOTDIR   ? protocol::SpawnError::kNotFound
                         : errno == EACCES || errno == ENOEXEC ? protocol::SpawnError::kNotExecutable
                                                               : protocol::SpawnError::kOther);
}

std::string Quote(const std::string& text) { return "'" + text + "'"; }

}  // namespace

SpawnedRank SpawnRank(const protocol::RankLaunch& launch, const SpawnOptions& options) {
  SpawnedRank result;
  auto fail = [&](protocol::SpawnError kind, const std::string& message) {
    result.pid = -1;
    result.spawn_error = kind;
    result.error = message;
    return std::move(result);
  };
  if (launch.argv.empty() || launch.argv[0].empty()) {
    return fail(protocol::SpawnError::kNotFound, "empty command");
  }
  Pipe out;
  Pipe err;
  Pipe status;
  bool pipes = options.capture == OutputCapture::kPipes;
  if ((pipes && (!MakePipe(&out) || !MakePipe(&err))) || !MakePipe(&status)) {
    return fail(protocol::SpawnError::kOther, std::string("cannot create pipes: ") + std::strerror(errno));
  }
  pid_t agent_pid = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return fail(protocol::SpawnError::kOther, std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    ExecRank(launch, options.own_process_group, agent_pid, out.write.get(), err.write.get(),
             status.write.get());
  }

  // Both sides set the group, so that it exists before either side relies on it.
  if (options.own_process_group) ::setpgid(pid, pid);
  out.write.Reset();
  err.write.Reset();
  status.write.Reset();

  ExecFailure failure{};
  ssize_t n;
  do {
    n = ::read(status.read.get(), &failure, sizeof(failure));
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof(failure))) {
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    std::string reason = std::strerror(failure.error_number);
    switch (failure.kind) {
      case protocol::SpawnError::kNotFound:
        return fail(failure.kind, "command not found: " + Quote(launch.argv[0]) + " (" + reason + ")");
      case protocol::SpawnError::kNotExecutable:
        return fail(failure.kind, "command not executable: " + Quote(launch.argv[0]) + " (" + reason + ")");
      case protocol::SpawnError::kWorkingDir:
        return fail(failure.kind,
                    "cannot enter working directory " + Quote(launch.working_dir) + " (" + reason + ")");
      default:
        return fail(failure.kind, "cannot start " + Quote(launch.argv[0]) + " (" + reason + ")");
    }
  }
  if (pipes) {
    SetNonBlocking(out.read.get());
    SetNonBlocking(err.read.get());
  }
  result.pid = pid;
  result.stdout_fd = std::move(out.read);
  result.stderr_fd = std::move(err.read);
  return result;
}

}  // namespace hvdrun
