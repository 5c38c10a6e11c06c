#include "common/hex_text.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

TEST(HexText, EncodesTwoLowerCaseDigitsPerByte) {
  EXPECT_EQ(HexEncode(std::string("\x00\x7f\xff\x10", 4)), "007fff10");
  EXPECT_EQ(HexEncode(""), "");
}

TEST(HexText, DecodesEitherCaseBackToTheBytes) {
  EXPECT_EQ(HexDecode("007fff10"), std::string("\x00\x7f\xff\x10", 4));
  EXPECT_EQ(HexDecode("ABcd"), std::string("\xab\xcd", 2));
  EXPECT_EQ(HexDecode(""), std::string());
}

TEST(HexText, DecodesNothingFromAnOddLengthOrANonDigit) {
  EXPECT_EQ(HexDecode("abc"), std::nullopt);
  EXPECT_EQ(HexDecode("0g"), std::nullopt);
  EXPECT_EQ(HexDecode("0 "), std::nullopt);
}

}  // namespace
}  // namespace hvdrun
