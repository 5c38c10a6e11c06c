#include "lab/report/display_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace hvdrun::lab {
namespace {

Spread MeanAndSd(double mean, double sd, int n = 3) {
  Spread spread;
  spread.n = n;
  spread.mean = mean;
  spread.sd = sd;
  return spread;
}

TEST(Figures, ThreeSignificantDigits) {
  EXPECT_EQ(FormatFigure(259.123), "259");
  EXPECT_EQ(FormatFigure(0.0123456), "0.0123");
  EXPECT_EQ(FormatFigure(1.5625), "1.56");
  EXPECT_EQ(FormatFigure(1.6), "1.6");
  EXPECT_EQ(FormatFigure(0), "0");
  EXPECT_EQ(FormatFigure(-0.98765), "-0.988");
}

TEST(Figures, WholeDigitsAreNeverRoundedAway) {
  EXPECT_EQ(FormatFigure(12345.6), "12346");
  EXPECT_EQ(FormatFigure(999.7), "1000");  // not "1e+03"
  EXPECT_EQ(FormatFigure(999.4), "999");
}

TEST(Figures, MeanToThePlaceOfItsSpread) {
  // The report's own cases: more digits than the measurement held.
  EXPECT_EQ(MeanSd(MeanAndSd(0.2131, 0.0001649)), "0.213 ± 0.00016");
  EXPECT_EQ(MeanSd(MeanAndSd(75.1, 0.05814)), "75.1 ± 0.058");
  // A wide spread leaves fewer digits of the mean.
  EXPECT_EQ(MeanSd(MeanAndSd(12.3456, 5.2)), "12.3 ± 5.2");
  EXPECT_EQ(MeanSd(MeanAndSd(0.5, 3.21)), "0.5 ± 3.2");
  EXPECT_EQ(MeanSd(MeanAndSd(1.05, 0.2)), "1.05 ± 0.20");
  EXPECT_EQ(MeanSd(MeanAndSd(0.53, 0.01414)), "0.530 ± 0.014");
  EXPECT_EQ(MeanSd(MeanAndSd(122, 2.828)), "122 ± 2.8");
}

TEST(Figures, SpreadRoundingThatGainsADigit) {
  EXPECT_EQ(MeanSd(MeanAndSd(2.5, 0.0999)), "2.50 ± 0.10");
  EXPECT_EQ(MeanSd(MeanAndSd(5000, 99.96)), "5000 ± 100");
}

TEST(Figures, LargeFiguresStayWhole) { EXPECT_EQ(MeanSd(MeanAndSd(12345.6, 253)), "12346 ± 253"); }

TEST(Figures, OneRunEqualRunsAndNone) {
  EXPECT_EQ(MeanSd(MeanAndSd(0.21314, 0, 1)), "0.213");
  EXPECT_EQ(MeanSd(MeanAndSd(0.85, 0, 2)), "0.85 ± 0");
  EXPECT_EQ(MeanSd(MeanAndSd(0, 0.0123)), "0.000 ± 0.012");
  EXPECT_EQ(MeanSd(Spread{}), "");
}

TEST(Figures, NotANumberIsWrittenAsADashWithoutItsSpread) {
  // A report never prints a non-finite number: a mean that is not one is the dash alone.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(FormatFigure(nan), "—");
  EXPECT_EQ(MeanSd(MeanAndSd(nan, 0.1)), "—");
  EXPECT_EQ(MeanSd(MeanAndSd(0.5, std::numeric_limits<double>::infinity())), "—");
}

TEST(Figures, RangeIsLowestToHighest) {
  Spread spread;
  spread.n = 2;
  spread.min = 0.49876;
  spread.max = 0.7;
  EXPECT_EQ(Range(spread), "0.499–0.7");
  EXPECT_EQ(Range(Spread{}), "");
}

}  // namespace
}  // namespace hvdrun::lab
