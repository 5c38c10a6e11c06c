#include "common/horovod_variables.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

TEST(HorovodVariables, LogLevelsInAnyCase) {
  EXPECT_EQ(ParseLogLevel("TRACE"), LogLevel::kTrace);
  EXPECT_EQ(ParseLogLevel("warning"), LogLevel::kWarning);
  EXPECT_EQ(ParseLogLevel("Fatal"), LogLevel::kFatal);
  EXPECT_FALSE(ParseLogLevel("WARN").has_value());
  EXPECT_FALSE(ParseLogLevel("").has_value());
  EXPECT_EQ(LogLevelName(LogLevel::kInfo), "INFO");
}

TEST(HorovodVariables, SwitchesCycleTimesCoreListsAndLibraries) {
  EXPECT_EQ(ParseHorovodSwitch("1"), true);
  EXPECT_EQ(ParseHorovodSwitch("false"), false);
  EXPECT_FALSE(ParseHorovodSwitch("yes").has_value());
  EXPECT_EQ(ParseCycleTime("3.5"), 3.5);
  EXPECT_FALSE(ParseCycleTime("-1").has_value());
  EXPECT_FALSE(ParseCycleTime("1ms").has_value());
  EXPECT_EQ(ParseCoreList("0,2,4"), (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(ParseCoreList("7"), (std::vector<int>{7}));
  for (const char* bad : {"", "0,", ",1", "0,,1", "a", "-1", "70000"}) {
    EXPECT_FALSE(ParseCoreList(bad)) << bad;
  }
  EXPECT_EQ(ParseHostLibrary("MPI"), HostLibrary::kMpi);
  EXPECT_EQ(ParseHostLibrary("gloo"), HostLibrary::kGloo);
  EXPECT_EQ(ParseHostLibrary("ccl"), HostLibrary::kCcl);
  EXPECT_FALSE(ParseHostLibrary("nccl").has_value());
}

}  // namespace
}  // namespace hvdrun
