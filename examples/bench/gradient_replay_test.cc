#include "examples/bench/gradient_replay.h"

#include <gtest/gtest.h>

#include <vector>

namespace hvdrun {
namespace {

TEST(ParseNumberList, ReadsCommaSeparatedDecimals) {
  StatusOr<std::vector<double>> values = ParseNumberList("--fusion-threshold-mb", "0,64,128", 1024);
  ASSERT_TRUE(values.ok()) << values.status().message();
  EXPECT_EQ(values.value(), (std::vector<double>{0, 64, 128}));
  values = ParseNumberList("--cycle-time-ms", "0.5", 1000);
  ASSERT_TRUE(values.ok()) << values.status().message();
  EXPECT_EQ(values.value(), std::vector<double>{0.5});
}

TEST(ParseNumberList, ABadItemIsNamedWithItsFlag) {
  auto error = [](const char* text) {
    StatusOr<std::vector<double>> values = ParseNumberList("--fusion-threshold-mb", text, 1024);
    return values.ok() ? std::string("OK") : values.status().message();
  };
  EXPECT_EQ(error("64,x"), "--fusion-threshold-mb: 'x' is not a number from 0 to 1024");
  EXPECT_EQ(error("64,,128"), "--fusion-threshold-mb: '' is not a number from 0 to 1024");
  EXPECT_EQ(error("-1"), "--fusion-threshold-mb: '-1' is not a number from 0 to 1024");
  EXPECT_EQ(error("2048"), "--fusion-threshold-mb: '2048' is not a number from 0 to 1024");
  EXPECT_EQ(error(""), "--fusion-threshold-mb: '' is not a number from 0 to 1024");
  EXPECT_EQ(error("nan"), "--fusion-threshold-mb: 'nan' is not a number from 0 to 1024");
}

}  // namespace
}  // namespace hvdrun
