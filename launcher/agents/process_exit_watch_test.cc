#include "launcher/agents/process_exit_watch.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>

#include "common/process/process_spawner.h"

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

ChildProcess Start(std::vector<std::string> argv) {
  SpawnOptions options;
  options.argv = std::move(argv);
  StatusOr<ChildProcess> child = SpawnProcess(options);
  EXPECT_TRUE(child.ok()) << child.status().message();
  return std::move(child).value();
}

TEST(ProcessExitWatch, ReadableOnceTheChildEnds) {
  ChildProcess child = Start({"sleep", "30"});
  ProcessExitWatch watch = ProcessExitWatch::Of(child.pid());
  ASSERT_TRUE(watch.valid()) << "pidfd_open failed: this kernel is older than 5.3";
  EXPECT_FALSE(watch.WaitFor(milliseconds(20)));  // still running
  child.Signal(SIGKILL);
  EXPECT_TRUE(watch.WaitFor(milliseconds(10'000)));
  EXPECT_TRUE(child.Poll().has_value());  // the end it announced can be reaped at once
}

TEST(ProcessExitWatch, StaysReadableAfterTheReap) {
  ChildProcess child = Start({"true"});
  ProcessExitWatch watch = ProcessExitWatch::Of(child.pid());
  ASSERT_TRUE(watch.valid());
  child.Wait();
  EXPECT_TRUE(watch.WaitFor(milliseconds(0)));
}

TEST(ProcessExitWatch, NoProcessNoWatch) {
  ProcessExitWatch none = ProcessExitWatch::Of(-1);
  EXPECT_FALSE(none.valid());
  EXPECT_EQ(none.fd(), -1);
  EXPECT_FALSE(none.WaitFor(milliseconds(0)));
  EXPECT_FALSE(ProcessExitWatch().valid());
}

}  // namespace
}  // namespace hvdrun
