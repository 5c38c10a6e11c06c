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

TEST(ParseCompressionList, ReadsTheFormatsInTheirOrder) {
  StatusOr<std::vector<CompressionFormat>> formats =
      ParseCompressionList("--compression", "none,fp16,bf16,fp8,fp8-e5m2");
  ASSERT_TRUE(formats.ok()) << formats.status().message();
  EXPECT_EQ(formats.value(),
            (std::vector<CompressionFormat>{CompressionFormat::kNone, CompressionFormat::kFloat16,
                                            CompressionFormat::kBFloat16, CompressionFormat::kFloat8E4M3,
                                            CompressionFormat::kFloat8E5M2}));
  formats = ParseCompressionList("--compression", "fp8-e4m3");
  ASSERT_TRUE(formats.ok()) << formats.status().message();
  EXPECT_EQ(formats.value(), std::vector<CompressionFormat>{CompressionFormat::kFloat8E4M3});
}

TEST(ParseCompressionList, ABadOrRepeatedItemIsNamedWithItsFlag) {
  auto error = [](const char* text) {
    StatusOr<std::vector<CompressionFormat>> formats = ParseCompressionList("--compression", text);
    return formats.ok() ? std::string("OK") : formats.status().message();
  };
  const std::string known = " is not a compression format (none, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2)";
  EXPECT_EQ(error("none,fp9"), "--compression: 'fp9'" + known);
  EXPECT_EQ(error("none,,fp16"), "--compression: ''" + known);
  EXPECT_EQ(error(""), "--compression: ''" + known);
  EXPECT_EQ(error("FP16"), "--compression: 'FP16'" + known);
  EXPECT_EQ(error("fp8,fp8-e4m3"), "--compression: 'fp8-e4m3' is fp8-e4m3, listed twice");
}

}  // namespace
}  // namespace hvdrun
