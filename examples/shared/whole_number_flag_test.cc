#include "examples/shared/whole_number_flag.h"

#include <gtest/gtest.h>

#include <string>

namespace hvdrun::examples {
namespace {

std::string Error(std::string_view text, int64_t min, int64_t max) {
  StatusOr<int64_t> value = ParseWholeNumberFlag("--steps", text, min, max);
  return value.ok() ? "OK " + std::to_string(value.value()) : value.status().message();
}

TEST(WholeNumberFlagTest, ReadsDecimalWholeNumbersInRange) {
  EXPECT_EQ(Error("1", 1, 10), "OK 1");
  EXPECT_EQ(Error("010", 1, 10), "OK 10");
  EXPECT_EQ(Error("-3", -5, 5), "OK -3");
  EXPECT_EQ(Error("9223372036854775807", 0, INT64_MAX), "OK 9223372036854775807");
}

TEST(WholeNumberFlagTest, ErrorsNameTheFlagAndSayWhatIsWrong) {
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "1e3", "0x10", "1.5", "lots", "99999999999999999999x"}) {
    EXPECT_EQ(Error(bad, 1, 10), "--steps: '" + std::string(bad) + "' is not a whole number") << bad;
  }
  EXPECT_EQ(Error("0", 1, 10), "--steps: 0 is out of range (1 to 10)");
  EXPECT_EQ(Error("-4", 1, 10), "--steps: -4 is out of range (1 to 10)");
  EXPECT_EQ(Error("11", 1, 10), "--steps: 11 is out of range (1 to 10)");
  EXPECT_EQ(Error("99999999999999999999", 1, 10), "--steps: 99999999999999999999 is out of range (1 to 10)");
}

}  // namespace
}  // namespace hvdrun::examples
