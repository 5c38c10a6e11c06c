#include "common/protocol/job_secret.h"

#include <gtest/gtest.h>

#include "common/hex_text.h"

namespace hvdrun {
namespace {

TEST(JobSecret, IsSixtyFourLowerCaseHexDigits) {
  std::string secret = NewJobSecret();
  EXPECT_EQ(secret.size(), 64u);
  EXPECT_TRUE(IsValidJobSecret(secret)) << secret;
  EXPECT_EQ(secret.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(JobSecret, TwoSecretsDiffer) { EXPECT_NE(NewJobSecret(), NewJobSecret()); }

TEST(JobSecret, RandomBytesHasTheLengthAsked) {
  EXPECT_EQ(RandomBytes(0).size(), 0u);
  EXPECT_EQ(RandomBytes(32).size(), 32u);
  EXPECT_NE(RandomBytes(32), RandomBytes(32));
}

TEST(JobSecret, ValidityChecksLengthAndDigits) {
  EXPECT_FALSE(IsValidJobSecret(""));
  EXPECT_FALSE(IsValidJobSecret(std::string(63, 'a')));
  EXPECT_FALSE(IsValidJobSecret(std::string(65, 'a')));
  EXPECT_FALSE(IsValidJobSecret(std::string(64, 'A')));
  EXPECT_FALSE(IsValidJobSecret(std::string(63, 'a') + "g"));
  EXPECT_TRUE(IsValidJobSecret(std::string(64, '0')));
}

// RFC 4231, test case 1: key = 20 bytes of 0x0b, data = "Hi There".
TEST(JobSecret, HmacMatchesRfc4231TestCase1) {
  EXPECT_EQ(HmacSha256Hex(HexEncode(std::string(20, '\x0b')), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

// RFC 4231, test case 2: key = "Jefe", data = "what do ya want for nothing?".
TEST(JobSecret, HmacMatchesRfc4231TestCase2) {
  EXPECT_EQ(HmacSha256Hex(HexEncode("Jefe"), "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(JobSecret, HmacOfNonHexKeyIsEmpty) {
  EXPECT_EQ(HmacSha256Hex("xyz0", "message"), "");
  EXPECT_EQ(HmacSha256Hex("abc", "message"), "");
}

TEST(JobSecret, HmacDependsOnKeyAndMessage) {
  std::string secret = NewJobSecret();
  EXPECT_EQ(HmacSha256Hex(secret, "a").size(), 64u);
  EXPECT_EQ(HmacSha256Hex(secret, "a"), HmacSha256Hex(secret, "a"));
  EXPECT_NE(HmacSha256Hex(secret, "a"), HmacSha256Hex(secret, "b"));
  EXPECT_NE(HmacSha256Hex(secret, "a"), HmacSha256Hex(NewJobSecret(), "a"));
}

TEST(JobSecret, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
}

}  // namespace
}  // namespace hvdrun
