// SpawnProcess: the one place hvdrun, hvdrun-agent and hvdrun-lab start another program, and
// ChildProcess, the handle to what it started.
//
// The child gets exactly what SpawnOptions says and nothing of the parent's state besides its
// environment (when asked) and its credentials:
//   - argv as given, no shell; argv[0] without a '/' is looked up in the PATH of the child's
//     environment (as `env` looks it up; /bin:/usr/bin when that has no PATH), with execvp's rules:
//     a candidate that exists but cannot be executed is remembered and the search goes on, and a
//     file the kernel cannot execute (ENOEXEC: a script without "#!") is run by /bin/sh;
//   - stdin, stdout and stderr as StdioSpec says, and no other file descriptor: every descriptor
//     above 2 is closed on exec, whether or not its owner asked for close-on-exec;
//   - the working directory, entered after the streams are set up and before the exec: a relative
//     StdioSpec::File path is the parent's, a relative argv[0] (or PATH entry) the child's;
//   - an empty signal mask and every signal's default disposition;
//   - its own process group when asked (set by both sides, so that it exists when SpawnProcess
//     returns), and a parent-death signal when asked.
// Between fork and exec the child makes async-signal-safe calls only: argv, the environment and the
// PATH candidates are prepared before the fork, so SpawnProcess is safe in a process with threads.
// The parent blocks every signal in the calling thread around the fork, so that no handler of the
// parent runs in the child.
//
// Failure reporting: the child reports a failed step (and errno) over a close-on-exec pipe and
// exits 127; SpawnProcess reads that pipe until exec closes it, reaps such a child, and fails with
// one line (DescribeSpawnFailure) — so a successful return means the program is running.
//
// Thread safety: SpawnProcess may be called from any thread, concurrently. The parent-death signal
// follows the thread that called SpawnProcess, not the process (prctl(2)): it is sent when that
// thread ends. A ChildProcess is not thread-safe.
#ifndef HVDRUN_COMMON_PROCESS_PROCESS_SPAWNER_H_
#define HVDRUN_COMMON_PROCESS_PROCESS_SPAWNER_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/process/file_descriptor.h"
#include "hvdrun/status.h"

namespace hvdrun {

// How one of the child's standard streams is set up.
struct StdioSpec {
  enum class Kind {
    kInherit,  // the parent's own
    kNull,     // /dev/null
    kPipe,     // a fresh pipe; the parent's end is in ChildProcess
    kFile,     // `path`: stdin reads it; stdout and stderr create or truncate it (mode 0644)
    kFd,       // a copy of `fd`, which the caller keeps open until SpawnProcess returns and then owns
  };
  Kind kind = Kind::kInherit;
  std::string path;
  int fd = -1;

  static StdioSpec Inherit() { return {}; }
  static StdioSpec Null() { return {Kind::kNull, "", -1}; }
  static StdioSpec Pipe() { return {Kind::kPipe, "", -1}; }
  static StdioSpec File(std::string path) { return {Kind::kFile, std::move(path), -1}; }
  static StdioSpec Fd(int fd) { return {Kind::kFd, "", fd}; }
};

enum class EnvironmentMode {
  kInherit,      // the parent's environment as it is at SpawnProcess
  kInheritWith,  // the parent's, with SpawnOptions::env's entries set on top (replacing same names),
                 // less the variables its entries without '=' name
  kExactly,      // SpawnOptions::env and nothing else
};

struct SpawnOptions {
  std::vector<std::string> argv;  // at least argv[0], not empty
  EnvironmentMode env_mode = EnvironmentMode::kInherit;
  // NAME=VALUE entries; an entry without '=' names a variable to remove with kInheritWith, and is
  // ignored otherwise.
  std::vector<std::string> env;
  std::string working_dir;  // empty: the parent's
  StdioSpec stdin_spec = StdioSpec::Null();
  StdioSpec stdout_spec = StdioSpec::Inherit();
  StdioSpec stderr_spec = StdioSpec::Inherit();
  // The child leads a new process group (its pid is the group's id): a killpg then reaches it and
  // whatever it starts, and a Ctrl-C at the terminal does not.
  bool own_process_group = false;
  // Sent to the child when the thread that spawned it ends (the whole process included, even by
  // SIGKILL); 0 for none. A child whose parent is already gone when this takes effect exits 127.
  int parent_death_signal = 0;
};

// The step of a spawn that failed. Those up to kFork happen in the parent.
enum class SpawnStep {
  kEmptyCommand,  // argv or argv[0] is empty
  kPipe,          // a pipe could not be created
  kFork,
  kProcessGroup,
  kParentDeathSignal,
  kStdin,  // opening or duplicating what the stream gets
  kStdout,
  kStderr,
  kWorkingDir,
  kExec,  // argv[0] could not be executed (error_number as execvp gives it: ENOENT, EACCES, ...)
};

struct SpawnFailure {
  SpawnStep step = SpawnStep::kExec;
  int error_number = 0;
};

// One line for `failure` of a spawn with `options`:
//   kEmptyCommand       "empty command"
//   kPipe               "cannot create pipes: REASON"
//   kFork               "fork failed: REASON"
//   kStdin/out/err      "cannot open 'PATH': REASON" (stdin), "cannot create 'PATH': REASON"
//                       (stdout, stderr; /dev/null for StdioSpec::Null), or
//                       "cannot set up stdout: REASON" for a pipe or an fd
//   kWorkingDir         "cannot enter 'DIR': REASON"
//   kExec               "cannot run 'ARGV0': REASON"
//   others              "cannot start 'ARGV0': STEP: REASON"
std::string DescribeSpawnFailure(const SpawnFailure& failure, const SpawnOptions& options);

// A started child: its pid, the parent's ends of its pipes, and, once it has ended, its wait
// status. Destroying one that has neither been reaped nor released sends SIGKILL (to its process
// group when it leads one) and reaps it. Movable, not copyable.
class ChildProcess {
 public:
  ChildProcess() = default;  // no child
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  // -1 for no child.
  pid_t pid() const { return pid_; }

  // The parent's ends of the pipes of StdioSpec::Pipe streams: close-on-exec, non-blocking;
  // invalid for other streams. The caller may move them out.
  UniqueFd& stdin_pipe() { return stdin_pipe_; }
  UniqueFd& stdout_pipe() { return stdout_pipe_; }
  UniqueFd& stderr_pipe() { return stderr_pipe_; }

  // The wait status (as waitpid gives it) once the child has ended and been reaped here; nullopt
  // while it runs. A child that someone else reaped (ECHILD) counts as ended with status 0.
  std::optional<int> Poll();
  // Waits for the child to end and returns its wait status.
  int Wait();

  // Sends `signal` to the child itself, while it has not been reaped.
  void Signal(int signal) const;
  // SIGKILL to the child's process group when it leads one, else to the child.
  void KillGroup() const;

  // Hands reaping to the caller (for a parent that reaps with waitpid(-1)): the handle forgets the
  // child and its destructor leaves it alone. Returns the pid.
  pid_t Release();

 private:
  friend StatusOr<ChildProcess> SpawnProcess(const SpawnOptions& options, SpawnFailure* failure);

  pid_t pid_ = -1;
  bool own_process_group_ = false;
  std::optional<int> wait_status_;
  UniqueFd stdin_pipe_;
  UniqueFd stdout_pipe_;
  UniqueFd stderr_pipe_;
};

// Starts the child `options` describes. On failure the error is DescribeSpawnFailure's line, and
// `failure` (when not null) gets the step and errno, for callers that word it their own way.
StatusOr<ChildProcess> SpawnProcess(const SpawnOptions& options, SpawnFailure* failure = nullptr);

// SpawnProcess for a program that must be installed (hvdrun-agent, srun, mpirun): when it cannot be
// executed (SpawnStep::kExec), the error line ends with " (" + install_hint + ")", which says how
// to get it.
StatusOr<ChildProcess> SpawnInstalledProgram(const SpawnOptions& options, const std::string& install_hint);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PROCESS_PROCESS_SPAWNER_H_
