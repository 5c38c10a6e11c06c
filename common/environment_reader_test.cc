#include "common/environment_reader.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace hvdrun {
namespace {

constexpr const char* kHint = "start it under hvdrun";

class EnvironmentReaderTest : public ::testing::Test {
 protected:
  EnvironmentReader Reader() const { return EnvironmentReader(LookupIn(values_), kHint); }

  std::map<std::string, std::string> values_ = {{"PORT", "29500"}, {"EMPTY", ""}, {"WORD", "two"}};
};

TEST_F(EnvironmentReaderTest, FindsSetVariablesAndNullForUnset) {
  EXPECT_STREQ(Reader().Find("PORT"), "29500");
  EXPECT_STREQ(Reader().Find("EMPTY"), "");
  EXPECT_EQ(Reader().Find("UNSET"), nullptr);
}

TEST_F(EnvironmentReaderTest, RequiredNamesAnUnsetOrEmptyVariableWithTheHint) {
  EXPECT_EQ(Reader().Required("WORD").value(), "two");
  EXPECT_EQ(Reader().Required("UNSET").status().message(), "UNSET is not set: start it under hvdrun");
  EXPECT_EQ(Reader().Required("EMPTY").status().message(), "EMPTY is empty: start it under hvdrun");
}

TEST_F(EnvironmentReaderTest, WholeNumbersAreCheckedAgainstTheirRange) {
  EXPECT_EQ(Reader().RequiredWholeNumber("PORT", 1, 65535).value(), 29500);
  EXPECT_EQ(Reader().RequiredWholeNumber("PORT", 1, 1024).status().message(),
            "PORT='29500' is not a whole number from 1 to 1024");
  EXPECT_EQ(Reader().RequiredWholeNumber("WORD", 0, 9).status().message(),
            "WORD='two' is not a whole number from 0 to 9");
  EXPECT_EQ(Reader().RequiredWholeNumber("UNSET", 0, 9).status().message(),
            "UNSET is not set: start it under hvdrun");
}

}  // namespace
}  // namespace hvdrun
