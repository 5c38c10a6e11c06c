#include "common/process/process_spawner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <thread>

#include "common/process/wait_status.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

using e2e::ReadFileBytes;
using e2e::ScratchDir;

// Everything from `fd` until its end (the parent's ends of pipes are non-blocking).
std::string ReadAll(UniqueFd& fd) {
  std::string text;
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n > 0) {
      text.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd readable{fd.get(), POLLIN, 0};
      ::poll(&readable, 1, 10'000);
    } else {
      return text;
    }
  }
}

SpawnOptions Command(std::vector<std::string> argv) {
  SpawnOptions options;
  options.argv = std::move(argv);
  options.stdout_spec = StdioSpec::Pipe();
  return options;
}

SpawnOptions Shell(const std::string& script) { return Command({"/bin/sh", "-c", script}); }

// Runs `options` to its end; returns its stdout, and its wait status in `status`.
std::string RunToEnd(const SpawnOptions& options, int* status = nullptr) {
  StatusOr<ChildProcess> child = SpawnProcess(options);
  EXPECT_TRUE(child.ok()) << child.status().message();
  if (!child.ok()) return "";
  std::string out = child->stdout_pipe().valid() ? ReadAll(child->stdout_pipe()) : "";
  int wait_status = child->Wait();
  if (status != nullptr) *status = wait_status;
  return out;
}

SpawnFailure FailureOf(const SpawnOptions& options, std::string* message) {
  SpawnFailure failure;
  StatusOr<ChildProcess> child = SpawnProcess(options, &failure);
  EXPECT_FALSE(child.ok());
  if (!child.ok()) *message = child.status().message();
  return failure;
}

TEST(ProcessSpawner, StdoutAndStderrOnPipes) {
  SpawnOptions options = Shell("echo out; echo err >&2; exit 3");
  options.stderr_spec = StdioSpec::Pipe();
  StatusOr<ChildProcess> child = SpawnProcess(options);
  ASSERT_TRUE(child.ok()) << child.status().message();
  EXPECT_GT(child->pid(), 0);
  EXPECT_FALSE(child->stdin_pipe().valid());
  EXPECT_NE(::fcntl(child->stdout_pipe().get(), F_GETFL) & O_NONBLOCK, 0);
  EXPECT_NE(::fcntl(child->stdout_pipe().get(), F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_EQ(ReadAll(child->stdout_pipe()), "out\n");
  EXPECT_EQ(ReadAll(child->stderr_pipe()), "err\n");
  EXPECT_EQ(DescribeWaitStatus(child->Wait()), "exit code 3");
  EXPECT_EQ(DescribeWaitStatus(*child->Poll()), "exit code 3");
}

TEST(ProcessSpawner, StdinFromAPipeTheNullDeviceOrAFile) {
  SpawnOptions options = Command({"cat"});
  options.stdin_spec = StdioSpec::Pipe();
  StatusOr<ChildProcess> child = SpawnProcess(options);
  ASSERT_TRUE(child.ok()) << child.status().message();
  ASSERT_TRUE(WriteAll(child->stdin_pipe().get(), "to the child\n"));
  child->stdin_pipe().Reset();
  EXPECT_EQ(ReadAll(child->stdout_pipe()), "to the child\n");
  EXPECT_EQ(child->Wait(), 0);

  // The default: /dev/null.
  EXPECT_EQ(RunToEnd(Command({"cat"})), "");

  ScratchDir dir;
  options.stdin_spec = StdioSpec::File(dir.WriteFile("input", "from a file\n"));
  EXPECT_EQ(RunToEnd(options), "from a file\n");
}

TEST(ProcessSpawner, OutputToFilesTheNullDeviceOrAGivenFd) {
  ScratchDir dir;
  std::string out_path = dir.WriteFile("out", "old contents, truncated\n");
  SpawnOptions options = Shell("echo out; echo err >&2");
  options.stdout_spec = StdioSpec::File(out_path);
  options.stderr_spec = StdioSpec::File(dir.path() + "/err");
  int status = -1;
  RunToEnd(options, &status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(ReadFileBytes(out_path), "out\n");
  EXPECT_EQ(ReadFileBytes(dir.path() + "/err"), "err\n");
  struct stat info {};
  ASSERT_EQ(::stat((dir.path() + "/err").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);

  options.stdout_spec = StdioSpec::Null();
  options.stderr_spec = StdioSpec::Null();
  RunToEnd(options, &status);
  EXPECT_EQ(status, 0);

  // Both streams onto one descriptor the caller keeps.
  Pipe pipe;
  ASSERT_TRUE(MakePipe(&pipe));
  options.stdout_spec = StdioSpec::Fd(pipe.write.get());
  options.stderr_spec = StdioSpec::Fd(pipe.write.get());
  RunToEnd(options, &status);
  EXPECT_EQ(status, 0);
  pipe.write.Reset();
  SetNonBlocking(pipe.read.get());
  EXPECT_EQ(ReadAll(pipe.read), "out\nerr\n");
}

TEST(ProcessSpawner, InheritedStreamsAreTheParentsOwn) {
  SpawnOptions options = Shell("readlink /proc/self/fd/0 /proc/self/fd/2");
  options.stdin_spec = StdioSpec::Inherit();
  char self[2][256] = {};
  ASSERT_GT(::readlink("/proc/self/fd/0", self[0], sizeof(self[0]) - 1), 0);
  ASSERT_GT(::readlink("/proc/self/fd/2", self[1], sizeof(self[1]) - 1), 0);
  EXPECT_EQ(RunToEnd(options), std::string(self[0]) + "\n" + self[1] + "\n");
}

TEST(ProcessSpawner, AFailedStreamNamesItsFile) {
  SpawnOptions options = Command({"true"});
  options.stdout_spec = StdioSpec::File("/proc/hvdrun-no-such-dir/out");
  std::string message;
  SpawnFailure failure = FailureOf(options, &message);
  EXPECT_EQ(failure.step, SpawnStep::kStdout);
  EXPECT_EQ(failure.error_number, ENOENT);
  EXPECT_EQ(message, "cannot create '/proc/hvdrun-no-such-dir/out': No such file or directory");

  options = Command({"true"});
  options.stdin_spec = StdioSpec::File("/proc/hvdrun-no-such-file");
  failure = FailureOf(options, &message);
  EXPECT_EQ(failure.step, SpawnStep::kStdin);
  EXPECT_EQ(message, "cannot open '/proc/hvdrun-no-such-file': No such file or directory");

  options = Command({"true"});
  options.stderr_spec = StdioSpec::Fd(1'000'000);
  failure = FailureOf(options, &message);
  EXPECT_EQ(failure.step, SpawnStep::kStderr);
  EXPECT_EQ(failure.error_number, EBADF);
  EXPECT_EQ(message, "cannot set up stderr: Bad file descriptor");
}

TEST(ProcessSpawner, EnvironmentInheritedExtendedOrExact) {
  ASSERT_EQ(::setenv("HVDRUN_SPAWNER_TEST_A", "parent a", 1), 0);
  ASSERT_EQ(::setenv("HVDRUN_SPAWNER_TEST_B", "parent b", 1), 0);
  SpawnOptions options =
      Shell("echo \"$HVDRUN_SPAWNER_TEST_A|$HVDRUN_SPAWNER_TEST_B|$HVDRUN_SPAWNER_TEST_C\"");
  EXPECT_EQ(RunToEnd(options), "parent a|parent b|\n");

  // Set on top: the last entry for a name wins; one without '=' removes the variable.
  options.env_mode = EnvironmentMode::kInheritWith;
  options.env = {"HVDRUN_SPAWNER_TEST_B=first", "HVDRUN_SPAWNER_TEST_C=c=d", "HVDRUN_SPAWNER_TEST_A",
                 "HVDRUN_SPAWNER_TEST_B=child b"};
  EXPECT_EQ(RunToEnd(options), "|child b|c=d\n");

  options = Command({"env"});
  options.env_mode = EnvironmentMode::kExactly;
  options.env = {"ONE=1", "TWO=2 two"};
  EXPECT_EQ(RunToEnd(options), "ONE=1\nTWO=2 two\n");
  ::unsetenv("HVDRUN_SPAWNER_TEST_A");
  ::unsetenv("HVDRUN_SPAWNER_TEST_B");
}

TEST(ProcessSpawner, ProgramsAreLookedUpInTheChildsPath) {
  ScratchDir dir;
  ASSERT_EQ(::mkdir((dir.path() + "/bin").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir.path() + "/bin2").c_str(), 0755), 0);
  auto write = [&](const std::string& name, const std::string& text, mode_t mode) {
    std::string path = dir.WriteFile(name, text);
    EXPECT_EQ(::chmod(path.c_str(), mode), 0) << path;
    return path;
  };
  // No "#!": execvp's rule runs it with /bin/sh.
  std::string script = write("bin/hvdrun-spawner-test", "echo \"run as $0 with $1\"\n", 0755);
  write("bin/hvdrun-spawner-plain", "not a program\n", 0644);
  write("bin2/hvdrun-spawner-plain", "echo second\n", 0755);

  SpawnOptions options = Command({"hvdrun-spawner-test", "an argument"});
  options.env_mode = EnvironmentMode::kInheritWith;
  options.env = {"PATH=/nonexistent:" + dir.path() + "/bin:/usr/bin:/bin"};
  EXPECT_EQ(RunToEnd(options), "run as " + script + " with an argument\n");

  // A candidate that cannot be executed is passed over for a later one, as execvp does...
  options.argv = {"hvdrun-spawner-plain"};
  options.env = {"PATH=" + dir.path() + "/bin:" + dir.path() + "/bin2"};
  EXPECT_EQ(RunToEnd(options), "second\n");
  // ...and named when there is none.
  options.env = {"PATH=" + dir.path() + "/bin:/nonexistent"};
  std::string message;
  SpawnFailure failure = FailureOf(options, &message);
  EXPECT_EQ(failure.step, SpawnStep::kExec);
  EXPECT_EQ(failure.error_number, EACCES);
}

TEST(ProcessSpawner, AMissingProgramANonExecutableFileAndAnEmptyCommand) {
  std::string message;
  SpawnFailure failure = FailureOf(Command({"hvdrun-no-such-program", "x"}), &message);
  EXPECT_EQ(failure.step, SpawnStep::kExec);
  EXPECT_EQ(failure.error_number, ENOENT);
  EXPECT_EQ(message, "cannot run 'hvdrun-no-such-program': No such file or directory");

  failure = FailureOf(Command({"/nonexistent/program"}), &message);
  EXPECT_EQ(failure.error_number, ENOENT);

  ScratchDir dir;
  std::string plain = dir.WriteFile("plain", "#!/bin/sh\necho never\n");
  ASSERT_EQ(::chmod(plain.c_str(), 0644), 0);
  failure = FailureOf(Command({plain}), &message);
  EXPECT_EQ(failure.step, SpawnStep::kExec);
  EXPECT_EQ(failure.error_number, EACCES);
  EXPECT_EQ(message, "cannot run '" + plain + "': Permission denied");

  failure = FailureOf(Command({}), &message);
  EXPECT_EQ(failure.step, SpawnStep::kEmptyCommand);
  EXPECT_EQ(message, "empty command");
  failure = FailureOf(Command({""}), &message);
  EXPECT_EQ(failure.step, SpawnStep::kEmptyCommand);
}

TEST(ProcessSpawner, WorkingDirectory) {
  ScratchDir dir;
  SpawnOptions options = Command({"pwd"});
  options.working_dir = dir.path();
  char real[4096] = {};
  ASSERT_NE(::realpath(dir.path().c_str(), real), nullptr);
  EXPECT_EQ(RunToEnd(options), std::string(real) + "\n");

  options.working_dir = dir.path() + "/missing";
  std::string message;
  SpawnFailure failure = FailureOf(options, &message);
  EXPECT_EQ(failure.step, SpawnStep::kWorkingDir);
  EXPECT_EQ(failure.error_number, ENOENT);
  EXPECT_EQ(message, "cannot enter '" + dir.path() + "/missing': No such file or directory");
}

TEST(ProcessSpawner, OwnProcessGroupOrTheParents) {
  SpawnOptions options = Command({"sleep", "30"});
  options.stdout_spec = StdioSpec::Null();
  options.own_process_group = true;
  StatusOr<ChildProcess> leader = SpawnProcess(options);
  ASSERT_TRUE(leader.ok()) << leader.status().message();
  EXPECT_EQ(::getpgid(leader->pid()), leader->pid());
  EXPECT_FALSE(leader->Poll().has_value());
  leader->KillGroup();
  EXPECT_EQ(DescribeWaitStatus(leader->Wait()), "killed by SIGKILL");

  options.own_process_group = false;
  StatusOr<ChildProcess> member = SpawnProcess(options);
  ASSERT_TRUE(member.ok()) << member.status().message();
  EXPECT_EQ(::getpgid(member->pid()), ::getpgrp());
  member->Signal(SIGTERM);
  EXPECT_EQ(DescribeWaitStatus(member->Wait()), "killed by SIGTERM");
}

TEST(ProcessSpawner, TheParentDeathSignalFollowsTheSpawningThread) {
  SpawnOptions options = Command({"sleep", "30"});
  options.stdout_spec = StdioSpec::Null();
  options.parent_death_signal = SIGUSR1;
  ChildProcess child;
  std::thread spawner([&] {
    StatusOr<ChildProcess> started = SpawnProcess(options);
    ASSERT_TRUE(started.ok()) << started.status().message();
    child = std::move(started).value();
  });
  spawner.join();
  ASSERT_GT(child.pid(), 0);
  EXPECT_EQ(DescribeWaitStatus(child.Wait()), "killed by SIGUSR1");
}

TEST(ProcessSpawner, TheChildGetsDefaultSignalsAnEmptyMaskAndOnlyItsStreams) {
  // A descriptor without close-on-exec, a blocked and an ignored signal: none reaches the child.
  int leaked = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(leaked, 0);
  sigset_t blocked;
  sigset_t previous_mask;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR1);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &blocked, &previous_mask), 0);
  struct sigaction ignore {};
  struct sigaction previous_action {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGUSR2, &ignore, &previous_action), 0);

  std::string signals = RunToEnd(Command({"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"}));
  // ls lists its own descriptor of the directory too: the lowest free one, 3.
  std::string fds = RunToEnd(Command({"ls", "/proc/self/fd"}));

  ::sigaction(SIGUSR2, &previous_action, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  ::close(leaked);
  EXPECT_EQ(signals, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
  EXPECT_EQ(fds, "0\n1\n2\n3\n");
}

TEST(ProcessSpawner, DestroyingAHandleKillsAndReapsItsChildUnlessReleased) {
  SpawnOptions options = Command({"sleep", "30"});
  options.stdout_spec = StdioSpec::Null();
  options.own_process_group = true;
  pid_t pid = -1;
  {
    StatusOr<ChildProcess> child = SpawnProcess(options);
    ASSERT_TRUE(child.ok()) << child.status().message();
    pid = child->pid();
  }
  EXPECT_EQ(::kill(pid, 0), -1);  // gone, not a zombie left behind
  EXPECT_EQ(errno, ESRCH);

  {
    StatusOr<ChildProcess> child = SpawnProcess(options);
    ASSERT_TRUE(child.ok()) << child.status().message();
    pid = child->Release();
    EXPECT_EQ(child->pid(), -1);
  }
  EXPECT_EQ(::kill(pid, 0), 0);
  ::kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(DescribeWaitStatus(status), "killed by SIGKILL");
}

TEST(ProcessSpawner, AMovedHandleOwnsTheChild) {
  SpawnOptions options = Command({"sleep", "30"});
  options.stdout_spec = StdioSpec::Null();
  StatusOr<ChildProcess> started = SpawnProcess(options);
  ASSERT_TRUE(started.ok()) << started.status().message();
  ChildProcess first = std::move(started).value();
  pid_t pid = first.pid();
  ChildProcess second;
  second = std::move(first);
  EXPECT_EQ(first.pid(), -1);  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
  EXPECT_EQ(second.pid(), pid);
  second.KillGroup();
  EXPECT_EQ(DescribeWaitStatus(second.Wait()), "killed by SIGKILL");
}

}  // namespace
}  // namespace hvdrun
