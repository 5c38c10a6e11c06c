#include "common/process/wait_status.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <string.h>

#include <string>

namespace hvdrun {
namespace {

// Wait statuses as Linux encodes them: the exit code in bits 8-15; the signal in bits 0-6.
constexpr int Exited(int code) { return code << 8; }
constexpr int Signaled(int signal) { return signal; }

TEST(WaitStatus, SignalNames) {
  EXPECT_EQ(SignalName(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
  EXPECT_EQ(SignalName(SIGTERM), "SIGTERM");
  EXPECT_EQ(SignalName(0), "signal 0");
  EXPECT_EQ(SignalName(99), "signal 99");
}

#if __GLIBC_PREREQ(2, 32)
// SignalName's own table names every signal as the C library does, where it has sigabbrev_np.
TEST(WaitStatus, SignalNamesAsTheCLibrarySays) {
  for (int signal = 1; signal < SIGRTMIN; ++signal) {
    const char* abbrev = ::sigabbrev_np(signal);
    if (abbrev == nullptr) continue;
    EXPECT_EQ(SignalName(signal), std::string("SIG") + abbrev) << "signal " << signal;
  }
}
#endif

TEST(WaitStatus, DescribesExitsAndSignals) {
  EXPECT_EQ(DescribeWaitStatus(Exited(0)), "exit code 0");
  EXPECT_EQ(DescribeWaitStatus(Exited(3)), "exit code 3");
  EXPECT_EQ(DescribeWaitStatus(Exited(255)), "exit code 255");
  EXPECT_EQ(DescribeWaitStatus(Signaled(SIGTERM)), "killed by SIGTERM");
  EXPECT_EQ(DescribeWaitStatus(Signaled(SIGKILL) | 0x80), "killed by SIGKILL");  // with a core dump
  EXPECT_EQ(DescribeWaitStatus(Signaled(60)), "killed by signal 60");
  EXPECT_EQ(DescribeWaitStatus(0x137f), "ended");  // stopped by SIGSTOP
}

TEST(WaitStatus, AnExitStatusGivesTheShellsCodeForASignal) {
  ExitStatus exited = ExitStatus::FromWaitStatus(Exited(3));
  EXPECT_EQ(exited.exit_code, 3);
  EXPECT_EQ(exited.signal, 0);
  EXPECT_FALSE(exited.succeeded());
  ExitStatus killed = ExitStatus::FromWaitStatus(Signaled(SIGKILL));
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL);
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_EQ(killed.Describe(), "killed by SIGKILL");
  EXPECT_TRUE(ExitStatus::FromWaitStatus(Exited(0)).succeeded());
}

}  // namespace
}  // namespace hvdrun
