#include "agent/rank_spawner.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

protocol::RankLaunch Launch(std::vector<std::string> argv) {
  protocol::RankLaunch launch;
  launch.rank = 0;
  launch.argv = std::move(argv);
  return launch;
}

std::string ReadToEnd(int fd) {
  std::string text;
  char buffer[1024];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      text.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd readable{fd, POLLIN, 0};
      ::poll(&readable, 1, 10'000);
    } else {
      return text;
    }
  }
}

TEST(RankSpawner, ARankGetsItsEnvironmentWorkingDirectoryGroupAndPipes) {
  e2e::ScratchDir dir;
  protocol::RankLaunch launch =
      Launch({"sh", "-c", "echo \"$HVDRUN_RANK_SPAWNER_TEST $(pwd)\"; echo to-stderr >&2; exit 4"});
  launch.env = {"HVDRUN_RANK_SPAWNER_TEST=set on top"};
  launch.working_dir = dir.path();
  SpawnedRank rank = SpawnRank(launch);
  ASSERT_GT(rank.pid, 0) << rank.error;
  EXPECT_EQ(rank.spawn_error, protocol::SpawnError::kNone);
  EXPECT_EQ(::getpgid(rank.pid), rank.pid);
  char real[4096] = {};
  ASSERT_NE(::realpath(dir.path().c_str(), real), nullptr);
  EXPECT_EQ(ReadToEnd(rank.stdout_fd.get()), "set on top " + std::string(real) + "\n");
  EXPECT_EQ(ReadToEnd(rank.stderr_fd.get()), "to-stderr\n");
  int status = 0;
  ASSERT_EQ(::waitpid(rank.pid, &status, 0), rank.pid);  // the caller reaps
  EXPECT_EQ(WEXITSTATUS(status), 4);
}

TEST(RankSpawner, UnderMpirunARankStaysInTheAgentsGroupWithItsOutput) {
  SpawnedRank rank =
      SpawnRank(Launch({"true"}), {.capture = OutputCapture::kInherit, .own_process_group = false});
  ASSERT_GT(rank.pid, 0) << rank.error;
  EXPECT_FALSE(rank.stdout_fd.valid());
  EXPECT_FALSE(rank.stderr_fd.valid());
  EXPECT_EQ(::getpgid(rank.pid), ::getpgrp());
  int status = 0;
  ASSERT_EQ(::waitpid(rank.pid, &status, 0), rank.pid);
  EXPECT_EQ(status, 0);
}

TEST(RankSpawner, SpawnErrorsAreTypedAndWordedAsTheProtocolSays) {
  SpawnedRank missing = SpawnRank(Launch({"./hvdrun-no-such-program"}));
  EXPECT_EQ(missing.pid, -1);
  EXPECT_EQ(missing.spawn_error, protocol::SpawnError::kNotFound);
  EXPECT_EQ(missing.error, "command not found: './hvdrun-no-such-program' (No such file or directory)");

  SpawnedRank not_executable = SpawnRank(Launch({"/etc/passwd"}));
  EXPECT_EQ(not_executable.spawn_error, protocol::SpawnError::kNotExecutable);
  EXPECT_EQ(not_executable.error, "command not executable: '/etc/passwd' (Permission denied)");

  protocol::RankLaunch elsewhere = Launch({"true"});
  elsewhere.working_dir = "/hvdrun-no-such-dir";
  SpawnedRank no_dir = SpawnRank(elsewhere);
  EXPECT_EQ(no_dir.spawn_error, protocol::SpawnError::kWorkingDir);
  EXPECT_EQ(no_dir.error, "cannot enter working directory '/hvdrun-no-such-dir' (No such file or directory)");

  SpawnedRank empty = SpawnRank(Launch({""}));
  EXPECT_EQ(empty.spawn_error, protocol::SpawnError::kNotFound);
  EXPECT_EQ(empty.error, "empty command");
}

}  // namespace
}  // namespace hvdrun
