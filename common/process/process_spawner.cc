#include "common/process/process_spawner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <utility>

extern char** environ;  // NOLINT(readability-identifier-naming): POSIX's name

namespace hvdrun {
namespace {

constexpr int kStdioCount = 3;
// execvp's search path when the environment has no PATH (glibc's default).
constexpr const char* kDefaultPath = "/bin:/usr/bin";
constexpr const char* kShell = "/bin/sh";

// What the child uses between fork and exec, all of it prepared before the fork.
struct ChildPlan {
  std::vector<std::string> candidates;  // the paths tried in turn, as execvp would
  std::vector<std::string> argv_storage;
  std::vector<std::string> shell_storage;
  std::vector<char*> argv;
  std::vector<char*> shell_argv;  // /bin/sh, a candidate (set in the child), argv[1..]
  std::vector<std::string> env_storage;
  std::vector<char*> env;  // empty: the parent's `environ`
  // The stream as StdioSpec says; for pipes, the child's end.
  StdioSpec::Kind kinds[kStdioCount] = {};
  int fds[kStdioCount] = {-1, -1, -1};
  const char* paths[kStdioCount] = {};
};

std::string EnvName(const std::string& entry) { return entry.substr(0, entry.find('=')); }

// The child's environment as NAME=VALUE entries; nullopt when it is the parent's unchanged.
std::optional<std::vector<std::string>> ChildEnvironment(const SpawnOptions& options) {
  if (options.env_mode == EnvironmentMode::kInherit) return std::nullopt;
  std::vector<std::string> given;
  std::set<std::string> removed;
  for (const std::string& entry : options.env) {
    if (entry.find('=') != std::string::npos) {
      given.push_back(entry);
    } else {
      removed.insert(entry);
    }
  }
  if (options.env_mode == EnvironmentMode::kExactly) return given;
  // The last entry for a name wins, as with setenv one after another.
  std::map<std::string, size_t> last;
  for (size_t i = 0; i < given.size(); ++i) last[EnvName(given[i])] = i;
  std::vector<std::string> merged;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string text = *entry;
    const std::string name = EnvName(text);
    if (last.count(name) == 0 && removed.count(name) == 0) merged.push_back(std::move(text));
  }
  for (size_t i = 0; i < given.size(); ++i) {
    if (last[EnvName(given[i])] == i) merged.push_back(given[i]);
  }
  return merged;
}

// The paths execvp would try for `program` with `path_variable` as PATH.
std::vector<std::string> Candidates(const std::string& program, const char* path_variable) {
  if (program.find('/') != std::string::npos) return {program};
  std::string path = path_variable != nullptr ? path_variable : kDefaultPath;
  std::vector<std::string> candidates;
  size_t start = 0;
  while (true) {
    size_t end = path.find(':', start);
    std::string dir = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    // An empty element is the working directory.
    candidates.push_back(dir.empty() ? program : dir + "/" + program);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return candidates;
}

const char* PathVariable(const std::optional<std::vector<std::string>>& env) {
  if (!env) return ::getenv("PATH");
  for (const std::string& entry : *env) {
    if (entry.rfind("PATH=", 0) == 0) return entry.c_str() + 5;
  }
  return nullptr;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

// In the child from here on: async-signal-safe calls only.

[[noreturn]] void FailInChild(int report_fd, SpawnStep step, int error_number) {
  SpawnFailure failure{step, error_number};
  ssize_t ignored = ::write(report_fd, &failure, sizeof(failure));
  (void)ignored;
  ::_exit(127);
}

// Marks every descriptor above 2 close-on-exec. close_range(2) through syscall(2) by the kernel's
// own number (__NR_close_range: glibc 2.31's headers have no SYS_close_range): glibc wraps it only
// from 2.34, and the relocatable bundle is to load with an older one (docs/bundle-baseline.md).
// kCloseRangeCloexec is Linux's CLOSE_RANGE_CLOEXEC, which headers before Linux 5.11 lack.
void CloseOthersOnExec() {
  constexpr unsigned kCloseRangeCloexec = 1U << 2;
  if (::syscall(__NR_close_range, kStdioCount, ~0U, kCloseRangeCloexec) == 0) return;
  // A kernel before 5.11.
  rlimit limit{};
  rlim_t last =
      ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY ? limit.rlim_cur : 65536;
  for (rlim_t fd = kStdioCount; fd < last; ++fd) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
}

[[noreturn]] void RunChild(ChildPlan& plan, const SpawnOptions& options, pid_t parent, int report_fd) {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    ::sigaction(sig, &action, nullptr);  // fails harmlessly for the C library's internal signals
  }
  if (options.own_process_group && ::setpgid(0, 0) != 0) {
    FailInChild(report_fd, SpawnStep::kProcessGroup, errno);
  }
  if (options.parent_death_signal != 0) {
    if (::prctl(PR_SET_PDEATHSIG, options.parent_death_signal) != 0) {
      FailInChild(report_fd, SpawnStep::kParentDeathSignal, errno);
    }
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
  }

  // Each stream's source is first copied above 2, so that setting up one stream cannot close the
  // source of another; dup2 onto 0-2 then clears close-on-exec on the copies the program keeps.
  constexpr SpawnStep kSteps[kStdioCount] = {SpawnStep::kStdin, SpawnStep::kStdout, SpawnStep::kStderr};
  int moved[kStdioCount] = {-1, -1, -1};
  for (int i = 0; i < kStdioCount; ++i) {
    int source = plan.fds[i];
    bool opened = false;
    if (plan.kinds[i] == StdioSpec::Kind::kInherit) continue;
    if (plan.kinds[i] == StdioSpec::Kind::kNull || plan.kinds[i] == StdioSpec::Kind::kFile) {
      int flags = i == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC;
      source = ::open(plan.paths[i], flags | O_CLOEXEC, 0644);
      if (source < 0) FailInChild(report_fd, kSteps[i], errno);
      opened = true;
    }
    moved[i] = ::fcntl(source, F_DUPFD_CLOEXEC, kStdioCount);
    if (moved[i] < 0) FailInChild(report_fd, kSteps[i], errno);
    if (opened) ::close(source);
  }
  for (int i = 0; i < kStdioCount; ++i) {
    if (moved[i] >= 0 && ::dup2(moved[i], i) < 0) FailInChild(report_fd, kSteps[i], errno);
  }
  CloseOthersOnExec();

  if (!options.working_dir.empty() && ::chdir(options.working_dir.c_str()) != 0) {
    FailInChild(report_fd, SpawnStep::kWorkingDir, errno);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  char** envp = plan.env.empty() ? environ : plan.env.data();
  // execvp's search: EACCES is remembered and the search goes on; a missing or unreachable
  // candidate is skipped; any other error ends it.
  bool denied = false;
  int error = ENOENT;
  for (std::string& candidate : plan.candidates) {
    ::execve(candidate.c_str(), plan.argv.data(), envp);
    error = errno;
    if (error == ENOEXEC) {
      plan.shell_argv[1] = candidate.data();
      ::execve(kShell, plan.shell_argv.data(), envp);
      FailInChild(report_fd, SpawnStep::kExec, ENOEXEC);
    }
    if (error == EACCES) {
      denied = true;
    } else if (error != ENOENT && error != ENOTDIR && error != ESTALE && error != ENODEV &&
               error != ETIMEDOUT && error != EHOSTUNREACH) {
      FailInChild(report_fd, SpawnStep::kExec, error);
    }
  }
  FailInChild(report_fd, SpawnStep::kExec, denied ? EACCES : error);
}

// Back in the parent.

StatusOr<ChildProcess> Fail(const SpawnOptions& options, SpawnFailure* out, SpawnStep step,
                            int error_number) {
  SpawnFailure failure{step, error_number};
  if (out != nullptr) *out = failure;
  return Status::Error(DescribeSpawnFailure(failure, options));
}

const char* StepName(SpawnStep step) {
  switch (step) {
    case SpawnStep::kEmptyCommand:
      return "empty command";
    case SpawnStep::kPipe:
      return "pipe";
    case SpawnStep::kFork:
      return "fork";
    case SpawnStep::kProcessGroup:
      return "process group";
    case SpawnStep::kParentDeathSignal:
      return "parent-death signal";
    case SpawnStep::kStdin:
      return "stdin";
    case SpawnStep::kStdout:
      return "stdout";
    case SpawnStep::kStderr:
      return "stderr";
    case SpawnStep::kWorkingDir:
      return "working directory";
    case SpawnStep::kExec:
      return "exec";
  }
  return "?";
}

// The command's argv, its /bin/sh fallback (for a script without #!), the paths to try and the
// environment, as the child will exec them.
void PlanCommand(const SpawnOptions& options, ChildPlan& plan) {
  plan.argv_storage = options.argv;
  plan.argv = CStrings(plan.argv_storage);
  plan.shell_storage = {kShell, ""};
  plan.shell_storage.insert(plan.shell_storage.end(), options.argv.begin() + 1, options.argv.end());
  plan.shell_argv = CStrings(plan.shell_storage);
  std::optional<std::vector<std::string>> env = ChildEnvironment(options);
  plan.candidates = Candidates(options.argv[0], PathVariable(env));
  if (env) {
    plan.env_storage = std::move(*env);
    plan.env = CStrings(plan.env_storage);
  }
}

// Each stream as its StdioSpec says, making the pipes it asks for; false (errno set) when a pipe
// cannot be made.
bool PlanStdio(const SpawnOptions& options, ChildPlan& plan, Pipe (&pipes)[kStdioCount]) {
  const StdioSpec* specs[kStdioCount] = {&options.stdin_spec, &options.stdout_spec, &options.stderr_spec};
  for (int i = 0; i < kStdioCount; ++i) {
    plan.kinds[i] = specs[i]->kind;
    switch (specs[i]->kind) {
      case StdioSpec::Kind::kInherit:
        break;
      case StdioSpec::Kind::kNull:
        plan.paths[i] = "/dev/null";
        break;
      case StdioSpec::Kind::kFile:
        plan.paths[i] = specs[i]->path.c_str();
        break;
      case StdioSpec::Kind::kFd:
        plan.fds[i] = specs[i]->fd;
        break;
      case StdioSpec::Kind::kPipe:
        if (!MakePipe(&pipes[i])) return false;
        plan.fds[i] = i == 0 ? pipes[i].read.get() : pipes[i].write.get();
        break;
    }
  }
  return true;
}

// Waits for the child's exec: the report pipe closes on success (close-on-exec), or carries the
// step that failed, when the child has then exited and is reaped here.
std::optional<SpawnFailure> AwaitExec(Pipe& report, pid_t pid) {
  SpawnFailure reported{};
  ssize_t n = 0;
  do {
    n = ::read(report.read.get(), &reported, sizeof(reported));
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof(reported))) return std::nullopt;
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return reported;
}

}  // namespace

std::string DescribeSpawnFailure(const SpawnFailure& failure, const SpawnOptions& options) {
  const std::string reason = std::strerror(failure.error_number);
  const std::string program = options.argv.empty() ? "" : options.argv[0];
  switch (failure.step) {
    case SpawnStep::kEmptyCommand:
      return "empty command";
    case SpawnStep::kPipe:
      return "cannot create pipes: " + reason;
    case SpawnStep::kFork:
      return "fork failed: " + reason;
    case SpawnStep::kStdin:
    case SpawnStep::kStdout:
    case SpawnStep::kStderr: {
      int index = failure.step == SpawnStep::kStdin ? 0 : failure.step == SpawnStep::kStdout ? 1 : 2;
      const StdioSpec& spec = index == 0   ? options.stdin_spec
                              : index == 1 ? options.stdout_spec
                                           : options.stderr_spec;
      if (spec.kind == StdioSpec::Kind::kNull || spec.kind == StdioSpec::Kind::kFile) {
        std::string path = spec.kind == StdioSpec::Kind::kNull ? "/dev/null" : spec.path;
        return std::string(index == 0 ? "cannot open '" : "cannot create '") + path + "': " + reason;
      }
      return std::string("cannot set up ") + StepName(failure.step) + ": " + reason;
    }
    case SpawnStep::kWorkingDir:
      return "cannot enter '" + options.working_dir + "': " + reason;
    case SpawnStep::kExec:
      return "cannot run '" + program + "': " + reason;
    case SpawnStep::kProcessGroup:
    case SpawnStep::kParentDeathSignal:
      break;
  }
  return "cannot start '" + program + "': " + StepName(failure.step) + ": " + reason;
}

StatusOr<ChildProcess> SpawnInstalledProgram(const SpawnOptions& options, const std::string& install_hint) {
  SpawnFailure failure;
  StatusOr<ChildProcess> child = SpawnProcess(options, &failure);
  if (!child.ok() && failure.step == SpawnStep::kExec) {
    return Status::Error(child.status().message() + " (" + install_hint + ")");
  }
  return child;
}

StatusOr<ChildProcess> SpawnProcess(const SpawnOptions& options, SpawnFailure* failure) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return Fail(options, failure, SpawnStep::kEmptyCommand, 0);
  }
  ChildPlan plan;
  PlanCommand(options, plan);
  // The parent's end of each pipe goes to the ChildProcess; the child's end to the plan.
  Pipe report;
  Pipe pipes[kStdioCount];
  if (!MakePipe(&report) || !PlanStdio(options, plan, pipes)) {
    return Fail(options, failure, SpawnStep::kPipe, errno);
  }

  // No handler of the parent may run in the child before the child resets them.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) RunChild(plan, options, parent, report.write.get());
  const int fork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (pid < 0) return Fail(options, failure, SpawnStep::kFork, fork_error);

  // Also here, so that the group exists when SpawnProcess returns (EACCES once the child has
  // exec'd, by when it has set the group itself).
  if (options.own_process_group) ::setpgid(pid, pid);
  report.write.Reset();
  if (std::optional<SpawnFailure> reported = AwaitExec(report, pid)) {
    return Fail(options, failure, reported->step, reported->error_number);
  }
  ChildProcess child;
  child.pid_ = pid;
  child.own_process_group_ = options.own_process_group;
  child.stdin_pipe_ = std::move(pipes[0].write);
  child.stdout_pipe_ = std::move(pipes[1].read);
  child.stderr_pipe_ = std::move(pipes[2].read);
  for (UniqueFd* end : {&child.stdin_pipe_, &child.stdout_pipe_, &child.stderr_pipe_}) {
    if (end->valid()) SetNonBlocking(end->get());
  }
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      own_process_group_(other.own_process_group_),
      wait_status_(other.wait_status_),
      stdin_pipe_(std::move(other.stdin_pipe_)),
      stdout_pipe_(std::move(other.stdout_pipe_)),
      stderr_pipe_(std::move(other.stderr_pipe_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    ChildProcess discarded(std::move(*this));
    pid_ = std::exchange(other.pid_, -1);
    own_process_group_ = other.own_process_group_;
    wait_status_ = other.wait_status_;
    stdin_pipe_ = std::move(other.stdin_pipe_);
    stdout_pipe_ = std::move(other.stdout_pipe_);
    stderr_pipe_ = std::move(other.stderr_pipe_);
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ <= 0 || wait_status_) return;
  KillGroup();
  Wait();
}

std::optional<int> ChildProcess::Poll() {
  if (wait_status_ || pid_ <= 0) return wait_status_;
  int status = 0;
  pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done == pid_) wait_status_ = status;
  if (done < 0 && errno == ECHILD) wait_status_ = 0;
  return wait_status_;
}

int ChildProcess::Wait() {
  if (wait_status_ || pid_ <= 0) return wait_status_.value_or(0);
  int status = 0;
  pid_t done;
  while ((done = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  wait_status_ = done == pid_ ? status : 0;
  return *wait_status_;
}

void ChildProcess::Signal(int signal) const {
  if (pid_ > 0 && !wait_status_) ::kill(pid_, signal);
}

void ChildProcess::KillGroup() const {
  if (pid_ <= 0) return;
  if (own_process_group_) {
    // The group may outlive its leader; it is gone once it has no member.
    ::killpg(pid_, SIGKILL);
  } else if (!wait_status_) {
    ::kill(pid_, SIGKILL);
  }
}

pid_t ChildProcess::Release() { return std::exchange(pid_, -1); }

}  // namespace hvdrun
