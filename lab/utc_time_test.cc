#include "lab/utc_time.h"

#include <gtest/gtest.h>

namespace hvdrun::lab {
namespace {

TEST(UtcTimeTest, FormatsInUtcWhateverTheLocalZone) {
  EXPECT_EQ(FormatUtc(0, UtcFormat::kIso8601), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatUtc(1714566896, UtcFormat::kIso8601), "2024-05-01T12:34:56Z");
  EXPECT_EQ(FormatUtc(1714566896, UtcFormat::kReport), "2024-05-01 12:34 UTC");
}

TEST(UtcTimeTest, NowIsNow) {
  const std::time_t before = std::time(nullptr);
  const std::string now = UtcNow(UtcFormat::kIso8601);
  const std::time_t after = std::time(nullptr);
  EXPECT_TRUE(now == FormatUtc(before, UtcFormat::kIso8601) || now == FormatUtc(after, UtcFormat::kIso8601))
      << now;
}

}  // namespace
}  // namespace hvdrun::lab
