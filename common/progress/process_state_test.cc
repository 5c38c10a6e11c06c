#include "common/progress/process_state.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace hvdrun::progress {
namespace {

using protocol::ProcessState;

TEST(ProcessState, ParsesTheLetterAfterTheCommand) {
  EXPECT_EQ(ParseProcessState("42 (python3) R 1 42"), ProcessState::kRunning);
  EXPECT_EQ(ParseProcessState("42 (a) b) (c) T 1 42"), ProcessState::kStopped);
  EXPECT_EQ(ParseProcessState("42 (x) t 1"), ProcessState::kTraced);
  EXPECT_EQ(ParseProcessState("42 (x) Z 1"), ProcessState::kZombie);
  EXPECT_EQ(ParseProcessState("42 (x) D 1"), ProcessState::kDiskWait);
  EXPECT_EQ(ParseProcessState("42 (x) I 1"), ProcessState::kSleeping);
  EXPECT_EQ(ParseProcessState("42 (x)"), ProcessState::kUnknown);
  EXPECT_EQ(ParseProcessState("garbage"), ProcessState::kUnknown);
  EXPECT_EQ(ProcessStateName(ProcessState::kStopped), "stopped");
}

// Waits up to 5 s for `pid` to reach `state`.
ProcessState AwaitState(pid_t pid, ProcessState state) {
  ProcessState seen = ReadProcessState(pid);
  for (int i = 0; i < 500 && seen != state; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen = ReadProcessState(pid);
  }
  return seen;
}

TEST(ProcessState, FollowsAChildThroughStopContinueAndDeath) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  EXPECT_EQ(AwaitState(child, ProcessState::kSleeping), ProcessState::kSleeping);
  ::kill(child, SIGSTOP);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
  EXPECT_TRUE(WIFSTOPPED(status));
  EXPECT_EQ(WSTOPSIG(status), SIGSTOP);
  EXPECT_EQ(ReadProcessState(child), ProcessState::kStopped);
  ::kill(child, SIGCONT);
  EXPECT_EQ(AwaitState(child, ProcessState::kSleeping), ProcessState::kSleeping);
  ::kill(child, SIGKILL);
  EXPECT_EQ(AwaitState(child, ProcessState::kZombie), ProcessState::kZombie);
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(ReadProcessState(child), ProcessState::kUnknown);
}

}  // namespace
}  // namespace hvdrun::progress
