#include "common/whole_number.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace hvdrun {
namespace {

constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();

TEST(WholeNumberTest, ReadsDecimalWholeNumbersInRange) {
  EXPECT_EQ(ParseWholeNumber("0", 0, 10).value, 0);
  EXPECT_EQ(ParseWholeNumber("10", 0, 10).value, 10);
  EXPECT_EQ(ParseWholeNumber("-3", -5, 5).value, -3);
  EXPECT_EQ(ParseWholeNumber("007", 0, 10).value, 7);  // decimal, not octal
  EXPECT_EQ(ParseWholeNumber("9223372036854775807", 0, kMax64).value, kMax64);
  EXPECT_EQ(ParseWholeNumber("-9223372036854775808", kMin64, 0).value, kMin64);
  EXPECT_TRUE(ParseWholeNumber("65535", 1, 65535).ok());
}

TEST(WholeNumberTest, AnythingButSignAndDigitsIsNotAWholeNumber) {
  for (const char* text : {"", "-", "+5", " 5", "5 ", "1e3", "0x10", "1.0", "--5", "5-", "two", "12abc",
                           "99999999999999999999x"}) {
    const ParsedWholeNumber parsed = ParseWholeNumber(text, kMin64, kMax64);
    EXPECT_EQ(parsed.problem, WholeNumberProblem::kNotWholeNumber) << "'" << text << "'";
    EXPECT_FALSE(parsed.ok()) << text;
    EXPECT_FALSE(parsed.out_of_range()) << text;
  }
}

TEST(WholeNumberTest, SaysOnWhichSideOfTheRangeANumberFalls) {
  EXPECT_EQ(ParseWholeNumber("0", 1, 10).problem, WholeNumberProblem::kTooSmall);
  EXPECT_EQ(ParseWholeNumber("-1", 0, 10).problem, WholeNumberProblem::kTooSmall);
  EXPECT_EQ(ParseWholeNumber("11", 1, 10).problem, WholeNumberProblem::kTooLarge);
  EXPECT_EQ(ParseWholeNumber("70000", 1, 65535).problem, WholeNumberProblem::kTooLarge);
  // Beyond 64 bits is still a whole number, only out of every range.
  EXPECT_EQ(ParseWholeNumber("99999999999999999999", 0, kMax64).problem, WholeNumberProblem::kTooLarge);
  EXPECT_EQ(ParseWholeNumber("-99999999999999999999", kMin64, 0).problem, WholeNumberProblem::kTooSmall);
  EXPECT_TRUE(ParseWholeNumber("11", 1, 10).out_of_range());
  EXPECT_EQ(ParseWholeNumber("11", 1, 10).value, 0);
}

}  // namespace
}  // namespace hvdrun
