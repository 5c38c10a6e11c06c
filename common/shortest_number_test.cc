#include "common/shortest_number.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>

namespace hvdrun {
namespace {

TEST(ShortestNumberText, WritesTheFewestDigitsThatReadBack) {
  EXPECT_EQ(ShortestNumberText(2.0), "2");
  EXPECT_EQ(ShortestNumberText(0.1), "0.1");
  EXPECT_EQ(ShortestNumberText(-1.5), "-1.5");
  EXPECT_EQ(ShortestNumberText(1e20), "1e+20");
  EXPECT_EQ(ShortestNumberText(0.0), "0");
}

TEST(ShortestNumberText, EveryDoubleReadsBackExactly) {
  for (double value : {1.0 / 3.0, 2.0 / 3.0, 123456.789012345, std::numeric_limits<double>::max(),
                       std::numeric_limits<double>::denorm_min(), -0.30000000000000004}) {
    EXPECT_EQ(std::strtod(ShortestNumberText(value).c_str(), nullptr), value) << ShortestNumberText(value);
  }
}

}  // namespace
}  // namespace hvdrun
