#include "common/process/command_output.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <string>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

TEST(CommandOutput, CapturesStdoutAlone) {
  StatusOr<std::string> output =
      CaptureOutput({"sh", "-c", "echo hello; echo noise >&2"}, milliseconds(5000));
  ASSERT_TRUE(output.ok()) << output.status().message();
  EXPECT_EQ(output.value(), "hello\n");
}

TEST(CommandOutput, NamesAMissingCommandAFailureAndASignal) {
  StatusOr<std::string> missing = CaptureOutput({"hvdrun-no-such-program"}, milliseconds(5000));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot run 'hvdrun-no-such-program': No such file or directory");
  StatusOr<std::string> failed = CaptureOutput({"false"}, milliseconds(5000));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "'false' failed: exit code 1");
  StatusOr<std::string> killed = CaptureOutput({"sh", "-c", "kill -SEGV $$"}, milliseconds(5000));
  ASSERT_FALSE(killed.ok());
  EXPECT_EQ(killed.status().message(), "'sh' failed: killed by SIGSEGV");
}

TEST(CommandOutput, ALateCommandIsKilledWithWhatItStarted) {
  e2e::ScratchDir dir;
  std::string pid_file = dir.path() + "/grandchild";
  auto start = std::chrono::steady_clock::now();
  // The grandchild keeps stdout open: the timeout must not wait for it.
  StatusOr<std::string> slow =
      CaptureOutput({"sh", "-c", "sleep 30 & echo $! > " + pid_file + "; wait"}, milliseconds(300));
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().message(), "'sh' did not finish within 300 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
  pid_t grandchild = std::stoi(e2e::ReadFileBytes(pid_file));
  // Killed with its group; it may linger as a zombie until its new parent reaps it.
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    std::string state = e2e::ReadFileBytes("/proc/" + std::to_string(grandchild) + "/stat");
    gone = state.empty() || state.find(") Z ") != std::string::npos;
    if (!gone) ::usleep(10'000);
  }
  EXPECT_TRUE(gone) << "pid " << grandchild;
}

TEST(CommandOutput, KeepsTheFirst64KiB) {
  StatusOr<std::string> big = CaptureOutput({"head", "-c", "200000", "/dev/zero"}, milliseconds(5000));
  ASSERT_TRUE(big.ok()) << big.status().message();
  EXPECT_EQ(big.value().size(), kMaxCapturedOutput);
}

}  // namespace
}  // namespace hvdrun
