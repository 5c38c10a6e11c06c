#include "lab/number_text.h"

#include <gtest/gtest.h>

#include <string>

namespace hvdrun::lab {
namespace {

TEST(NumberText, WritesTheValueWithTheConversionAndItsText) {
  EXPECT_EQ(NumberText("%.3g", 0.10549), "0.105");
  EXPECT_EQ(NumberText("%.1f s", 12.34), "12.3 s");
  EXPECT_EQ(NumberText("%.0f%%", 0.256 * 100), "26%");
  EXPECT_EQ(NumberText("%g", 2.5), "2.5");
}

TEST(NumberText, CutsAt63Characters) { EXPECT_EQ(NumberText("%.70f", 1).size(), 63u); }

}  // namespace
}  // namespace hvdrun::lab
